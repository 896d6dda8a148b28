"""The compiler's stages for one function, in order, in two halves.

`front`: frontend -> normalize -> jumps -> primitives -> analysis -> complex_check,
and the adjoint pairs of callees the reverse sweep will call (`Front.needs`).
`back`, once those pairs are compiled: reverse -> lower -> optimize -> release ->
tidy_blocks -> guards -> codegen (text).  The driver (driver.py) runs `front`,
compiles the needed pairs through its work list, then `back`.

Invariant: an exception from inside the stages that is not an `S2SADError`
about the user's code is reported as `InternalError`, located at the
user's function (`reported`).
"""
from __future__ import annotations

import contextlib
import copy
import math
from dataclasses import dataclass, field
from typing import Callable

import gast
import numpy as np

from . import (analysis, astutil, captures, codegen, complex_check, forward, frontend, guards, lower,
               normalize, ir, ownership, pairs, primitives, release, reverse, runtime,
               traversal, withblocks)
from . import optimize as optimizer
from .normalize import jumps
from .errors import (InternalError, NonScalarOutputError, S2SADError,
                     UnsupportedSyntaxError, WrtError, location_of)
from .reverse_forward import pair_requests

FORWARD_MODES = ("jvp", "jvp_pair")    # the tangent function, not the adjoint
_PURE_BUILTINS = {type, reversed, range, len, float, int, slice, abs, min, max,
                  isinstance, tuple, list, bool, enumerate, zip, sum}


@dataclass(frozen=True)
class Options:
    mode: str = "grad"
    wrt: object = 0
    has_aux: bool = False
    optimize: bool = True
    disk: bool = True           # may use the on-disk cache (diskcache.py)
    # adjoints updated in place where the code owns them (ownership.py); off
    # for a derived function that is differentiated again (frontend.load)
    owned: bool = True


@dataclass
class Compiled:
    """What `compile_adjoint` makes of a function."""

    text: str                   # the generated source (two defs for a pair)
    imports: dict               # names it reads from s2s_ad -> objects
    src: ir.Source
    deps: tuple = ()            # what it was compiled against (guards.Dep)
    guard: guards.Guard | None = None


@dataclass
class Front:
    """A function through analysis: what `back` needs, and the pairs to
    compile first, as (callee, varied parameters, location)."""

    func: object
    options: Options
    src: ir.Source
    wrt: list
    norm: ir.Normalized
    output: object
    aux: object
    prims: dict
    facts: ir.Facts
    needs: list = field(default_factory=list)


STAGES = {      # what `observe` is shown, in order (`s2s-ad dump --stage NAME`)
    "source": "the function as s2s_ad parsed it (frontend)",
    "anf": "A-normal form: one operation per statement (normalize)",
    "jumps": "break, continue, early return and loop else lowered to flags and "
             "guards (jumps)",
    "analysis": "the A-normal form, each assignment marked with its activity and "
                "recording (analysis)",
    "reverse": "the forward and reverse sweeps, before any optimization (reverse)",
    "tangent": "forward mode (jvp): each statement with its tangent's, before any "
               "optimization (forward)",
    "lowered": "the contributions given their shapes: unbroadcast, compact, "
               "expand (lower)",
    "optimized": "after propagation, folding, dead code and inlining (optimize)",
    "final": "the derived function as it is compiled: release, guard (codegen)",
}


def unobserved(stage: str, render: Callable[[], str]) -> None:
    pass


def front(func, options: Options, observe: Callable = unobserved) -> Front:
    """The first half of the stages (see the module docstring).  `observe`
    is called with each stage's name (`STAGES`) and a function printing it."""
    with reported(func):
        src = frontend.load(func)
        observe("source", lambda: astutil.unparse(astutil.module([src.tree])))
        wrt = resolve_wrt(src, options.wrt)
        norm = normalize.normalize(src, forward=options.mode in FORWARD_MODES)
        observe("anf", lambda: _printed(norm.tree))
        norm = jumps.lower_jumps(norm)
        observe("jumps", lambda: _printed(norm.tree))
        output, aux = _output(norm, src, options)
        prims = primitives.classify(norm, src)
        body = norm.tree.body[:-1]
        facts = analysis.analyze(body, prims, wrt,
                                 [n.id for n in traversal.walk(output) if isinstance(n, gast.Name)],
                                 spread=options.mode not in ("pair", *FORWARD_MODES),
                                 shares=norm.shares,
                                 heirs=norm.heirs)
        complex_check.check(body, facts.active, src, norm.locals)
        captures.check(body, prims, facts, norm.shares, src)
        observe("analysis", lambda: _printed(_annotated(norm.tree, facts)))
        needs = [(callee, variant, src.locate(stmt))
                 for callee, variant, stmt in pair_requests(body, prims, facts, src)]
        return Front(func, options, src, wrt, norm, output, aux, prims, facts, needs)


