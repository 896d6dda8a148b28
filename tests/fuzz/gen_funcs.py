"""Functions other than the entry point: module-level helpers (with default
arguments, tuple results, and names like `<helper>_fwd`), module constants,
closure factories, module-level lambdas, `from numpy import dot`, a
higher-order `apply_fn(fn, u, n)`, and the statement forms for nested
`def`s, lambdas and lists of lambdas inside a function, and for passing
functions as values.
"""
from __future__ import annotations

import builtins
import dataclasses

from .gen_core import FLOAT_KINDS, PAIR_FIELDS, Gen, Scope, Sig, Var
from .gen_exprs import call_args, expr
from .gen_stmts import MAX_DEPTH, block, new_kind, statement, strip

HELPER_NAMES = ("act", "layer", "score", "smooth", "mix", "gate", "proj", "energy",
                "penalty", "blend")
CONSTANT_NAMES = ("scale", "eps", "alpha", "gamma")
TRICKY_CONSTANTS = ("saved", "tape", "rt", "seed", "dx", "dh", "x_old", "trips", "dw")


def module_preamble(g: Gen) -> None:
    """Imports, constants and helpers, in that order."""
    g.w.line("import collections")
    g.w.line("import functools")
    g.w.line("import math")
    g.w.line("import numpy as np")
    g.w.line("import s2s_ad as ad")
    g.w.line("")
    g.w.line(f"Pair = collections.namedtuple('Pair', {' '.join(PAIR_FIELDS)!r})")
    if g.on("names") and g.on("linalg") and g.chance(0.3):
        g.w.line("from numpy import dot")
        g.module_names.add("dot")
        g.callables.append(Var("dot", "F", Sig(("a", "b"), ("V", "V"), "S", 2)))
        g.extra_tricky.append("ot")
    g.w.line("")
    constants(g)
    makers = [helper] * 3 + [factory, module_lambda]
    count = g.rng.randint(1, 3) if g.on("helpers") else 0
    for _ in range(count):
        g.pick(makers if g.on("closures") else [helper])(g)
    if g.on("closures") and g.chance(0.6):
        applier(g)


APPLIER = "apply_fn"


def applier(g: Gen) -> None:
    """`def apply_fn(fn, u, n=1)`: calls the function value it is given n
    times (a parameter called as a function: see `function_value`)."""
    with g.w.block(f"def {APPLIER}(fn, u, n=1):"):
        with g.w.block("for _ in range(n):"):
            g.w.line("u = fn(u)")
        g.w.line("return u")
    g.w.line("")
    g.module_names.add(APPLIER)


def constants(g: Gen) -> None:
    """Module-level float constants that functions read (never rebind)."""
    if not (g.on("helpers") or g.on("names")):
        return
    for _ in range(g.rng.randint(0, 2)):
        pool = CONSTANT_NAMES + (TRICKY_CONSTANTS if g.on("names") else ())
        free = [n for n in pool if n not in g.module_names]
        name = g.pick(free)
        g.w.line(f"{name} = {g.const(0.1, 2.0)}")
        g.module_names.add(name)
        g.globals.append(Var(name, "S", fixed=True))
    g.w.line("")


def function_scope(g: Gen, names, kinds, ret=None) -> Scope:
    """A new function's scope: module constants, then its parameters
    (arrays alias the caller's, so in-place updates on them are "views")."""
    shadowed = set(g.shadows()) | {n for n in names if hasattr(builtins, n)}
    sc = Scope(set(names), tuple(sorted(shadowed)), ret)
    for var in g.globals:
        sc.add(dataclasses.replace(var))
    for name, kind in zip(names, kinds):
        sc.add(Var(name, kind, alias=kind != "S"))
    return sc


def _helper_name(g: Gen) -> str:
    if g.on("names") and g.callables and g.chance(0.3):
        base = g.pick([c.name for c in g.callables if c.name != "dot"] or ["act"])
        name = base + g.pick(["_fwd", "_bwd"])
        if name not in g.module_names:
            return name
    free = [n for n in HELPER_NAMES if n not in g.module_names]
    return g.pick(free) if free else f"helper{len(g.callables)}"


def _params(g: Gen, taken: set, count: int) -> list:
    """Parameter names: plain, or with "names" builtins and generated-looking ones."""
    pool = ["u", "v", "a", "b", "k", "x", "z", "t"]
    if g.on("names"):
        pool += ["type", "len", "sum", "tape", "saved", "dx", "rt", "seed", "np_1"]
    names = []
    while len(names) < count:
        name = g.pick(pool)
        if name not in names and name not in taken and name not in g.module_names:
            names.append(name)
        elif len(names) + len(pool) > 40:
            names.append(f"p{len(names)}")
    return names


