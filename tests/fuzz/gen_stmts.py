"""Statement generation: the registry of statement kinds, `block`, and the
straight-line statements (assignments, augmented and indexed updates,
tuples, lists, dicts).  Updates through views are in gen_views, control
flow in gen_control, nested functions in gen_funcs; they register here
with `@statement`.

Each statement function writes lines into `g.w` and returns False when it
does not apply in the current scope.  Kinds are tracked as in gen_core: a
block (depth > 0) may only rebind an enclosing variable with its own kind,
so every variable keeps one kind on every path.
"""
from __future__ import annotations

from dataclasses import dataclass

from .gen_core import (FLOAT_KINDS, PAIR_FIELDS, RANK, DictInfo, Fields, Gen, ListInfo, Scope, Var,
                       is_alias, strip)
from .gen_exprs import call_args, expr, index, positive

MAX_DEPTH = 2


@dataclass(frozen=True)
class StatementKind:
    feature: str
    weight: float
    fn: object
    compound: bool


STATEMENTS: list[StatementKind] = []


def statement(feature: str, weight: float, compound: bool = False):
    """Register a statement generator for `feature`."""
    def register(fn):
        STATEMENTS.append(StatementKind(feature, weight, fn, compound))
        return fn
    return register


def stmt(g: Gen, sc: Scope) -> None:
    """Write one random statement (possibly compound)."""
    kinds = [k for k in STATEMENTS if k.feature in g.features
             and (not k.compound or sc.depth < MAX_DEPTH)]
    weights = [k.weight for k in kinds]
    for _ in range(8):
        if g.weighted(kinds, weights).fn(g, sc) is not False:
            break
    else:
        assign(g, sc)
    g.budget -= 1


def block(g: Gen, sc: Scope, size: int) -> None:
    """Write between 1 and `size` statements, fewer when the budget is spent."""
    for i in range(max(1, size)):
        if i and g.budget <= 0:
            break
        stmt(g, sc)


def new_kind(g: Gen) -> str:
    return g.weighted(list(FLOAT_KINDS), [4, 3, 1.5])


def bind(g: Gen, sc: Scope, var: Var, kind: str, text: str) -> None:
    """Record that `var` was rebound to `text` of `kind` (same kind in a block)."""
    alias = is_alias(text)
    if sc.depth == 0:
        sc.add(Var(var.name, kind, alias=alias, pinned=var.pinned))
    else:
        var.alias = var.alias or alias


def mutable(g: Gen, var: Var) -> bool:
    """May an in-place update write through `var`?"""
    return var.kind in ("V", "M") and not var.fixed and (not var.alias or g.on("views"))


@statement("arith", 6)
def assign(g: Gen, sc: Scope):
    """`new = <expr>`."""
    kind = new_kind(g)
    name = g.fresh(sc)
    text = expr(g, sc, kind)
    g.w.line(f"{name} = {strip(text)}")
    sc.add(Var(name, kind, alias=is_alias(text)))


@statement("arith", 3)
def reassign(g: Gen, sc: Scope):
    """`old = <expr>`: the kind may change at the top level of a function."""
    found = sc.targets(*FLOAT_KINDS)
    if not found:
        return False
    var = g.pick(found)
    kind = var.kind
    if sc.depth == 0 and not var.pinned and g.chance(0.3):
        kind = new_kind(g)
    text = expr(g, sc, kind)
    g.w.line(f"{var.name} = {strip(text)}")
    bind(g, sc, var, kind, text)


@statement("arith", 3)
def augassign(g: Gen, sc: Scope):
    """`t op= <expr>`: rebinding for scalars, in place for arrays."""
    found = [v for v in sc.targets(*FLOAT_KINDS)
             if v.kind == "S" or (g.on("inplace") and mutable(g, v))]
    if not found:
        return False
    var = g.pick(found)
    kind = g.pick([k for k in FLOAT_KINDS if RANK[k] <= RANK[var.kind]])
    op = g.pick(["+=", "-=", "*=", "/="])
    text = positive(g, sc, kind, 2) if op == "/=" else expr(g, sc, kind)
    g.w.line(f"{var.name} {op} {strip(text)}")


