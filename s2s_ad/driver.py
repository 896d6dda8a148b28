"""The compile driver: from a function and its `Options` to the live
derived function (or a helper's adjoint pair, or tangent function).

`derive` answers from the in-memory cache (cache.py), else builds under
the cache's lock: `_build` loads the artifact from the on-disk cache
(diskcache.py) or compiles it, writes it there, and `_link` compiles its
text into functions.  `compile_adjoint` runs `pipeline.front` for the
function, compiles the pairs of the helpers it calls (`Front.needs`), then
runs `pipeline.back`, which finds each callee's pair through `_pair_ref`.

Invariants:
- The call graph is walked by an explicit work list, a stack of
  `pipeline.Front`s, depth-first: a helper's `pipeline.back` runs only
  once every pair it needs is compiled, cached or loaded; the compile
  uses no Python recursion in proportion to call depth.  A pair is looked
  for among those this work list compiled, in the in-memory cache and on
  disk before its helper is pushed, and cached as soon as it is compiled.
- A helper calling itself (the same function, with the same variant: its
  `wrt`) is found by `_is_self` and calls its own pair's defs.  A call of
  a helper whose pair is being compiled lower on the stack (helpers that
  call each other, found by `_compiling`) is deferred, as is a call of a
  function value: it gets a `dispatch.CallSite`, which finds the pair
  through `derive` when the call runs.
- Loading from disk is not on the work list: a loaded artifact's recipes
  find the pairs it calls through `derive` (recipes.py).
- The cyclic garbage collector is off while any compile runs, in any
  thread (`_collection_paused`).
- A helper that cannot be differentiated is refused at the caller's call
  when it is a library's or has no source (`NoRuleError`), inside it when
  it is the user's own; a call of one of s2s_ad's runtime helpers (derived
  code differentiated again) is refused at the user's function.
- Imports go one way: api.py imports this module, which imports the
  pipeline, the caches and the IR, and nothing that imports it.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import threading

from . import (cache, codegen, diskcache, dispatch, frontend, guards, pipeline, recipes,
               rederive, reverse)
from .errors import (InternalError, NoRuleError, S2SADError, SourceUnavailableError,
                     again, location_of)
from .pipeline import Compiled, Options
from .rules import registry
from .runtime.origins import origins as generated_origins


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
    rebound since it was compiled (see rederive.Rederive)."""
    cache.discard(func, options, stale)
    fresh = derive(func, options)
    if cache.lookup(func, options, registry.version()) is not fresh:
        raise InternalError(
            f"internal error: the names {func.__qualname__!r} resolves keep changing "
            "while s2s_ad compiles it", location_of(func))
    return fresh


def _build(func, options: Options, fr: pipeline.Front | None = None, done=None):
    """(derived function or pair, its `stale()` check or None), from the
    disk cache or compiled (and then written to it); `fr`: its first half,
    when the work list has run it and compiled its callees' pairs (`done`)."""
    context, where = _recipe_context(func, options), diskcache.entry(func, options)
    art = diskcache.load(where, context) if fr is None else None
    with _collection_paused():
        if art is None:
            out = compile_adjoint(func, options) if fr is None else \
                pipeline.back(fr, functools.partial(_pair_ref, fr, done))
            hidden = codegen.to_source(out.guard.checker) \
                if out.guard is not None and out.guard.checker is not None else ""
            art = diskcache.Artifact(out.text, hidden, out.imports, out.deps,
                                     guards.first_expected(out.guard),
                                     out.guard.rederive if out.guard is not None else None)
            diskcache.store(where, art, context)
        return _link(func, options, art)


def _link(func, options: Options, art: diskcache.Artifact):
    """Compile `art`'s text into live functions reading its imports."""
    imports, thunk = dict(art.imports), None
    primal = rederive.Revivable.of(func, keep=hasattr(func, guards.PRIMAL))
    if art.rederive:
        thunk = imports[art.rederive] = rederive.Rederive(primal, options, _rederive)
    with pipeline.reported(func, art.text):
        fns = codegen.compile_functions(
            art.text, f"{func.__qualname__}.<{options.mode}>", func.__globals__, imports,
            _closure_cells(frontend.read_as(func)), func, art.hidden)
    stale = fns.pop() if art.hidden else guards.changed(art.deps) if art.deps else None
    guards.install(art.was, fns[0], thunk)
    pure = dataclasses.replace(options, owned=False)
    for i, fn in enumerate(fns):
        setattr(fn, guards.PRIMAL, primal)      # weakly: the cache is keyed on func
        setattr(fn, guards.OPTIONS, options)
        if options.owned:           # differentiated again: through code updating nothing
            setattr(fn, frontend.PURE, functools.partial(_pure, primal, pure, i))
        fn.__doc__ = f"{options.mode} of {func.__qualname__} generated by s2s_ad"
        setattr(fn, guards.DEPS, art.deps)
    return (tuple(fns) if options.mode == "pair" else fns[0]), stale