def helper(g: Gen) -> None:
    """A module-level helper: 1-3 parameters (trailing scalars may default),
    maybe `**opts`, a small body, a result of one kind or (with "tuples") a
    pair."""
    name = _helper_name(g)
    kinds = [new_kind(g) for _ in range(g.rng.randint(1, 3))]
    names = _params(g, set(), len(kinds))
    result = new_kind(g)
    if g.on("tuples") and g.chance(0.25):
        result = (new_kind(g), new_kind(g))
    required = len(kinds)
    while required > 1 and kinds[required - 1] == "S" and g.chance(0.5):
        required -= 1
    shown = [n if i < required else f"{n}={g.const(0.1, 1.0)}" for i, n in enumerate(names)]
    options = g.chance(0.15)                # `**opts`: options its callers may pass
    sc = function_scope(g, names, kinds, _returner(g, result))
    g.budget = g.rng.randint(0, 4)
    with g.w.block(f"def {name}({', '.join(shown + ['**opts'] * options)}):"):
        if options:
            scale = g.fresh(sc)
            g.w.line(f"{scale} = opts.get('scale', 1.0) * {g.const(0.5, 1.5)}")
            sc.add(Var(scale, "S"))
        if g.budget:
            block(g, sc, g.budget)
        g.w.line(sc.ret(sc))
    g.w.line("")
    _register(g, name, Sig(tuple(names), tuple(kinds), result, required, options))


def _returner(g: Gen, result):
    def ret(sc: Scope) -> str:
        if isinstance(result, tuple):
            return "return " + ", ".join(strip(expr(g, sc, k, 2)) for k in result)
        return f"return {strip(expr(g, sc, result))}"
    return ret


def _register(g: Gen, name: str, sig: Sig) -> None:
    g.callables.append(Var(name, "F", sig))
    g.module_names.add(name)


def factory(g: Gen) -> None:
    """`def make_f(c): def inner(u): ...; return inner` and `f = make_f(0.7)`."""
    name = g.pick([n for n in ("scaled", "shifted", "warp") if n not in g.module_names]
                  or ["warp2"])
    kind = new_kind(g)
    sc = function_scope(g, ["c", "u"], ["S", kind])
    with g.w.block(f"def make_{name}(c):"):
        with g.w.block("def inner(u):"):
            g.w.line(f"return {strip(expr(g, sc, kind))}")
        g.w.line("return inner")
    g.w.line("")
    g.w.line(f"{name} = make_{name}({g.const(0.2, 1.5)})")
    g.w.line("")
    g.module_names.add(f"make_{name}")
    _register(g, name, Sig(("u",), (kind,), kind, 1))


def module_lambda(g: Gen) -> None:
    """`name = lambda u, c=0.5: <expr>` at module level."""
    name = g.pick([n for n in ("sq", "soft", "bump") if n not in g.module_names] or ["bump2"])
    kind = new_kind(g)
    sc = function_scope(g, ["u", "c"], [kind, "S"])
    g.w.line(f"{name} = lambda u, c={g.const(0.1, 1.0)}: {strip(expr(g, sc, kind, 2))}")
    g.w.line("")
    _register(g, name, Sig(("u", "c"), (kind, "S"), kind, 1))


@statement("closures", 1)
def function_value(g: Gen, sc: Scope):
    """`out = apply_fn(f, e, n)` with f a NumPy function, a helper, a nested
    function or lambda, `lambda u: <expr>` written at the call, or a
    closure a module-level factory makes at the call from a scalar
    expression (what it captured may carry a gradient)."""
    if APPLIER not in g.module_names:
        return False
    made = [c for c in g.callables if f"make_{c.name}" in g.module_names
            and c.info.kinds[0] == c.info.result]
    if made and g.chance(0.4):      # a closure made here, from what is differentiated
        factory = g.pick(made)
        kind = factory.info.result
        options = [f"make_{factory.name}({strip(expr(g, sc, 'S', 1))})"]
    else:
        kind = g.pick(FLOAT_KINDS)
        options = ["np.sin", "np.tanh", "np.cos"]
        options += [c.name for c in g.callables + sc.of("F") if c.info.required == 1
                    and c.info.kinds[0] == kind and c.info.result == kind]
    if g.chance(0.3):
        u = g.fresh(sc, tricky=0)
        inner = _inner_scope(g, sc, [u], [kind])
        options.append(f"lambda {u}: {strip(expr(g, inner, kind, 2))}")
    out = g.fresh(sc)
    g.w.line(f"{out} = {APPLIER}({g.pick(options)}, {strip(expr(g, sc, kind, 1))}, "
             f"{g.rng.randint(1, 2)})")
    sc.add(Var(out, kind, alias=True))


