"""Control-flow statements: if/elif/else (also on a string parameter), a
walrus in an if test, input checks that raise, for loops over every
iterable kind, bounded while loops with data-dependent trip counts, and
break / continue / early return.

Loops run at least once (so loop variables are bound afterwards), but for
one `range` form that may run no times, and while loops carry a counter that is incremented first in the body, so
a `continue` cannot make them run forever.
"""
from __future__ import annotations

import dataclasses

from .gen_core import FLOAT_KINDS, Gen, Scope, Var
from .gen_exprs import cond, expr, ref
from .gen_stmts import block, statement, strip


@statement("if", 3, compound=True)
def if_stmt(g: Gen, sc: Scope):
    """`if` with optional `elif`s and `else`, on data-dependent tests."""
    with g.w.block(f"if {_test(g, sc)}:"):
        block(g, sc.child(), g.rng.randint(1, 3))
    while g.chance(0.3):
        with g.w.block(f"elif {cond(g, sc)}:"):
            block(g, sc.child(), g.rng.randint(1, 2))
    if g.chance(0.5):
        with g.w.block("else:"):
            block(g, sc.child(), g.rng.randint(1, 2))


def _test(g: Gen, sc: Scope) -> str:
    strings = sc.of("STR")
    if strings and g.chance(0.5):
        var = g.pick(strings)
        return f"{var.name} == {g.pick(var.info)!r}"
    return cond(g, sc)


@statement("if", 0.5)
def check_stmt(g: Gen, sc: Scope):
    """An input check that raises where it fails (data of the generated
    sizes and values passes it, or the primal raises and is skipped)."""
    found = sc.of("V") + sc.of("M") + sc.of("S")
    if not found:
        return False
    var = g.pick(found)
    test, error = g.pick([(f"not np.all(np.isfinite({var.name}))", "FloatingPointError"),
                          (f"np.any(np.abs({var.name}) > 1e12)", "OverflowError"),
                          (f"np.ndim({var.name}) > 2", "ValueError")])
    with g.w.block(f"if {test}:"):
        g.w.line(f"raise {error}(f'bad {var.name}: {{{var.name}!r}}')")


@statement("with", 1, compound=True)
def with_stmt(g: Gen, sc: Scope):
    """`with np.errstate(...):` around a block, which a `return`, `break`
    or `continue` may leave (the manager exits on the way out)."""
    manager = g.pick(['np.errstate(divide="ignore", invalid="ignore")',
                      'np.errstate(over="ignore")', 'np.errstate(all="raise")'])
    with g.w.block(f"with {manager}:"):
        block(g, sc.child(), g.rng.randint(1, 3))


@statement("with", 1, compound=True)
def try_stmt(g: Gen, sc: Scope):
    """`try:` a block `except ...:` another (never taken: nothing raises
    what it catches), with `else` or `finally` sometimes; a jump may leave
    the body where no `finally` block would run on the way out."""
    clauses = [c for c in ("else", "finally") if g.chance(0.3)]
    with g.w.block("try:"):
        body = sc.child()
        if "finally" in clauses:
            body.no_jump, body.ret = True, None
        block(g, body, g.rng.randint(1, 2))
    with g.w.block(f"except {g.pick(['KeyError', 'IndexError', 'ZeroDivisionError'])}:"):
        block(g, sc.child(), 1)
    for clause in clauses:
        with g.w.block(f"{clause}:"):
            block(g, sc.child(), 1)


@statement("walrus", 1, compound=True)
def walrus_if(g: Gen, sc: Scope):
    """`if (n := e) > c:` — the gradient-clipping idiom; `n` lives on after."""
    name = g.fresh(sc)
    bound = f"({name} := {strip(expr(g, sc, 'S'))})"
    test = g.pick([f"{bound} > {g.const(-0.5, 0.5)}",
                   f"{bound} > {g.const(-1.0, 0.0)} and {name} < {g.const(0.5, 2.0)}",
                   f"{bound} < {g.const(-0.5, 0.5)} or {name} > 1.0"])
    with g.w.block(f"if {test}:"):
        body = sc.child()
        body.add(Var(name, "S"))
        block(g, body, g.rng.randint(1, 2))
    sc.add(Var(name, "S"))