def back(fr: Front, pairs_of: Callable, observe: Callable = unobserved) -> Compiled:
    """The second half: `pairs_of(callee, variant, location)` gives each
    needed pair (a `reverse.PairRef`, already compiled).  In "pair" mode the
    text holds two defs, `<f>_fwd` and `<f>_bwd`."""
    options, norm, src = fr.options, fr.norm, fr.src
    with reported(fr.func):
        seed = norm.namer.fresh_parameter("seed") if options.mode == "vjp" else None
        request = reverse.Request(fr.wrt, options.mode, options.has_aux, seed,
                                  single=not isinstance(options.wrt, tuple), pairs=pairs_of)
        if options.mode in FORWARD_MODES:
            adj = forward.tangents(norm, src, fr.prims, fr.facts, request, fr.output, fr.aux)
            observe("tangent", lambda: _printed(adj.tree))
        else:
            adj = reverse.reverse(norm, src, fr.prims, fr.facts, request, fr.output, fr.aux)
            observe("reverse", lambda: _printed(adj.tree))
            lower.lower(adj, fr.facts.shapes, adj.rt)
            observe("lowered", lambda: _printed(adj.tree))
        trees = _finish(adj, norm, src, fr.wrt, options, observe)
        # (no guard statements in a pair, or in a derived function's twin that
        # is only read to differentiate it again: see frontend.PURE; a pair's
        # primal may be a lifted function, made anew per compile: its code is
        # its caller's)
        guard = guards.guard(trees[0], src, norm.locals | set(parameters(src)), adj.imports,
                             norm.namer, in_body=options.mode != "pair" and options.owned,
                             itself=options.mode not in ("pair", "jvp_pair"))
        imports, deps = dict(adj.imports), ()
        if guard is not None:
            trees[0].body[:0] = guard.statements
            imports.update(guard.imports)
            deps = guard.deps
        runtime_names = {n for n, obj in imports.items() if obj is runtime}
        for tree in trees:
            withblocks.structure(tree, runtime_names, src)
        text = "\n".join(codegen.to_source(t) for t in trees)
        observe("final", lambda: text)
        return Compiled(text, imports, src, deps, guard)


def _printed(fdef: gast.FunctionDef) -> str:
    """An intermediate tree as valid Python: a copy, no block left empty."""
    fdef = astutil.clone(fdef)
    optimizer.tidy_blocks(fdef, lambda call: False)
    return codegen.to_source(fdef)


def _annotated(fdef: gast.FunctionDef, facts: ir.Facts) -> gast.FunctionDef:
    """`fdef` with each assignment in a block whose comment says: active or
    not, recorded (its old value kept for the reverse sweep), the varied
    names it reads."""
    def block(body: list) -> list:
        out = []
        for stmt in body:
            if isinstance(stmt, gast.Assign):
                varied = sorted(facts.varied_before.get(stmt, ()))
                notes = ["active" if stmt in facts.active else "inactive"]
                notes += ["recorded" + " (shape)" * (stmt in facts.shape_recorded)] * \
                    (stmt in facts.recorded)
                notes += [f"reads varied {', '.join(varied)}"] * bool(varied)
                stmt = astutil.block("; ".join(notes), [stmt])
            elif isinstance(stmt, (gast.If, gast.For, gast.While)):
                stmt = copy.copy(stmt)
                stmt.body, stmt.orelse = block(stmt.body), block(stmt.orelse)
            out.append(stmt)
        return out
    out = copy.copy(fdef)
    out.body = block(fdef.body)
    return out


@contextlib.contextmanager
def reported(func, generated: str = ""):
    """Report an unexpected exception as `InternalError` at `func`."""
    try:
        yield
    except S2SADError:
        raise
    except Exception as exc:
        where = location_of(func) if hasattr(func, "__code__") else None
        raise InternalError(
            f"internal error while differentiating {getattr(func, '__qualname__', func)!r}: "
            f"{type(exc).__name__}: {exc}", where, generated=generated) from exc


