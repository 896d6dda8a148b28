"""Calls whose callee is found when the derived function runs.

A call of a *function value* -- a parameter (`f(y, theta)` in a generic
RK4 step), a loop variable over functions, a function another function
returned, a default argument `act=np.tanh`, a callable object, a bound
method -- names no function where its caller is compiled.  The derived
function calls it through a `CallSite`, which finds the callee's adjoint
pair when the call runs:

    k1, f_saved = f_call(f, y, theta)        # forward: the value, and what to keep
    grads = f_call.backward(f_saved, dk1)    # reverse: one gradient per varied argument

The site unwraps the value (a bound method is its function called with
`__self__` first, a callable object its class's `__call__` with the object
first, a `functools.partial` its function with the bound arguments), then
differentiates a one-line wrapper, `def call_tanh(a0): return fn(a0)` with
`fn` bound to what is called, as an ordinary adjoint pair.  So rules, user
functions, closures and non-differentiable functions work exactly as in a
static call, and every error is the compiler's, located at the user's call.
Wrappers are cached per callee (weakly where it allows) and call shape;
their pairs live in the ordinary cache, checked for staleness at each call.

A varied `*args` (the last positional argument of a function value's call,
`f(t, y, *args)` as SciPy's integrators call a vector field) is spread when
the call runs: its items that may carry a gradient are varied one by one,
and its gradient is a tuple, item by item; a `**kwargs` (`StarStar`) the
same way, its gradient a dict.

A site made with a known `callee` (helpers that call each other, whose
pairs cannot all be compiled before their callers) calls that callee's pair
directly, with the arguments as written.

A function value that carries a gradient itself (`CALLEE` among the varied
entries: a nested function made from differentiated values) is varied in
what it captured: `rt.bind` made it a `Bound` partial whose keywords the
wrapper takes as parameters, and the site's gradient for it is a `Tree`
from each name to its gradient (its tangent likewise in forward mode).

Invariant: a site never gives a zero gradient for what a function value
holds: any other value carrying a gradient (a closure made elsewhere, a
partial, a bound method, a callable object) is refused when it is called.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import keyword
import linecache
import types
import weakref
from typing import Callable

import numpy as np

from . import effects
from .errors import S2SADError, UnsupportedSyntaxError
from .frontend import is_callable_object
from .ir import CALLEE, Star, StarStar
from .runtime import Bound, Seq, Tree, zero_tangent
from .sourcelines import hold_lines

_WRAPPERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_STRONG: dict = {}                  # callees without weak references (ufuncs, builtins)


class CallSite:
    """One call in a derived function whose adjoint pair (in forward mode:
    tangent function, `tangent`) is found at run time.

    `varied`: the positions and keyword names of the arguments that carry a
    gradient (with a known `callee`: its parameter names); `where`: the
    user's call; `pair_of(function, variant)`: the driver's compiled pair."""

    def __init__(self, callee, varied: tuple, where, pair_of: Callable):
        self.callee, self.varied, self.where = callee, varied, where
        self._pair_of = pair_of

    def __call__(self, *args, **kwargs):
        layout = None
        if self.callee is not None:
            fwd, bwd = self._pair(self.callee, self.varied)
        else:
            captured = self._captured(args[0])
            fn, args, kwargs, shift = unwrap(args[0], args[1:], kwargs)
            _refuse_updates(fn, args, kwargs, self.where)
            wrapper, positional = _wrapper(fn, len(args), tuple(kwargs), self.where)
            variant, layout = self._variant(args, kwargs, positional, shift, captured)
            if not variant:     # (nothing given may carry one: a zero gradient)
                return fn(*args, **kwargs), (_no_gradients, None, layout)
            fwd, bwd = self._pair(wrapper, variant)
        value, saved = fwd(*args, **kwargs)
        return value, (bwd, saved, layout)

    def tangent(self, *args, **kwargs):
        """Forward mode: `(value, tangent)` of the call, from its tangent
        function; `args[0]` is the tuple of the varied arguments' tangents
        (in the order of `varied`: a `*args`'s a tuple of its items', a
        `**kwargs`'s a dict), then (for a function value) the value called,
        then the arguments."""
        tangents, args = args[0], args[1:]
        if self.callee is not None:
            return self._pair(self.callee, self.varied)(tangents, *args, **kwargs)
        captured = self._captured(args[0])
        fn, args, kwargs, shift = unwrap(args[0], args[1:], kwargs)
        _refuse_updates(fn, args, kwargs, self.where)
        wrapper, positional = _wrapper(fn, len(args), tuple(kwargs), self.where)
        variant, layout = self._variant(args, kwargs, positional, shift, captured)
        if not variant:
            value = fn(*args, **kwargs)
            return value, zero_tangent(value)
        flat = [0.0] * len(variant)
        for entry, tangent in zip(layout, tangents):
            if isinstance(entry, list):
                for item, j in zip(tangent, entry):
                    if j is not None:
                        flat[j] = item
            elif isinstance(entry, dict):       # (a function value's zero: no names)
                for k, j in entry.items():
                    if j is not None:
                        flat[j] = tangent[k] if isinstance(tangent, dict) and k in tangent \
                            else zero_tangent(kwargs[k])
            else:
                flat[entry] = tangent
        return self._pair(wrapper, variant)(tuple(flat), *args, **kwargs)

    def _captured(self, callee) -> tuple:
        """The names of the values a function value called with a gradient
        (`CALLEE` varied) captured: a nested function's, made by `rt.bind`
        (none if not varied, or of a function that captures nothing); any
        other value that may hold one (a closure made elsewhere, a
        partial, a bound method, a callable object) is refused."""
        if CALLEE not in self.varied or _captures_nothing(callee):
            return ()
        if isinstance(callee, Bound):
            return tuple(callee.keywords)
        raise UnsupportedSyntaxError(
            f"the function called here is a {type(callee).__name__} that may hold "
            "values depending on the inputs being differentiated; s2s_ad "
            "differentiates what a nested function (a `def` or lambda) of the "
            "differentiated code captures, not a closure made elsewhere, a "
            "`functools.partial`, a bound method or a callable object", self.where,
            hint="pass the differentiated values to the function as arguments")

    def _variant(self, args: tuple, kwargs: dict, positional: list, shift: int,
                 captured: tuple = ()) -> tuple:
        """(the wrapper's varied parameters, where each entry of `varied`
        finds its gradient among theirs): the items of a varied `*args`
        (`Star`) that may carry a gradient are varied one by one, as are
        the values the function value captured (`CALLEE`, by name)."""
        variant, layout = [], []
        for v in self.varied:
            if v is CALLEE:
                items = {}
                for k in captured:
                    items[k] = len(variant) if _may_carry(kwargs[k]) else None
                    if items[k] is not None:
                        variant.append(k)
                layout.append(items)
            elif isinstance(v, StarStar):
                items = {}
                for k in (k for k in kwargs if k not in v.written):
                    items[k] = len(variant) if _may_carry(kwargs[k]) else None
                    if items[k] is not None:
                        variant.append(k)
                layout.append(items)
            elif isinstance(v, Star):
                items = []
                for p in range(v.index + shift, len(args)):
                    items.append(len(variant) if _may_carry(args[p]) else None)
                    if items[-1] is not None:
                        variant.append(positional[p])
                layout.append(items)
            else:
                layout.append(len(variant))
                variant.append(positional[v + shift] if isinstance(v, int) else v)
        return tuple(variant), layout

    @staticmethod
    def backward(saved, d_value) -> tuple:
        """The gradients of the varied arguments, in the order of `varied`
        (a `*args`'s: a tuple, zero for an item that carries none)."""
        bwd, inner, layout = saved
        grads = bwd(inner, d_value)
        if layout is None:
            return grads
        return tuple(Seq(0.0 if j is None else grads[j] for j in i) if isinstance(i, list)
                     else Tree({k: 0.0 if j is None else grads[j] for k, j in i.items()})
                     if isinstance(i, dict) else grads[i] for i in layout)

    def _pair(self, func, variant: tuple) -> tuple:
        """The compiled pair; an error about the wrapper is told at the call."""
        try:
            return self._pair_of(func, variant)
        except S2SADError as exc:
            if exc.location is None or not exc.location.filename.startswith(_PREFIX):
                raise
            raise type(exc)(exc.message, self.where, exc.hint) from None


def _refuse_updates(fn, args: tuple, kwargs: dict, where) -> None:
    """A function of the user's, called as a value, that updates an array,
    list or dict it is given in place (`v[0] = e`, `v *= 2`): the caller's
    value would change, which the wrapper's pair, working on a copy, does
    not give back (fuzz-found: a wrong gradient where the caller read the
    argument again).  Refused, located at the call."""
    if not isinstance(fn, types.FunctionType):
        return
    updated = frozenset().union(*effects.mutated_parameters(fn))
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs) if updated else None
    except TypeError:
        return                  # (the call raises, as Python's would)
    for name in sorted(updated):
        value = bound.arguments.get(name)
        if isinstance(value, (np.ndarray, list, dict)):     # (a number is rebound)
            raise UnsupportedSyntaxError(
                f"{fn.__qualname__}, called here as a function value, updates its "
                f"parameter {name} in place, so this call changes its caller's "
                f"{type(value).__name__}; s2s_ad does not differentiate through a "
                "function value that mutates its argument", where,
                hint=f"return the new value from {fn.__name__} and assign it at the "
                     "call, or pass a copy")


def _no_gradients(saved, d_value) -> tuple:
    """The backward of a call given nothing that may carry a gradient."""
    return ()


def _captures_nothing(callee) -> bool:
    """A function holding no value of its own: a plain function with no
    closure, a builtin, a ufunc, a class."""
    if isinstance(callee, types.FunctionType):
        return not callee.__closure__
    return isinstance(callee, (types.BuiltinFunctionType, np.ufunc, type))


def _may_carry(value) -> bool:
    """Whether an argument may carry a gradient: a float, an inexact array,
    a container, a nested function holding values (`rt.bind`; not an int, a
    bool, a string or any other object)."""
    if isinstance(value, (bool, int, str, bytes)) or value is None:
        return False
    if isinstance(value, Bound):
        return bool(value.keywords)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    return isinstance(value, (float, complex, np.inexact, list, tuple, dict))


def unwrap(callee, args: tuple, kwargs: dict) -> tuple:
    """(function, arguments, keywords, how many arguments were put first) for
    a call of `callee`: what runs when a method, callable object or partial
    is called."""
    shift = 0
    while True:
        if isinstance(callee, types.MethodType):
            callee, args, shift = callee.__func__, (callee.__self__, *args), shift + 1
        elif isinstance(callee, functools.partial):
            if isinstance(callee, Bound):
                callee.check_keywords(kwargs)
            args, shift = (*callee.args, *args), shift + len(callee.args)
            callee, kwargs = callee.func, {**callee.keywords, **kwargs}
        elif is_callable_object(callee):
            callee, args, shift = type(callee).__call__, (callee, *args), shift + 1
        else:
            return callee, args, kwargs, shift


_PREFIX = "<s2s_ad call of "
_COUNT = itertools.count()


def _wrapper(fn, nargs: int, keywords: tuple, where) -> tuple:
    """(wrapper function, its positional parameter names) calling `fn`."""
    try:
        table = _WRAPPERS.setdefault(fn, {})
    except TypeError:
        try:
            table = _STRONG.setdefault(fn, {})
        except TypeError:       # unhashable: made anew for each call
            table = {}
    key = (nargs, keywords)
    if key not in table:
        table[key] = _make_wrapper(fn, nargs, keywords, where)
    return table[key]


def _make_wrapper(fn, nargs: int, keywords: tuple, where) -> tuple:
    """`def call_<name>(a0, ..., *, k): return fn(a0, ..., k=k)`, in a module
    of its own where `fn` is the callee, its text kept in `linecache`."""
    if not callable(fn):
        raise UnsupportedSyntaxError(
            f"the value called here is a {type(fn).__name__}, not a function", where,
            hint="call a function, a method or an object with a __call__ method")
    taken = set(keywords)
    stem = "".join(c if c.isalnum() else "_" for c in getattr(fn, "__name__", "value"))
    stem = stem if stem.isidentifier() and not keyword.iskeyword(stem) else "fn"
    callee = _fresh(stem, taken)        # named as the user's code names it
    positional = [_fresh(f"a{i}", taken) for i in range(nargs)]
    name = f"call_{stem}"
    params = ", ".join(positional + (["*"] + list(keywords) if keywords else []))
    passed = ", ".join(positional + [f"{k}={k}" for k in keywords])
    text = f"def {name}({params}):\n    return {callee}({passed})\n"
    filename = f"{_PREFIX}{getattr(fn, '__qualname__', name)} #{next(_COUNT)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {callee: fn, "__name__": getattr(fn, "__module__", None) or __name__}
    exec(compile(text, filename, "exec"), namespace)
    wrapper = namespace[name]
    hold_lines(filename, text, wrapper)
    return wrapper, positional


def _fresh(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name