@statement("for", 3, compound=True)
def for_loop(g: Gen, sc: Scope):
    """A for loop over one of the iterables in `_ITERABLES`."""
    forms = [f for f in _ITERABLES if f[1](g, sc)]
    header, loop_vars, fixed = g.pick(forms)[0](g, sc)
    body = sc.child(loop=True)
    for var in loop_vars:
        body.add(var)
    if fixed is not None:               # never grow what is being iterated
        body.vars[fixed.name] = dataclasses.replace(fixed, fixed=True)
    with g.w.block(f"for {header}:"):
        block(g, body, g.rng.randint(1, 3))
    if g.on("jumps") and g.chance(0.1):
        after = sc.child()              # targets keep their loop kinds in `else`
        for var in loop_vars:
            after.add(dataclasses.replace(var))
        with g.w.block("else:"):
            block(g, after, 1)
    if sc.depth == 0:                   # loops run at least once: targets are bound
        for var in loop_vars:
            if var.name.isidentifier():
                sc.add(dataclasses.replace(var))


def _target(g: Gen, sc: Scope, kind: str, alias: bool = False) -> Var:
    """A loop target: a new name, or (top level, "names") an old one reused."""
    old = [v for v in sc.targets(*FLOAT_KINDS) if v.name.isidentifier() and not v.pinned]
    if sc.depth == 0 and old and g.on("names") and g.chance(0.3):
        return Var(g.pick(old).name, kind, alias=alias)
    return Var(g.fresh(sc), kind, alias=alias)


def _range(g: Gen, sc: Scope):
    i = _target(g, sc, "I")
    n = g.n
    if not sc.can("range"):
        return f"{i.name} in np.arange({g.rng.randint(1, n)})", [i], None
    forms = [f"range({g.rng.randint(1, n)})", f"range(1, {n})", f"range({n} - 1, -1, -1)",
             f"range(1, {g.rng.randint(1, 2)})"]            # (may run no times)
    forms += [f"range({p.name})" for p in sc.of("I") if p.info == "param"]
    if sc.can("len") and sc.names_of("V"):
        forms.append(f"range(len({g.pick(sc.names_of('V')).name}))")
    if sc.can("reversed"):
        forms.append(f"reversed(range({n}))")
    return f"{i.name} in {g.pick(forms)}", [i], None


def _elements(g: Gen, sc: Scope):
    t = _target(g, sc, "S")
    return f"{t.name} in {ref(g, sc, 'V', 1)}", [t], None


def _rows(g: Gen, sc: Scope):
    row = _target(g, sc, "V", alias=True)
    return f"{row.name} in {g.pick(sc.of('M')).name}", [row], None


def _literal_list(g: Gen, sc: Scope):
    kind = g.pick(FLOAT_KINDS)
    items = ", ".join(strip(expr(g, sc, kind, 1)) for _ in range(g.rng.randint(2, 3)))
    t = _target(g, sc, kind, alias=True)
    return f"{t.name} in [{items}]", [t], None


def _list_var(g: Gen, sc: Scope):
    lst = g.pick(sc.of("L"))
    t = _target(g, sc, lst.info.elem, alias=True)
    return f"{t.name} in {lst.name}", [t], lst


def _enumerate(g: Gen, sc: Scope):
    seqs = [(v, "S", True) for v in sc.of("V")] + [(v, "V", True) for v in sc.of("M")]
    seqs += [(v, v.info.elem, v.info.exact and v.info.length <= g.n) for v in sc.of("L")]
    seq, kind, small = g.pick(seqs)
    i = Var(g.fresh(sc), "I" if small else "X")
    t = Var(g.fresh(sc), kind, alias=True)
    start = g.pick(["", "", ", start=-1", ", -1"])     # (-1 .. n - 2: still an index)
    return f"{i.name}, {t.name} in enumerate({seq.name}{start})", [i, t], \
        seq if seq.kind == "L" else None