@statement("names", .4)
def delete(g: Gen, sc: Scope):
    """`del t` of a variable nothing reads again, at the top level of the
    function (in a loop, the body would read it again on the next round);
    never one a closure reads."""
    if sc.depth or sc.in_loop:
        return False
    found = [v for v in sc.of(*FLOAT_KINDS) if v.name.isidentifier()
             and not v.fixed and not v.pinned]
    if len(found) < 3:
        return False                # (something is left to return)
    var = g.pick(found)
    g.w.line(f"del {var.name}")
    del sc.vars[var.name]


@statement("stop_gradient", 1)
def stop(g: Gen, sc: Scope):
    """`t = ad.stop_gradient(t) * c`: an inactive value overwriting an active one."""
    found = sc.targets(*FLOAT_KINDS)
    if not found:
        return False
    var = g.pick(found)
    g.w.line(f"{var.name} = ad.stop_gradient({var.name}) * {g.const(0.5, 1.5)}")
    bind(g, sc, var, var.kind, "0.0")


@statement("inplace", 3)
def index_update(g: Gen, sc: Scope):
    """`t[i] = e`, `t[i, j] += e`, `t[:, j] *= e`, `t[1:] -= e`, ..."""
    found = [v for v in sc.targets("V", "M") if mutable(g, v) and v.name.isidentifier()]
    if not found:
        return False
    var = g.pick(found)
    i, j = index(g, sc), index(g, sc)
    forms = {"V": [(f"[{i}]", "S"), ("[1:]", "S"), ("[::2]", "S"), (f"[{var.name} > 0.0]", "S")],
             "M": [(f"[{i}, {j}]", "S"), (f"[{i}]", "V"), (f"[:, {j}]", "V"), (f"[{i}, :]", "S")]}
    sub, kind = g.pick(forms[var.kind])
    op = g.pick(["=", "+=", "-=", "*="])
    g.w.line(f"{var.name}{sub} {op} {strip(expr(g, sc, kind))}")


@statement("tuples", 2)
def tuples(g: Gen, sc: Scope):
    """Tuple displays, unpacking, swaps, and helpers returning pairs."""
    forms = [_pack_unpack, _tuple_var]
    if len(sc.names_of(*FLOAT_KINDS)) >= 2:
        forms.append(_swap)
    if sc.of("T"):
        forms.append(_unpack_var)
    if any(isinstance(c.info.result, tuple) for c in g.callables):
        forms.append(_unpack_call)
    return g.pick(forms)(g, sc)


def _targets(g: Gen, sc: Scope, kinds) -> list:
    """Names to assign `kinds` to: new ones, or old ones (same kind in a block)."""
    names = []
    for kind in kinds:
        old = [v for v in sc.targets(*FLOAT_KINDS) if v.name.isidentifier()
               and v.name not in names and (v.kind == kind or (sc.depth == 0 and not v.pinned))]
        names.append(g.pick(old).name if old and g.chance(0.4) else g.fresh(sc))
    return names


def _assign_many(g: Gen, sc: Scope, names, kinds, texts) -> None:
    for name, kind, text in zip(names, kinds, texts):
        old = sc.vars.get(name)
        if old is None:
            sc.add(Var(name, kind, alias=is_alias(text)))
        else:
            bind(g, sc, old, kind, text)


def _pack_unpack(g: Gen, sc: Scope):
    kinds = [new_kind(g), new_kind(g)]
    texts = [expr(g, sc, k) for k in kinds]
    names = _targets(g, sc, kinds)
    g.w.line(f"{names[0]}, {names[1]} = {strip(texts[0])}, {strip(texts[1])}")
    _assign_many(g, sc, names, kinds, texts)


