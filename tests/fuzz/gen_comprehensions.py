"""Comprehensions and generator expressions: list and dict comprehensions
over the function's lists, dicts and ranges (one or two `for` clauses, an
`if` filter), and generators consumed by `sum`, `max` and `min`.

A comprehension's variable often reuses a name the function already binds,
of another kind: Python keeps it local to the comprehension, so the
enclosing variable must read the same after it (s2s_ad renames it).
"""
from __future__ import annotations

from .gen_core import DictInfo, Gen, ListInfo, Scope, Var
from .gen_exprs import expr
from .gen_stmts import new_kind, statement, strip


def _variable(g: Gen, sc: Scope) -> str:
    """The comprehension's variable: often a name bound outside it."""
    outside = [v.name for v in sc.vars.values() if v.name.isidentifier()]
    if outside and g.chance(0.4):
        return g.pick(outside)
    return g.fresh(sc)


def _source(g: Gen, sc: Scope):
    """(iterable text, element kind, length, exact) of a list or a range."""
    lists = [v for v in sc.of("L") if v.info.length >= 1]
    if lists and g.chance(0.7):
        var = g.pick(lists)
        return var.name, var.info.elem, var.info.length, var.info.exact
    if not sc.can("range"):
        return None
    return f"range({g.n})", "I", g.n, True


def _body(g: Gen, sc: Scope, name: str, elem: str, kind: str) -> str:
    """An expression of `kind` that reads the comprehension's variable."""
    inner = sc.child()
    inner.add(Var(name, elem))
    body = expr(g, inner, kind, 2)
    if elem == kind:
        return f"{name} + {body}" if g.chance(0.5) else strip(body)
    if elem == "S":
        return f"{name} * {body}"
    if elem == "I":
        return f"(0.1 * {name}) * {body}"
    return strip(body)


@statement("comprehensions", 2)
def list_comprehension(g: Gen, sc: Scope):
    """`name = [e for v in src]`, with a second `for` over a range or an
    `if` filter on the position."""
    source = _source(g, sc)
    if source is None:
        return False
    src, elem, length, exact = source
    kind, var = new_kind(g), _variable(g, sc)
    clauses = f"for {var} in {src}"
    if exact and length >= 2 and g.chance(0.3) and sc.can("enumerate"):
        pos = g.fresh(sc)
        clauses = f"for {pos}, {var} in enumerate({src}) if {pos} != 0"
        length -= 1
    elif g.chance(0.25) and sc.can("range"):
        clauses += f" for {g.fresh(sc)} in range(2)"
        length *= 2
    body = _body(g, sc, var, elem, kind)
    name = g.fresh(sc)
    g.w.line(f"{name} = [{body} {clauses}]")
    sc.add(Var(name, "L", ListInfo(kind, length, exact)))


@statement("comprehensions", 1.5)
def reduced_generator(g: Gen, sc: Scope):
    """`s = sum(e for v in src)`, or `max`/`min` of scalars; or the same
    as `sum(map(lambda v: e, src))`, or `sum(filter(lambda v: v > 0.0, src))`."""
    source = _source(g, sc)
    if source is None:
        return False
    src, elem, _, _ = source
    var = _variable(g, sc)
    reducers = [r for r in ("max", "min") if sc.can(r)]
    if reducers and g.chance(0.4):
        kind, reducer = "S", g.pick(reducers)
    elif sc.can("sum"):
        kind, reducer = new_kind(g), "sum"
    else:
        return False
    body = _body(g, sc, var, elem, kind)
    name = g.fresh(sc)
    if sc.can("map") and g.chance(0.25):           # the same, as a map of a lambda
        g.w.line(f"{name} = {reducer}(map(lambda {var}: {body}, {src}))")
    elif elem == kind == "S" and sc.can("filter") and g.chance(0.2):
        g.w.line(f"{name} = {reducer}(filter(lambda {var}: {var} > 0.0, {src}))"
                 if reducer == "sum" else f"{name} = {reducer}(map(lambda {var}: {body}, {src}))")
    else:
        g.w.line(f"{name} = {reducer}({body} for {var} in {src})")
    sc.add(Var(name, kind))


@statement("comprehensions", 1)
def dict_comprehension(g: Gen, sc: Scope):
    """`name = {k: e for k, v in d.items()}`."""
    dicts = sc.of("D")
    if not dicts:
        return False
    source = g.pick(dicts)
    kind, key, var = new_kind(g), g.fresh(sc), _variable(g, sc)
    body = _body(g, sc, var, source.info.elem, kind)
    name = g.fresh(sc)
    g.w.line(f"{name} = {{{key}: {body} for {key}, {var} in {source.name}.items()}}")
    sc.add(Var(name, "D", DictInfo(kind, list(source.info.keys))))