def _zip(g: Gen, sc: Scope):
    """`a, b in zip(...)`, or numbered: `i, (a, b) in enumerate(zip(...))`."""
    first = g.pick(sc.of("V", "M"))
    a = Var(g.fresh(sc), "S" if first.kind == "V" else "V", alias=True)
    b = Var(g.fresh(sc), "S")
    pairs = f"zip({first.name}, {ref(g, sc, 'V', 1)})"
    if sc.can("enumerate") and g.chance(0.3):
        i = Var(g.fresh(sc), "I")
        return f"{i.name}, ({a.name}, {b.name}) in enumerate({pairs})", [i, a, b], None
    return f"{a.name}, {b.name} in {pairs}", [a, b], None


def _dict_loop(g: Gen, sc: Scope):
    d = g.pick(sc.of("D"))
    key, val = Var(g.fresh(sc), "X"), Var(g.fresh(sc), d.info.elem, alias=True)
    form = g.rng.randrange(3)
    if form == 0:
        item = Var(f"{d.name}[{key.name}]", d.info.elem, alias=True)
        return f"{key.name} in {d.name}", [key, item], d
    if form == 1:
        return f"{key.name}, {val.name} in {d.name}.items()", [key, val], d
    return f"{val.name} in {d.name}.values()", [val], d


# (make the header, applicable?)
_ITERABLES = [
    (_range, lambda g, sc: True),
    (_elements, lambda g, sc: True),
    (_rows, lambda g, sc: bool(sc.of("M"))),
    (_literal_list, lambda g, sc: g.on("lists")),
    (_list_var, lambda g, sc: bool(sc.of("L"))),
    (_enumerate, lambda g, sc: sc.can("enumerate") and bool(sc.of("V", "M", "L"))),
    (_zip, lambda g, sc: sc.can("zip") and bool(sc.of("V", "M"))),
    (_dict_loop, lambda g, sc: bool(sc.of("D"))),
]


@statement("while", 2, compound=True)
def while_loop(g: Gen, sc: Scope):
    """A while loop on a scalar the body updates, at most k < 6 trips."""
    states = [v for v in sc.targets("S") if v.name.isidentifier()]
    if not states:
        return False
    state, ctr, k = g.pick(states), g.fresh(sc), g.rng.randint(2, 5)
    tests = [f"{state.name} < {g.const(0.0, 2.0)}", f"{state.name} > {g.const(-2.0, 0.0)}",
             f"np.abs({state.name}) < 2.0"]
    if sc.can("abs"):
        tests.append(f"abs({state.name}) > 0.1")
    test, body = g.pick(tests), sc.child(loop=True)
    g.w.line(f"{ctr} = 0")
    forever = g.on("jumps") and g.chance(0.3)        # `while True:` ... `break`
    with g.w.block("while True:" if forever else f"while {test} and {ctr} < {k}:"):
        g.w.line(f"{ctr} += 1")
        if forever:                                  # before any `continue`
            with g.w.block(f"if not ({test}) or {ctr} > {k}:"):
                g.w.line("break")
        g.w.line(f"{state.name} = {strip(expr(g, body, 'S'))}")
        if g.chance(0.6):
            block(g, body, g.rng.randint(1, 2))
    sc.add(Var(ctr, "X"))


@statement("jumps", 2)
def jump(g: Gen, sc: Scope):
    """`if c: break` / `continue` in a loop, `if c: return ...` anywhere."""
    options = (["break", "continue"] if sc.in_loop and not sc.no_jump else [])
    options += ["return"] if sc.ret else []
    if not options:
        return False
    kind = g.pick(options)
    with g.w.block(f"if {cond(g, sc)}:"):
        g.w.line(sc.ret(sc) if kind == "return" else kind)