def _swap(g: Gen, sc: Scope):
    found = [v for v in sc.targets(*FLOAT_KINDS) if v.name.isidentifier()]
    if not found:
        return False
    a = g.pick(found)
    free = sc.depth == 0 and not a.pinned
    partners = [v for v in found if v is not a
                and (v.kind == a.kind or (free and not v.pinned))]
    if not partners:
        return False
    b = g.pick(partners)
    g.w.line(f"{a.name}, {b.name} = {b.name}, {a.name}")
    _assign_many(g, sc, [a.name, b.name], [b.kind, a.kind], [b.name, a.name])


def _tuple_var(g: Gen, sc: Scope):
    """A tuple display, or a named tuple `Pair(...)` (by position or keyword)."""
    kinds = tuple(new_kind(g) for _ in range(g.rng.randint(2, 3)))
    name = g.fresh(sc)
    texts = [strip(expr(g, sc, k)) for k in kinds]
    if len(kinds) == 2 and g.chance(0.4):
        args = [f"{f}={t}" for f, t in zip(PAIR_FIELDS, texts)][::-1] if g.chance(0.5) \
            else texts
        g.w.line(f"{name} = Pair({', '.join(args)})")
        sc.add(Var(name, "T", Fields(kinds)))
        return
    g.w.line(f"{name} = ({', '.join(texts)})")
    sc.add(Var(name, "T", kinds))


def _unpack_var(g: Gen, sc: Scope):
    var = g.pick(sc.of("T"))
    names = _targets(g, sc, var.info)
    g.w.line(f"{', '.join(names)} = {var.name}")
    _assign_many(g, sc, names, var.info, ["t"] * len(names))


def _unpack_call(g: Gen, sc: Scope):
    fn = g.pick([c for c in g.callables if isinstance(c.info.result, tuple)])
    kinds = fn.info.result
    call = f"{fn.name}({call_args(g, sc, fn.info, 1)})"
    names = _targets(g, sc, kinds)
    g.w.line(f"{', '.join(names)} = {call}")
    _assign_many(g, sc, names, kinds, ["(0.0)"] * len(names))


@statement("lists", 2)
def lists(g: Gen, sc: Scope):
    """List displays, append, pop, element updates, items moved between
    slots, `+` and `*`."""
    found = [v for v in sc.of("L") if not v.fixed]
    forms = [_list_display] + ([_append, _set_item, _pop, _joined, _move_items] if found else [])
    g.pick(forms)(g, sc, g.pick(found) if found else None)


def _joined(g: Gen, sc: Scope, var: Var):
    """`a = xs + [e]`, `a = xs * 2`, `xs += [e]` (joins in place), or a
    shallow copy holding the same items (`xs.copy()`, `list(reversed(xs))`,
    `xs[::-1]`, `list(xs)`)."""
    elem, length, exact = var.info.elem, var.info.length, var.info.exact
    form = g.rng.randrange(4)
    if form == 3:
        name = g.fresh(sc)
        copies = [f"{var.name}.copy()", f"{var.name}[::-1]"]
        copies += [f"list({var.name})"] * sc.can("list")
        copies += [f"list(reversed({var.name}))"] * (sc.can("list") and sc.can("reversed"))
        g.w.line(f"{name} = {g.pick(copies)}")
        sc.add(Var(name, "L", ListInfo(elem, length, exact)))
        return
    if form == 2:
        g.w.line(f"{var.name} += [{strip(expr(g, sc, elem))}]")
        var.info = ListInfo(elem, length + 1, exact and sc.depth == 0)
        return
    name = g.fresh(sc)
    if form == 0:
        g.w.line(f"{name} = {var.name} + [{strip(expr(g, sc, elem))}]")
        sc.add(Var(name, "L", ListInfo(elem, length + 1, exact)))
    else:
        g.w.line(f"{name} = {var.name} * 2")
        sc.add(Var(name, "L", ListInfo(elem, 2 * length, exact)))


