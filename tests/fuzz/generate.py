"""The whole program: module preamble, the entry function's parameters and
their values, the mode (grad / value_and_grad / has_aux / vjp) and `wrt`,
the body, and the return statement.  `generate(seed)` is deterministic.
"""
from __future__ import annotations

import builtins
import dataclasses
from dataclasses import dataclass

import numpy as np

from . import gen_comprehensions, gen_control, gen_views  # noqa: F401  (register their statements)
from .gen_core import FEATURES, FLOAT_KINDS, PARAM_NAMES, DictInfo, Gen, ListInfo, Scope, Var
from .gen_exprs import expr
from .gen_funcs import module_preamble
from .gen_stmts import DICT_KEYS, block, new_kind, strip
from .program import Program

ENTRY_NAMES = ("f", "loss", "objective", "model", "energy_fn")


@dataclass
class Param:
    var: Var
    value: object
    default: str | None = None     # source text of the default, if any
    passed: bool = True


def generate(seed: int, enabled=FEATURES) -> Program:
    """The program for `seed` using (a random subset of) `enabled` features."""
    g = Gen(seed, frozenset(enabled) | {"arith"})
    module_preamble(g)
    rng = np.random.default_rng(seed)
    mode, has_aux, out_kind = _mode(g)
    sc = Scope(set(), g.shadows(), _returner(g, out_kind, has_aux))
    for var in g.globals:
        sc.add(dataclasses.replace(var))
    params = _entry_params(g, sc, rng)
    entry = g.pick([n for n in ENTRY_NAMES if n not in g.module_names])
    g.budget = g.rng.randint(5, 20)
    with g.w.block(f"def {entry}({', '.join(_shown(p) for p in params)}):"):
        block(g, sc, g.budget)
        g.w.line(sc.ret(sc))
    passed = [p for p in params if p.passed]
    wrt, wrt_tuple = _wrt(g, params)
    return Program(seed, g.w.text(), entry, tuple(p.var.name for p in passed),
                   tuple(p.value for p in passed), mode, has_aux, wrt, wrt_tuple,
                   tuple(sorted(g.features)))


def _mode(g: Gen):
    modes = ["grad"] + [m for m in ("value_and_grad", "vjp") if g.on(m)]
    mode = g.pick(modes)
    has_aux = mode != "vjp" and g.on("has_aux") and g.chance(0.6)
    out_kind = g.pick(FLOAT_KINDS) if mode == "vjp" else "S"
    return mode, has_aux, out_kind


def _shown(p: Param) -> str:
    return p.var.name if p.default is None else f"{p.var.name}={p.default}"


def _entry_params(g: Gen, sc: Scope, rng) -> list:
    """1-3 float parameters, maybe a pytree and an int, then defaults."""
    def name():
        return g.fresh(sc, tricky=0.35, pool=PARAM_NAMES)
    params = [_float_param(g, name(), rng) for _ in range(g.rng.randint(1, 3))]
    if g.on("pytree") and g.chance(0.5):
        params.append(_pytree_param(g, name(), rng))
    if g.chance(0.25):
        params.append(Param(Var(name(), "I", "param"), int(rng.integers(1, g.n))))
    g.rng.shuffle(params)
    if g.chance(0.3):
        value = float(rng.standard_normal())
        params.append(Param(Var(name(), "S"), value, default=g.const(0.05, 1.0)))
    if g.on("names") and g.chance(0.3):
        params.append(_string_param(g, sc, rng))
    passing = True
    for p in params:
        passing = passing and (p.default is None or g.chance(0.5))
        p.passed = passing
    for p in params:
        sc.add(dataclasses.replace(p.var))
    sc.shadowed = tuple(sorted(set(sc.shadowed) | {p.var.name for p in params
                                                    if hasattr(builtins, p.var.name)}))
    return params


def _float_param(g: Gen, name: str, rng) -> Param:
    kind = new_kind(g)
    return Param(Var(name, kind, alias=kind != "S"), _value(g, kind, rng))