def _pure(primal, options: Options, i: int):
    """The derived function (the `i`-th of a pair) of `primal()` with
    `options`, which say: no adjoint updated in place (see frontend.PURE).
    `primal` is a `Revivable`: `grad(grad(lambda x: ...))` reads it after
    the lambda is gone."""
    made = derive(primal(), options)
    return made[i] if isinstance(made, tuple) else made


def _recipe_context(func, options: Options) -> recipes.Context:
    """How recipes of `func`'s artifact find callees' pairs (see recipes.py)."""
    def derived(primal, fields):
        return derive(primal, Options(*fields))
    return recipes.Context(func, derived, _site_pairs(options))


def _site_pairs(options: Options):
    """A `dispatch.CallSite`'s way to the pair of the function it calls."""
    mode = "jvp_pair" if options.mode in pipeline.FORWARD_MODES else "pair"

    def pair_of(func, variant, optimize=options.optimize, disk=options.disk,
                owned=options.owned):
        return derive(func, Options(mode, variant, False, optimize, disk, owned))
    return pair_of


def compile_adjoint(func, options: Options, observe=pipeline.unobserved) -> Compiled:
    """Run the stages for `func`, after compiling (and caching) the adjoint
    pairs of the helpers it calls, and theirs, through an explicit work list
    over the call graph: depth-first, with no Python recursion per call
    level.  A helper calling itself uses its own pair's defs; a call between
    helpers that call each other gets a `dispatch.CallSite`, which finds the
    pair when the call runs.  `observe` sees `func`'s stages (`stages`)."""
    with _collection_paused():
        try:
            return _compile_all(func, options, observe)
        except InternalError:
            raise
        except S2SADError as exc:
            raise _told_at_the_user(exc) from None


def _told_at_the_user(exc: S2SADError) -> S2SADError:
    """`exc` as the user should read it: one located in code s2s_ad derived
    (differentiated again: second order), at the user's function that code
    came from, the generated line quoted; any other as it is."""
    where = exc.location
    user = generated_origins.first(lambda code: code.co_filename == where.filename) \
        if where is not None else None
    if user is None:
        return exc
    exc.message, exc.location = again(exc.message, where.source_line), user
    exc.args = (exc._render(),)
    return exc


def _compile_all(func, options: Options, observe) -> Compiled:
    root = pipeline.front(func, options, observe)
    done: dict = {}                     # (helper, options) -> its compiled pair
    late: set = set()                   # (helper, variant): pairs found at run time
    stack = [root]
    while stack:
        task = stack[-1]
        waiting = [(c, v, loc) for c, v, loc in task.needs
                   if not _is_self(task, c, v) and (c, v) not in late
                   and _pair_of(done, c, v, options) is None]
        if waiting:
            callee, variant, location = waiting[0]
            if _compiling(stack, callee, variant):      # helpers calling each other
                late.add((callee, variant))
            else:
                stack.append(_callee_front(callee, _pair(variant, options), location,
                                           stack))
            continue
        stack.pop()
        if task is not root:
            done[task.func, task.options] = _built(task, done, stack)
    return pipeline.back(root, functools.partial(_pair_ref, root, done), observe)


def _built(task: pipeline.Front, done: dict, stack: list):
    """The compiled pair of helper `task` (its callees' are in `done`); a
    runtime helper's that fails refused as `_unruled_helper` tells it."""
    try:
        return cache.get_or_build(task.func, task.options, registry.version(),
                                  lambda: _build(task.func, task.options, task, done))
    except InternalError:
        raise
    except S2SADError:
        if not _is_runtime(task.func):
            raise
        raise _unruled_helper(task.func, None, stack + [task]) from None


_PAUSE = threading.Lock()
_paused = [0, False]        # compiles under way, whether the collector was enabled


@contextlib.contextmanager
def _collection_paused():
    """The cyclic garbage collector off while compiles run (in any thread),
    as it was after: a compile allocates hundreds of thousands of tree
    nodes that live until it ends, so each full collection re-scans them
    all (a fifth of a 1,000-statement compile), and frees almost nothing:
    the trees hold no cycles, reference counting frees them."""
    with _PAUSE:
        if _paused[0] == 0:
            _paused[1] = gc.isenabled()
            gc.disable()
        _paused[0] += 1
    try:
        yield
    finally:
        with _PAUSE:
            _paused[0] -= 1
            if _paused[0] == 0 and _paused[1]:
                gc.enable()


def _pair(variant: tuple, options: Options) -> Options:
    """What a caller compiled with `options` calls for a helper: its adjoint
    pair, or in forward mode its tangent function."""
    mode = "jvp_pair" if options.mode in pipeline.FORWARD_MODES else "pair"
    return Options(mode, variant, False, options.optimize, options.disk, options.owned)