@statement("closures", 2, compound=True)
def nested(g: Gen, sc: Scope):
    """A nested def, a lambda, or a list of lambdas, then a call of it."""
    forms = [_local_def, _local_lambda, _lambda_list]
    weights = [2, 2, 1 if g.on("for") else 0]
    return g.weighted(forms, weights)(g, sc)


def _inner_scope(g: Gen, sc: Scope, names, kinds) -> Scope:
    """The scope inside a nested function: enclosing variables are read-only
    there (and keep their kind outside from now on), parameters are new."""
    inner = Scope(set(sc.taken) | set(names), sc.shadowed)
    inner.depth = MAX_DEPTH
    for var in sc.vars.values():
        var.pinned = True
        inner.add(dataclasses.replace(var, fixed=True))
    for name, kind in zip(names, kinds):
        inner.add(Var(name, kind, alias=kind != "S"))
    return inner


def _local_def(g: Gen, sc: Scope):
    name = g.fresh(sc)
    kinds = [new_kind(g) for _ in range(g.rng.randint(1, 2))]
    names = [g.fresh(sc, tricky=0.1) for _ in kinds]
    result = new_kind(g)
    shown = list(names)
    required = len(names)
    if kinds[-1] == "S" and g.chance(0.5):        # default evaluated at def time
        scalars = [v.name for v in sc.of("S")] or [g.const()]
        shown[-1] = f"{names[-1]}={g.pick(scalars)}"
        required -= 1
    inner = _inner_scope(g, sc, names, kinds)
    with g.w.block(f"def {name}({', '.join(shown)}):"):
        if g.chance(0.4):
            block(g, inner, 1)
        g.w.line(f"return {strip(expr(g, inner, result))}")
    return _define_and_call(g, sc, name, Sig(tuple(names), tuple(kinds), result, required))


def _local_lambda(g: Gen, sc: Scope):
    name, u = g.fresh(sc), g.fresh(sc, tricky=0.1)
    kind, result = new_kind(g), new_kind(g)
    params, names, kinds = [u], [u], [kind]
    if g.chance(0.4):
        k = g.fresh(sc, tricky=0.1)
        scalars = [v.name for v in sc.of("S")] or [g.const()]
        params.append(f"{k}={g.pick(scalars)}")
        names.append(k)
        kinds.append("S")
    inner = _inner_scope(g, sc, names, kinds)
    g.w.line(f"{name} = lambda {', '.join(params)}: {strip(expr(g, inner, result, 2))}")
    return _define_and_call(g, sc, name, Sig(tuple(names), tuple(kinds), result, 1))


def _define_and_call(g: Gen, sc: Scope, name: str, sig: Sig):
    sc.add(Var(name, "F", sig, fixed=True))
    out = g.fresh(sc)
    g.w.line(f"{out} = {name}({call_args(g, sc, sig, 1)})")
    sc.add(Var(out, sig.result, alias=True))


def _lambda_list(g: Gen, sc: Scope):
    """`fns = [lambda u: ..., lambda u: ...]` then `for fn in fns: acc = acc + fn(e)`."""
    kind = g.pick(FLOAT_KINDS)
    accs = [v for v in sc.targets(kind) if v.name.isidentifier()]
    if not accs:
        return False
    fns, u, fn = g.fresh(sc), g.fresh(sc, tricky=0), g.fresh(sc)
    lams = []
    for _ in range(g.rng.randint(2, 3)):
        inner = _inner_scope(g, sc, [u], [kind])
        lams.append(f"lambda {u}: {strip(expr(g, inner, kind, 2))}")
    acc = g.pick(accs).name
    g.w.line(f"{fns} = [{', '.join(lams)}]")
    with g.w.block(f"for {fn} in {fns}:"):
        g.w.line(f"{acc} = {acc} + {fn}({strip(expr(g, sc, kind, 1))})")
    sc.add(Var(fns, "X"))
    sc.add(Var(fn, "X"))
