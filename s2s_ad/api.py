"""The public transforms and the one ordered list of compiler stages.

`grad`, `value_and_grad` and `vjp` differ only in the `reverse.Request` they
build; all go through `derive`, which consults the cache and otherwise runs
`compile_adjoint`: frontend -> normalize -> primitives -> analysis ->
complex_check -> reverse -> optimize -> release -> tidy_blocks -> guards ->
codegen.  The CLI prints what the same stages make.

Invariants: a derived function is an ordinary Python function with the
primal's parameters (plus `seed` for `vjp`); no wrapper sits between the
caller and the generated code (its staleness guard, if any, is its own
first statement: guards.py).  An exception from inside the stages that is
not an `S2SADError` about the user's code is reported as `InternalError`,
located at the user's function.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import math
import types
import weakref
from dataclasses import dataclass

import gast
import numpy as np

from . import (analysis, astutil, cache, codegen, complex_check, frontend, guards, normalize,
               pairs, primitives, release, reverse)
from . import optimize as optimizer
from . import runtime
from .errors import (InternalError, NonScalarOutputError, NoRuleError, S2SADError,
                     SourceUnavailableError, UnsupportedSyntaxError, WrtError, location_of)
from .rules import registry

_PURE_BUILTINS = {type, reversed, range, len, float, int, slice, abs, min, max,
                  isinstance, tuple, list, bool, enumerate, zip, sum}


@dataclass(frozen=True)
class Options:
    mode: str = "grad"
    wrt: object = 0
    has_aux: bool = False
    optimize: bool = True


def grad(func=None, *, wrt=0, has_aux=False, optimize=True):
    """The gradient of a scalar-valued `func` with respect to `wrt`.

    `wrt` is a parameter index or name, or a tuple of them (then the result
    is a tuple of gradients).  Each gradient has its argument's type, shape
    and dtype.  With `has_aux=True`, `func` returns `(value, aux)` and the
    derived function returns `(gradients, aux)`.
    """
    return _transform(func, Options("grad", _hashable(wrt), has_aux, optimize))


def value_and_grad(func=None, *, wrt=0, has_aux=False, optimize=True):
    """Like `grad`, returning `(value, gradients)` from one primal evaluation.

    With `has_aux=True` it returns `((value, aux), gradients)`.
    """
    return _transform(func, Options("value_and_grad", _hashable(wrt), has_aux, optimize))


def vjp(func=None, *, wrt=0, optimize=True):
    """Vector-Jacobian product: the derived function takes `func`'s arguments
    and then `seed`, the cotangent of the output (same shape as the output),
    and returns `seed`-weighted gradients shaped as `grad` returns them.

    `seed` is positional after the parameters, or keyword-only when `func`
    has parameters with default values.
    """
    return _transform(func, Options("vjp", _hashable(wrt), False, optimize))


def source(derived) -> str:
    """The generated Python source of a function made by s2s_ad."""
    if not getattr(derived, "__s2s_ad_primal__", None):
        raise S2SADError(f"{derived!r} was not made by s2s_ad",
                         hint="pass the result of s2s_ad.grad / value_and_grad / vjp")
    return inspect.getsource(derived)


def _hashable(wrt):
    return tuple(wrt) if isinstance(wrt, list) else wrt


def _transform(func, options: Options):
    if func is None:
        return functools.partial(_transform, options=options)
    if isinstance(func, types.MethodType):          # obj.loss: differentiate loss
        inner = _transform(func.__func__, _shift_wrt(options, 1))
        return types.MethodType(inner, func.__self__)
    if isinstance(func, functools.partial):         # partial(f, a, b=...)
        inner = _transform(func.func, _shift_wrt(options, len(func.args)))
        return functools.partial(inner, *func.args, **func.keywords)
    return derive(func, options)


def _shift_wrt(options: Options, bound: int) -> Options:
    """`wrt` of a function whose first `bound` parameters are already given."""
    def shift(w):
        return w + bound if isinstance(w, int) and w >= 0 else w
    wrt = tuple(shift(w) for w in options.wrt) if isinstance(options.wrt, tuple) \
        else shift(options.wrt)
    return dataclasses.replace(options, wrt=wrt)


def derive(func, options: Options):
    """The derived function for `func`, from the cache or freshly compiled."""
    version = registry.version()
    hit = cache.lookup(func, options, version)
    if hit is not None:
        return hit
    return cache.get_or_build(func, options, version,
                              lambda: _build(func, options))


def _rederive(func, options: Options, stale):
    """A derived function in place of `stale`, whose guard found a name
    rebound since it was compiled (see guards.Rederive)."""
    cache.discard(func, options, stale)
    fresh = derive(func, options)
    if cache.lookup(func, options, registry.version()) is not fresh:
        raise InternalError(
            f"internal error: the names {func.__qualname__!r} resolves keep changing "
            "while s2s_ad compiles it", location_of(func))
    return fresh


def _build(func, options: Options):
    """(derived function or pair, its `stale()` check or None)."""
    out = compile_adjoint(func, options)
    imports, thunk = dict(out.imports), None
    if out.guard is not None and out.guard.rederive:
        thunk = imports[out.guard.rederive] = guards.Rederive.of(func, options, _rederive)
    hidden = codegen.to_source(out.guard.checker) if out.guard is not None else ""
    with _reported(func, out.text):
        fns = codegen.compile_functions(
            out.text, f"{func.__qualname__}.<{options.mode}>", func.__globals__, imports,
            _closure_cells(func), func, hidden)
    stale = fns.pop() if hidden else None
    guards.install(out.guard, fns[0], thunk)
    for fn in fns:
        fn.__s2s_ad_primal__ = weakref.ref(func)     # weak: the cache is keyed on func
        fn.__doc__ = f"{options.mode} of {func.__qualname__} generated by s2s_ad"
        setattr(fn, guards.DEPS, out.deps)
    return (tuple(fns) if options.mode == "pair" else fns[0]), stale


@dataclass
class Compiled:
    """What `compile_adjoint` makes of a function."""

    text: str                   # the generated source (two defs for a pair)
    imports: dict               # names it reads from s2s_ad -> objects
    src: frontend.Source
    deps: tuple = ()            # what it was compiled against (guards.Dep)
    guard: guards.Guard | None = None


def compile_adjoint(func, options: Options) -> Compiled:
    """Run the compiler stages.  In "pair" mode the text holds two defs,
    `<f>_fwd` and `<f>_bwd`.  Raises `S2SADError`s about the user's code;
    anything else escaping the stages is a bug: `InternalError`."""
    with _reported(func):
        return _stages(func, options)


@contextlib.contextmanager
def _reported(func, generated: str = ""):
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


def _stages(func, options: Options) -> Compiled:
    src = frontend.load(func)
    wrt = resolve_wrt(src, options.wrt)
    norm = normalize.normalize(src)
    output, aux = _output(norm, src, options)
    prims = primitives.classify(norm, src)
    facts = analysis.analyze(norm.tree.body[:-1], prims, wrt,
                             [n.id for n in gast.walk(output) if isinstance(n, gast.Name)],
                             spread=options.mode != "pair", shares=norm.shares,
                             heirs=norm.heirs)
    complex_check.check(norm.tree.body[:-1], facts.active, src, norm.locals)
    seed = norm.namer.fresh_parameter("seed") if options.mode == "vjp" else None
    request = reverse.Request(wrt, options.mode, options.has_aux, seed,
                              single=not isinstance(options.wrt, tuple),
                              pairs=functools.partial(_pair_for, optimize=options.optimize))
    adj = reverse.reverse(norm, src, prims, facts, request, output, aux)
    trees = _finish(adj, norm, src, wrt, options)
    guard = guards.guard(trees[0], src, norm.locals | set(parameters(src)), adj.imports,
                         norm.namer, in_body=options.mode != "pair")
    imports, deps = dict(adj.imports), ()
    if guard is not None:
        trees[0].body[:0] = guard.statements
        imports.update(guard.imports)
        deps = guard.deps
    return Compiled("\n".join(codegen.to_source(t) for t in trees), imports, src, deps, guard)


def _finish(adj, norm, src, wrt, options: Options) -> list:
    """Optimize, split a pair, free dead locals; no block left empty."""
    pure = _pure_call_test(src, norm, adj.imports)
    if options.optimize:
        optimizer.optimize(adj.tree, norm.locals | set(wrt), pure)
    trees = [adj.tree]
    if options.mode == "pair":
        trees = pairs.split_pair(adj.tree, adj.pair_names, adj.seed_param)
    for tree in trees:
        if options.optimize:
            release.release(tree, adj.scalars)
        optimizer.tidy_blocks(tree, pure)
    return trees


_building: list = []      # (callee, variant) pairs being compiled, innermost last


def _pair_for(callee, variant: tuple, location, optimize: bool = True) -> reverse.PairRef:
    """The adjoint pair of `callee` with the parameters `variant` varied."""
    name = callee.__name__
    if (callee, variant) in _building:
        if _building[-1] != (callee, variant):
            raise UnsupportedSyntaxError(
                f"s2s_ad cannot differentiate through the mutual recursion of "
                f"{_building[-1][0].__qualname__} and {callee.__qualname__}", location,
                hint="register a rule for one of them with s2s_ad.adjoint, or "
                     "merge them into one recursive function")
        return reverse.PairRef(None, None)     # the pair calls its own defs
    options = Options("pair", variant, False, optimize)
    _building.append((callee, variant))
    try:
        fwd, bwd = derive(callee, options)
    except InternalError:
        raise               # a bug in s2s_ad, not a missing rule
    except SourceUnavailableError as exc:
        raise NoRuleError(
            f"no derivative rule for {callee.__qualname__}, and its source is "
            f"unavailable ({exc.message})", location,
            hint=f"register a rule with @s2s_ad.adjoint({name}), or wrap the call "
                 "in stop_gradient(...)") from None
    except S2SADError as exc:
        if not frontend.is_library(callee):
            raise           # the user's own helper: point into it
        raise NoRuleError(
            f"no derivative rule for {callee.__module__}.{callee.__qualname__}, and "
            f"s2s_ad cannot differentiate its source ({exc.one_line()})", location,
            hint=f"register a rule with @s2s_ad.adjoint({callee.__module__}."
                 f"{callee.__qualname__}), or wrap the call in stop_gradient(...)") from None
    finally:
        _building.pop()
    return reverse.PairRef(fwd.__name__, bwd.__name__, (fwd, bwd))


def parameters(src: frontend.Source) -> list[str]:
    args = src.tree.args
    star = [args.vararg] if args.vararg else []
    return [a.id for a in args.posonlyargs + args.args + star + args.kwonlyargs]


def resolve_wrt(src: frontend.Source, wrt) -> list[str]:
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
    if isinstance(value, gast.Tuple) and options.mode != "pair":
        raise NonScalarOutputError(
            f"{src.name!r} returns a tuple; {options.mode} needs one output",
            src.locate(ret),
            hint="return a single value, or use has_aux=True for `return value, aux`")
    _check_number(value, ret, src, options)
    return value, None


def _check_number(value, ret, src, options: Options) -> None:
    """A returned literal that is no number (`None`, a string) has no
    gradient: refuse it rather than return zeros."""
    if options.mode == "pair" or value is None or not isinstance(value, gast.Constant) \
            or isinstance(value.value, (int, float)):
        return
    what = "None (or nothing)" if value.value is None else \
        f"a {type(value.value).__name__} ({value.value!r})"
    raise NonScalarOutputError(
        f"{src.name!r} returns {what}; {options.mode} needs a real number to "
        "differentiate", src.locate(ret),
        hint="return the scalar value to differentiate (vjp: the array), "
             "e.g. `return loss`")


def _closure_cells(func) -> dict:
    if not func.__closure__:
        return {}
    return dict(zip(func.__code__.co_freevars, func.__closure__))


def _pure_call_test(src, norm, imports: dict):
    """Calls the optimizer may delete when their result is unused."""
    def is_pure(call: gast.Call) -> bool:
        path = astutil.dotted_name(call.func)
        if path is None:
            return False
        head = path.split(".")[0]
        if head in imports:
            obj = imports[head]
        else:
            obj = src.resolve(astutil.name(head), norm.locals)
        if _hashable_obj(obj) and obj in _PURE_BUILTINS:
            return True
        if obj is runtime:      # except the helpers that write into their argument
            return getattr(runtime, path.split(".")[-1], None) not in runtime.MUTATORS
        if obj is math:
            return True
        return obj is np and not path.startswith(head + ".random")
    return is_pure


def _hashable_obj(obj) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False