def _pair_of(done: dict, callee, variant: tuple, options: Options):
    """The compiled pair of `callee`, if compiled here, cached, or on disk,
    else None."""
    key = _pair(variant, options)
    hit = done.get((callee, key)) or cache.lookup(callee, key, registry.version())
    if hit is None:
        art = diskcache.load(diskcache.entry(callee, key), _recipe_context(callee, key))
        if art is not None:
            hit = done[callee, key] = cache.get_or_build(
                callee, key, registry.version(), lambda: _link(callee, key, art))
    return hit


def _is_self(task: pipeline.Front, callee, variant) -> bool:
    return task.options.mode in _CALLEE_MODES and callee is task.func and \
        variant == task.options.wrt


def _compiling(stack: list, callee, variant) -> bool:
    """Whether the pair of `callee` is being compiled below: the helpers
    call each other, so the caller finds it when the call runs."""
    return any(task.options.mode in _CALLEE_MODES and task.func is callee
               and task.options.wrt == variant for task in stack)


_CALLEE_MODES = ("pair", "jvp_pair")


def _pair_ref(task: pipeline.Front, done: dict, callee, variant: tuple,
              location) -> reverse.PairRef:
    """The adjoint pair of `callee` (the work list compiled it first), or a
    call site that finds it when the call runs: for a function value
    (`callee` None), and for helpers that call each other."""
    if _is_self(task, callee, variant):
        return reverse.PairRef(None, None)     # the pair calls its own defs
    pair = _pair_of(done, callee, variant, task.options) if callee is not None else None
    if pair is None:
        return reverse.PairRef(None, None, site=dispatch.CallSite(
            callee, variant, location, _site_pairs(task.options)))
    if not isinstance(pair, tuple):         # a tangent function
        return reverse.PairRef(pair.__name__, None, (pair,))
    fwd, bwd = pair
    return reverse.PairRef(fwd.__name__, bwd.__name__, (fwd, bwd))


_RUNTIME = "s2s_ad.runtime"     # the helpers generated code calls (`rt`)


def _unruled_helper(callee, location, stack: list) -> NoRuleError:
    """The refusal of a call of runtime helper `callee` in derived code (it
    has no rule and its source is not differentiable), told as that of the
    outermost helper being compiled from source on `stack` (the one the
    derived code calls), located at the user's function the code was
    derived from where codegen noted one, the generated line quoted."""
    caller = stack[-1].func if stack else None
    for below, task in zip(stack, stack[1:]):
        if _is_runtime(task.func):
            callee, caller = task.func, below.func
            location = next((loc for c, _, loc in below.needs if c is callee), location)
            break
    user = generated_origins.get(getattr(caller, "__code__", None))
    line = location.source_line.strip() if location is not None else ""
    return NoRuleError(
        f"s2s_ad cannot differentiate this derivative again: its code calls "
        f"rt.{callee.__name__} (`{line}`), which has no derivative rule yet",
        user or location,
        hint="differentiate this part once only, or wrap what it computes in "
             "stop_gradient(...)")


def _is_runtime(func) -> bool:
    return (getattr(func, "__module__", None) or "").startswith(_RUNTIME)


def _callee_front(callee, options: Options, location, stack=()) -> pipeline.Front:
    """The first half of the stages for a helper, its errors told as the
    caller's where the helper is a library's or has no source.  A helper of
    s2s_ad's runtime whose source cannot be differentiated (it has no rule:
    rules/adjoint_helpers.py) is refused at the user's function: its source
    is no place to send the user."""
    name = callee.__name__
    if callee.__qualname__.startswith(dispatch.CallSite.__qualname__ + ".") and \
            callee.__module__ == dispatch.__name__:
        raise NoRuleError(     # (in derived code: _told_at_the_user says it is again)
            "its code calls a function passed as a value (a parameter, an item, a "
            "function returned): which function it is, and so its derivative, is "
            "found only when the call runs", location,
            hint="call the function by its name here, or differentiate this part "
                 "once only")
    try:
        return pipeline.front(callee, options)
    except InternalError:
        raise               # a bug in s2s_ad, not a missing rule
    except SourceUnavailableError as exc:
        raise NoRuleError(
            f"no derivative rule for {callee.__qualname__}, and its source is "
            f"unavailable ({exc.message})", location,
            hint=f"register a rule with @s2s_ad.adjoint({name}), or wrap the call "
                 "in stop_gradient(...)") from None
    except S2SADError as exc:
        if _is_runtime(callee):
            raise _unruled_helper(callee, location, list(stack)) from None
        if not frontend.is_library(callee):
            raise           # the user's own helper: point into it
        what = registry.display_name(callee)        # np.kaiser, not numpy.kaiser
        raise NoRuleError(
            f"no derivative rule for {what}, and "
            f"s2s_ad cannot differentiate its source ({exc.one_line()})", location,
            hint=f"wrap the call in s2s_ad.stop_gradient(...) if no gradient should "
                 f"flow through it, or register a rule with @s2s_ad.adjoint({what})") from None


def _closure_cells(func) -> dict:
    if not func.__closure__:
        return {}
    return dict(zip(func.__code__.co_freevars, func.__closure__))