def _list_display(g: Gen, sc: Scope, _):
    """`xs = [e, ...]`; an item may be a copy written as arithmetic by one
    (`v * 1.0`: a new array, which an update through the list must not
    write into `v`)."""
    kind, length = new_kind(g), g.rng.randint(2, g.n)
    name = g.fresh(sc)
    items = [strip(expr(g, sc, kind, 2)) for _ in range(length)]
    same = [v for v in sc.of(kind) if v.name.isidentifier()] if kind in ("V", "M") else []
    if same and g.chance(0.3):
        items[0] = g.pick(["{} * 1.0", "1.0 * {}", "{} / 1.0", "{} ** 1"]).format(g.pick(same).name)
    g.w.line(f"{name} = [{', '.join(items)}]")
    sc.add(Var(name, "L", ListInfo(kind, length)))


def _append(g: Gen, sc: Scope, var: Var):
    g.w.line(f"{var.name}.append({strip(expr(g, sc, var.info.elem))})")
    if sc.depth == 0:
        var.info = ListInfo(var.info.elem, var.info.length + 1, var.info.exact)
    else:
        var.info = ListInfo(var.info.elem, var.info.length, False)


def _set_item(g: Gen, sc: Scope, var: Var):
    op = "=" if var.info.elem != "S" and not g.on("views") else g.pick(["=", "+=", "*="])
    k = g.rng.randrange(-var.info.length, var.info.length)
    g.w.line(f"{var.name}[{k}] {op} {strip(expr(g, sc, var.info.elem))}")


def _move_items(g: Gen, sc: Scope, var: Var):
    """`xs[i], xs[j] = xs[j], xs[i]` or `xs[i] = xs[j]`: a slot then holds
    another slot's object, which a later update of either changes."""
    if var.info.length < 2:
        return _set_item(g, sc, var)
    i, j = g.rng.sample(range(-var.info.length, var.info.length), 2)
    if g.chance(0.5):
        g.w.line(f"{var.name}[{i}], {var.name}[{j}] = {var.name}[{j}], {var.name}[{i}]")
    else:
        g.w.line(f"{var.name}[{i}] = {var.name}[{j}]")


def _pop(g: Gen, sc: Scope, var: Var):
    if var.info.length < 2 or sc.in_loop:          # a loop could pop it empty
        return _append(g, sc, var)
    name = g.fresh(sc)
    g.w.line(f"{name} = {var.name}.pop()")
    var.info = ListInfo(var.info.elem, var.info.length - 1, var.info.exact and sc.depth == 0)
    sc.add(Var(name, var.info.elem, alias=True))


DICT_KEYS = ("w", "b", "scale", "bias", "gain", "type", "lr")


@statement("dicts", 2)
def dicts(g: Gen, sc: Scope):
    """Dict displays, `dict(zip(keys, values))`, and item updates (loops over
    dicts are in gen_control)."""
    found = [v for v in sc.of("D") if not v.fixed]
    if found and g.chance(0.6):
        return _dict_item(g, sc, g.pick(found))
    kind, keys = new_kind(g), g.rng.sample(DICT_KEYS, g.rng.randint(2, 3))
    name = g.fresh(sc)
    values = [strip(expr(g, sc, kind, 2)) for _ in keys]
    if g.chance(0.3) and sc.can("dict") and sc.can("zip"):
        g.w.line(f"{name} = dict(zip({keys!r}, [{', '.join(values)}]))")
    else:
        items = ", ".join(f"{k!r}: {v}" for k, v in zip(keys, values))
        g.w.line(f"{name} = {{{items}}}")
    sc.add(Var(name, "D", DictInfo(kind, keys)))


def _dict_item(g: Gen, sc: Scope, var: Var):
    """`d[key] = e` (a new key only at the top level) or `d[key] op= e`."""
    elem, keys = var.info.elem, var.info.keys
    new = [k for k in DICT_KEYS if k not in keys]
    if sc.depth == 0 and new and g.chance(0.3):
        key = g.pick(new)
        g.w.line(f"{var.name}[{key!r}] = {strip(expr(g, sc, elem))}")
        var.info = DictInfo(elem, keys + [key])
        return
    op = g.pick(["=", "+=", "*="]) if elem == "S" or g.on("views") else "="
    g.w.line(f"{var.name}[{g.pick(keys)!r}] {op} {strip(expr(g, sc, elem))}")