def _finish(adj, norm, src, wrt, options: Options, observe: Callable) -> list:
    """Optimize, split a pair, free dead locals; no block left empty."""
    resolve = _callee_resolver(src, norm, adj.imports)
    pure = _pure_call_test(resolve)
    if options.optimize:
        forward = options.mode in FORWARD_MODES     # (a temporary's tangent is one too)
        optimizer.optimize(adj.tree, norm.locals | set(wrt), pure,
                           norm.namer.temps | (set(adj.temp_adjoints) if forward else set()),
                           adj.temp_adjoints, forward)
        observe("optimized", lambda: _printed(adj.tree))
    trees = [adj.tree]
    if options.mode == "pair":
        trees = pairs.split_pair(adj.tree, adj.pair_names, adj.seed_param)
    for tree in trees:
        if options.optimize:
            if options.owned and ownership.own(tree, resolve):
                optimizer.dead_code(tree, pure)     # (an append's position)
            release.release(tree, adj.scalars)
        optimizer.tidy_blocks(tree, pure)
    return trees


def parameters(src: ir.Source) -> list[str]:
    args = src.tree.args
    star = [args.vararg] if args.vararg else []
    return [a.id for a in args.posonlyargs + args.args + star + args.kwonlyargs]


def resolve_wrt(src: ir.Source, wrt) -> list[str]:
    """Parameter names for `wrt` (an index, a name, or a tuple of them)."""
    params = parameters(src)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    if not items:
        raise WrtError("wrt=() selects no parameter", src.locate(src.tree),
                       hint=f"pass an index or a name from {params}")
    names = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt={item!r} is neither a parameter index nor a name",
                           src.locate(src.tree), hint=f"use one of {params}")
        if isinstance(item, int):
            if not -len(params) <= item < len(params):
                raise WrtError(f"wrt={item} is out of range: {src.name!r} has "
                               f"{len(params)} parameter(s)", src.locate(src.tree),
                               hint=f"use an index below {len(params)} or a name from {params}")
            names.append(params[item])
        elif item not in params:
            raise WrtError(f"wrt={item!r}: {src.name!r} has no parameter of that name",
                           src.locate(src.tree), hint=f"use one of {params}")
        else:
            names.append(item)
    return names


def _output(norm, src, options: Options):
    """The returned atom to differentiate, and the aux atom (or None)."""
    ret = norm.tree.body[-1]
    value = ret.value
    if options.has_aux:
        if not isinstance(value, gast.Tuple) or len(value.elts) != 2:
            raise UnsupportedSyntaxError(
                "has_aux=True needs the function to return a pair", src.locate(ret),
                hint="end the function with `return value, aux`")
        _check_number(value.elts[0], ret, src, options)
        return value.elts[0], value.elts[1]
    if isinstance(value, gast.Tuple) and options.mode not in ("pair", *FORWARD_MODES):
        raise NonScalarOutputError(
            f"{src.name!r} returns a tuple; {options.mode} needs one output",
            src.locate(ret),
            hint="return a single value, or use has_aux=True for `return value, aux`")
    _check_number(value, ret, src, options)
    return value, None


def _check_number(value, ret, src, options: Options) -> None:
    """A returned literal that is no number (`None`, a string) has no
    gradient: refuse it rather than return zeros."""
    if options.mode in ("pair", "jvp_pair") or value is None or \
            not isinstance(value, gast.Constant) \
            or isinstance(value.value, (int, float)):
        return
    what = "None (or nothing)" if value.value is None else \
        f"a {type(value.value).__name__} ({value.value!r})"
    raise NonScalarOutputError(
        f"{src.name!r} returns {what}; {options.mode} needs a real number to "
        "differentiate", src.locate(ret),
        hint="return the scalar value to differentiate (vjp: the array), "
             "e.g. `return loss`")


def _callee_resolver(src, norm, imports: dict):
    """`resolve(call, whole=True)`: the object a generated call's dotted
    function name means (with `whole=False`, the object its first name
    means: a module the derived function imports, or a name of the user's),
    or None.  (It holds `norm.locals`, not `norm`: the passes' recursive
    closures, freed only by the cyclic collector, reach it.)"""
    locals_ = norm.locals

    def resolve(call: gast.Call, whole: bool = True):
        parts = astutil.dotted_parts(call.func)
        if parts is None:
            return None
        head, *rest = parts
        obj = imports[head] if head in imports else src.resolve(astutil.name(head), locals_)
        for attr in rest if whole else ():
            obj = getattr(obj, attr, None)
        return obj
    return resolve


def _pure_call_test(resolve):
    """Calls the optimizer may delete when their result is unused."""
    def is_pure(call: gast.Call) -> bool:
        obj = resolve(call, whole=False)
        if obj is None:
            return False
        if _hashable_obj(obj) and obj in _PURE_BUILTINS:
            return True
        if obj is runtime:      # except the helpers that write into their argument
            return resolve(call) not in runtime.MUTATORS | runtime.MARKERS   # (or mark a with)
        if obj is math:
            return True
        return obj is np and astutil.dotted_name(call.func).split(".")[1:2] != ["random"]
    return is_pure


def _hashable_obj(obj) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False
