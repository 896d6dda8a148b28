"""Statement generation: the registry of statement kinds, `block`, and the
straight-line statements (assignments, augmented and indexed updates,
views, tuples, lists, dicts).  Control flow is in gen_control, nested
functions in gen_funcs; both register here with `@statement`.

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


@statement("views", 2)
def view_update(g: Gen, sc: Scope):
    """Updates through views: a slice, a row loop, a column, `.T`, a row name."""
    vecs = [v for v in sc.targets("V") if mutable(g, v) and v.name.isidentifier()]
    mats = [v for v in sc.targets("M") if mutable(g, v) and v.name.isidentifier()]
    forms = [(f, vecs) for f in [_slice_view, _library_view, _library_write, _view_list,
                                 _view_chain, _loop_store, _self_write] if vecs]
    forms += [(f, mats) for f in [_row_loop, _column, _transposed, _row_name,
                                  _self_write] if mats]
    if not forms:
        return False
    form, found = g.pick(forms)
    form(g, sc, g.pick(found))


def _slice_view(g: Gen, sc: Scope, var: Var):
    w = g.fresh(sc)
    g.w.line(f"{w} = {var.name}{g.pick(['[1:]', '[:2]', '[::-1]'])}")
    g.w.line(g.pick([f"{w} += {strip(expr(g, sc, 'S'))}", f"{w} *= {strip(positive(g, sc, 'S', 1))}",
                     f"{w}[0] = {strip(expr(g, sc, 'S'))}"]))
    sc.add(Var(w, "X"))


def _view_list(g: Gen, sc: Scope, var: Var):
    """A list or dict of views of one vector - overlapping (sliding windows)
    or disjoint - changed in a loop at a slot known only at run time: an
    item written in place (through the argument's memory), or a slot
    replaced (which writes no array)."""
    if not sc.can("range"):
        return _slice_view(g, sc, var)
    xs, k, v = g.fresh(sc), g.fresh(sc), var.name
    views = g.pick([(f"{v}[0:2]", f"{v}[1:3]"), (f"{v}[:1]", f"{v}[1:]"),
                    (f"{v}[::2]", f"{v}[1:]"), (f"{v}[:2]", f"{v}[:2]")])
    keyed = g.chance(0.3)
    g.w.line(f"{xs} = {{'a': {views[0]}, 'b': {views[1]}}}" if keyed else
             f"{xs} = [{views[0]}, {views[1]}]")
    c, e = g.const(0.5, 1.5), strip(expr(g, sc, "S"))
    with g.w.block(f"for {k} in {xs}:" if keyed else f"for {k} in range(2):"):
        g.w.line(g.pick([f"{xs}[{k}][0] = {xs}[{k}][0] * {c} + {e}",
                         f"{xs}[{k}] = {xs}[{k}] - {c} * {xs}[{k}] ** 2",
                         f"{xs}[{k}] *= {c}"]))


def _view_chain(g: Gen, sc: Scope, var: Var):
    """Items of a list that view one vector along chains of different
    lengths (`m[1:]` of `m = v[:2]`, or of `ms[0]` of `ms = [v[:2]]`, and
    `v[1:]`), updated through a name at a slot known only at run time,
    while a loop over the vector reads it again each pass; `m` is read
    after (it must see both writes)."""
    if not sc.can("range"):
        return _slice_view(g, sc, var)
    m, xs, k, t, e, acc, out = (g.fresh(sc) for _ in range(7))
    v, view = var.name, g.pick(['[:2]', '[::-1]', '[1:]', '[:]'])
    if g.chance(0.3):               # the view held by a list, read back by its slot
        g.w.line(f"{m} = [{v}{view}]")
        m = f"{m}[0]"
    else:
        g.w.line(f"{m} = {v}{view}")
    g.w.line(f"{xs} = [{m}{g.pick(['[1:]', '[:1]', '[::2]'])}, "
             f"{v}{g.pick(['[1:]', '[:1]', '[::2]', '[-1:]'])}]")
    g.w.line(f"{acc} = 0.0")
    with g.w.block(f"for {e} in {v}:"):
        with g.w.block(f"for {k} in range(2):"):
            g.w.line(f"{t} = {xs}[{k}]")
            g.w.line(f"{t} *= {g.const(0.5, 1.5)}")
        g.w.line(f"{acc} = {acc} + {e} * {g.const(0.5, 1.5)}")
    g.w.line(f"{out} = {acc} + np.sum({m} * {g.const(0.5, 1.5)})")
    sc.add(Var(out, "S"))


def _loop_store(g: Gen, sc: Scope, var: Var):
    """A loop that reads an item of a list or dict, updates it in place,
    then stores another object there (the vector, a view of it, another
    slot's item, or swaps two slots), maybe through a second name for the
    container: from the second pass on the item read is what the pass
    before stored."""
    if not sc.can("range"):
        return _slice_view(g, sc, var)
    b, hs, k, t, out = (g.fresh(sc) for _ in range(5))
    v, keyed = var.name, g.chance(0.3)
    g.w.line(f"{b} = {v} * {g.const(0.5, 1.5)}")
    g.w.line(f"{hs} = {{'u': {b}, 'w': {v}}}" if keyed else f"{hs} = [{b}, {v}]")
    slot, other = ("'u'", "'w'") if keyed else g.pick([("0", "1"), ("-1", "0")])
    q = hs
    if g.chance(0.3):               # stored through a second name for the container
        q = g.fresh(sc)
        g.w.line(f"{q} = {hs}")
    store = g.pick([f"{q}[{slot}] = {v}", f"{q}[{slot}] = {hs}[{other}]",
                    f"{q}[{slot}] = {v}{g.pick(['[:]', '[::-1]', '[:]'])}",
                    f"{q}[{slot}], {q}[{other}] = {hs}[{other}], {hs}[{slot}]"]
                   + ([] if keyed else [f"{q}.append({v})"]))
    with g.w.block(f"for {k} in range({g.pick([2, 3])}):"):
        g.w.line(f"{t} = {hs}[{slot}]")
        g.w.line(g.pick([f"{t} *= {g.const(0.5, 1.5)}", f"{t}[0] = {t}[0] * {g.const(0.5, 1.5)}",
                         f"{t} += {strip(expr(g, sc, 'S'))}"]))
        if g.chance(0.3):
            with g.w.block(f"if {k} == 1:"):
                g.w.line(store)
        else:
            g.w.line(store)
    g.w.line(f"{out} = np.sum({b} * {g.const(0.5, 1.5)}) + np.sum({v} * {g.const(0.5, 1.5)})")
    sc.add(Var(out, "S"))


def _library_view(g: Gen, sc: Scope, var: Var):
    """An update through what a NumPy function or method returned: the
    argument itself, a view of it, or a new array (s2s_ad must follow it,
    refuse it, or see that it is new)."""
    w = g.fresh(sc)
    call = g.pick(["np.asarray({})", "np.ravel({})", "{}.reshape(-1)", "np.ascontiguousarray({})",
                   "{}.astype(float, copy=False)", "np.split({}, 1)[0]", "np.atleast_1d({})",
                   "np.flip({})", "{}.conj()", "np.squeeze({})", "np.copy({})", "{}.copy()"])
    g.w.line(f"{w} = {call.format(var.name)}")
    g.w.line(g.pick([f"{w} += {strip(expr(g, sc, 'S'))}", f"{w} *= {strip(positive(g, sc, 'S', 1))}",
                     f"{w}[0] = {strip(expr(g, sc, 'S'))}"]))
    sc.add(Var(w, "X"))


def _library_write(g: Gen, sc: Scope, var: Var):
    """A NumPy call that writes into the array it is given, or a view of it."""
    v, e = var.name, strip(expr(g, sc, "S"))
    g.w.line(g.pick([f"np.copyto({v}[1:], {e})", f"np.copyto({v}, {e}, where={v} > 0.0)",
                     f"np.multiply({v}[1:], {e}, out={v}[1:])", f"np.add({v}, {e}, out={v})",
                     f"np.put_along_axis({v}, np.array([0, 0]), {e}, 0)",
                     f"np.multiply({v}[1:], {e}, {v}[1:])", f"np.tanh({v}, {v})",   # out by
                     f"np.cumsum({v} * {e}, 0, None, {v})",                         # position
                     f"np.floor({v} * {e}, out={v})", f"np.sign({v}[1:], {v}[1:])"]))  # no gradient


def _self_write(g: Gen, sc: Scope, var: Var):
    """An array written from an overlapping view of itself: a shift, a
    reversal, rows, columns or the transpose, which NumPy reads whole
    first, or a column into a row (`M[i] = M[:, j]`), whose order it does
    not promise (refused where the two overlap)."""
    v = var.name
    if var.kind == "V":
        g.w.line(g.pick([f"{v}[1:] = {v}[:-1]", f"{v}[:-1] = {v}[1:]", f"{v}[:] = {v}[::-1]",
                         f"{v}[::2] = {v}[::-2]", f"np.copyto({v}[1:], {v}[:-1])"]))
    else:
        g.w.line(g.pick([f"{v}[1:] = {v}[:-1]", f"{v}[:, :-1] = {v}[:, 1:]", f"{v}[...] = {v}.T",
                         f"{v}[:] = {v}[{g.index()}]", f"{v}[{g.index()}] = {v}[:, {g.index()}]"]))


def _row_loop(g: Gen, sc: Scope, var: Var):
    row = g.fresh(sc)
    update = g.pick([f"{row} /= np.sum(np.exp({row}))", f"{row} -= {row}.mean()",
                     f"{row} /= (1.0 + np.sum({row} ** 2))", f"{row} *= {g.const(0.5, 1.5)}"])
    with g.w.block(f"for {row} in {var.name}:"):
        g.w.line(update)
    sc.add(Var(row, "X"))


def _column(g: Gen, sc: Scope, var: Var):
    col = g.fresh(sc)
    g.w.line(f"{col} = {var.name}[:, {index(g, sc)}]")
    g.w.line(g.pick([f"{col} -= {col}.mean()", f"{col} *= {strip(positive(g, sc, 'S', 1))}"]))
    sc.add(Var(col, "V", alias=True))


def _transposed(g: Gen, sc: Scope, var: Var):
    g.w.line(f"{var.name}.T[{g.index()}] *= {g.const(0.5, 3.0)}")


def _row_name(g: Gen, sc: Scope, var: Var):
    row = g.fresh(sc)
    g.w.line(f"{row} = {var.name}[{index(g, sc)}]")
    g.w.line(f"{row} += {strip(expr(g, sc, g.pick(['S', 'V'])))}")
    sc.add(Var(row, "V", alias=True))


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
    kind, length = new_kind(g), g.rng.randint(2, g.n)
    name = g.fresh(sc)
    g.w.line(f"{name} = [{', '.join(strip(expr(g, sc, kind, 2)) for _ in range(length))}]")
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