def _value(g: Gen, kind: str, rng):
    if kind == "V":
        return rng.standard_normal(g.n)
    if kind == "M":
        return rng.standard_normal((g.n, g.n))
    value = float(rng.standard_normal())
    return np.float64(value) if g.chance(0.2) else value


def _pytree_param(g: Gen, name: str, rng) -> Param:
    """A dict or a list of arrays (read-only in the body)."""
    kind = g.pick(FLOAT_KINDS)
    if g.chance(0.5):
        keys = g.rng.sample(DICT_KEYS, 2)
        return Param(Var(name, "D", DictInfo(kind, keys), fixed=True),
                     {k: _value(g, kind, rng) for k in keys})
    return Param(Var(name, "L", ListInfo(kind, 2), fixed=True),
                 [_value(g, kind, rng) for _ in range(2)])


def _string_param(g: Gen, sc: Scope, rng) -> Param:
    """`type="l2"`: a string switch, as in `def loss(x, type="l2")`."""
    names = [n for n in ("type", "mode", "norm") if n not in sc.taken and n not in g.module_names]
    name = g.pick(names or ["kind"])
    sc.taken.add(name)
    return Param(Var(name, "STR", ("l2", "l1")), g.pick(["l2", "l1"]), default="'l2'")


def _wrt(g: Gen, params: list):
    """(name, style) pairs and whether `wrt` is a tuple."""
    names = [p.var.name for p in params]
    cands = [p.var.name for p in params if p.passed and p.var.kind in "SVMDL"]
    styles = ["index", "neg", "name"]
    if g.on("wrt") and len(cands) >= 2 and g.chance(0.4):
        chosen = g.rng.sample(cands, g.rng.randint(2, len(cands)))
        return tuple((c, g.pick(styles)) for c in chosen), True
    if g.on("wrt"):
        name = g.pick(cands)
    else:
        name = cands[0]
    style = "default" if names.index(name) == 0 and (not g.on("wrt") or g.chance(0.5)) \
        else g.pick(styles if g.on("wrt") else ["index"])
    return ((name, style),), False


def _returner(g: Gen, kind: str, has_aux: bool):
    def ret(sc: Scope) -> str:
        value = output(g, sc, kind)
        return f"return {value}, {aux(g, sc)}" if has_aux else f"return {value}"
    return ret


def output(g: Gen, sc: Scope, kind: str) -> str:
    """A sum over 1-3 recent variables, each brought to `kind`."""
    found = sc.names_of(*FLOAT_KINDS)[-5:]
    if not found:
        return strip(expr(g, sc, kind))
    chosen = g.rng.sample(found, g.rng.randint(1, min(3, len(found))))
    return " + ".join(_as_kind(g, v, kind) for v in chosen)


def _as_kind(g: Gen, var: Var, kind: str) -> str:
    v, n = var.name, g.n
    forms = {("S", "S"): [v], ("V", "S"): [f"np.sum({v})", f"np.mean({v} ** 2)", f"{v} @ {v}"],
             ("M", "S"): [f"np.sum({v})", f"np.mean({v} ** 2)"],
             ("S", "V"): [f"{v} * np.ones({n})"], ("V", "V"): [v],
             ("M", "V"): [f"np.sum({v}, axis=0)", f"{v} @ {v}[0]"],
             ("S", "M"): [f"{v} * np.eye({n})"], ("V", "M"): [f"np.outer({v}, {v})"],
             ("M", "M"): [v]}
    return g.pick(forms[var.kind, kind])


def aux(g: Gen, sc: Scope) -> str:
    """Something to return beside the value: a variable, tuple, list or dict."""
    found = [v.name for v in sc.vars.values() if v.name.isidentifier()
             and v.kind in ("S", "V", "M", "I", "L", "D", "T")]
    a, b = g.pick(found), g.pick(found)
    return g.pick([a, f"({a}, {b})", f"[{a}, {b}]", f"{{'first': {a}, 'second': {b}}}"])
