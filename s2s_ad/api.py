"""The public transforms: what the user calls.

`grad`, `value_and_grad`, `vjp` and `jvp` differ only in the `Options`
they pass to `driver.derive`, which answers from the cache or compiles
(driver.py: the stages of pipeline.py, and first, through an explicit work
list, the adjoint pairs of the helpers the function calls).  Here the
request is checked where the user wrote it (`wrt`), and a bound method, a
`functools.partial` or a callable object is differentiated through the
function it calls.  `source` shows a derived function's generated code;
`stages` shows every stage's output; the CLI prints what the same stages
make.

Invariants: a derived function is an ordinary Python function with the
primal's parameters (plus `seed` for `vjp`); no wrapper sits between the
caller and the generated code (its staleness guard, if any, is its own
first statement: guards.py).  An exception from inside the stages that is
not an `S2SADError` about the user's code is reported as `InternalError`,
located at the user's function.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from typing import Any, Callable, Tuple, Union

from . import codegen, frontend, sourcelines
from .driver import compile_adjoint, derive
from .errors import S2SADError, WrtError, caller_location
from .pipeline import Options


#: what `wrt` accepts: a parameter's index or name, or a tuple of them
Wrt = Union[int, str, Tuple[Union[int, str], ...]]
#: a derived function (or, called without `func`, a decorator making one)
Derived = Callable[..., Any]


def grad(func: Callable[..., Any] | None = None, *, wrt: Wrt = 0, has_aux: bool = False,
         optimize: bool = True, disk_cache: bool = True) -> Derived:
    """The gradient of a scalar-valued `func` with respect to `wrt`.

    `wrt` is a parameter index or name, or a tuple of them (then the result
    is a tuple of gradients).  Each gradient has its argument's type, shape
    and dtype.  With `has_aux=True`, `func` returns `(value, aux)` and the
    derived function returns `(gradients, aux)`.  `disk_cache=False`: do
    not read or write the on-disk cache of generated code (diskcache.py).
    """
    return _transform(func, Options("grad", _hashable(wrt), has_aux, optimize, disk_cache))


def value_and_grad(func: Callable[..., Any] | None = None, *, wrt: Wrt = 0,
                   has_aux: bool = False, optimize: bool = True,
                   disk_cache: bool = True) -> Derived:
    """Like `grad`, returning `(value, gradients)` from one primal evaluation.

    With `has_aux=True` it returns `((value, aux), gradients)`.
    """
    return _transform(func, Options("value_and_grad", _hashable(wrt), has_aux, optimize,
                                    disk_cache))


def vjp(func: Callable[..., Any] | None = None, *, wrt: Wrt = 0,
        optimize: bool = True, disk_cache: bool = True) -> Derived:
    """Vector-Jacobian product: the derived function takes `func`'s arguments
    and then `seed`, the cotangent of the output (same shape as the output),
    and returns `seed`-weighted gradients shaped as `grad` returns them.

    `seed` is positional after the parameters, or keyword-only when `func`
    has parameters with default values.
    """
    return _transform(func, Options("vjp", _hashable(wrt), False, optimize, disk_cache))


def jvp(func: Callable[..., Any] | None = None, *, wrt: Wrt = 0, has_aux: bool = False,
        optimize: bool = True, disk_cache: bool = True) -> Derived:
    """Jacobian-vector product (forward mode), as JAX's `jvp`: the derived
    function takes `func`'s arguments, then one tangent per `wrt` entry
    (each with its argument's structure and shape), and returns
    `(value, tangent)`: `func`'s output and its directional derivative, the
    output's structure and shape.  With `has_aux=True`, `func` returns
    `(value, aux)` and the derived function `(value, tangent, aux)`.

    The tangents are positional after the parameters, or keyword-only
    (named `t<param>`: `tx` for `x`) when `func` has parameters with
    default values, `*args` or keyword-only parameters.
    """
    return _transform(func, Options("jvp", _hashable(wrt), has_aux, optimize, disk_cache))


def source(derived: Callable[..., Any]) -> str:
    """The generated Python source of a function made by s2s_ad."""
    if not getattr(derived, "__s2s_ad_primal__", None):
        raise S2SADError(f"{derived!r} was not made by s2s_ad",
                         hint="pass the result of s2s_ad.grad / value_and_grad / vjp / jvp")
    fn = inspect.unwrap(derived)
    sourcelines.reinstate_lines(fn.__code__.co_filename)    # (for tracebacks and pdb)
    text = getattr(fn, codegen.SOURCE, None)
    return inspect.getsource(derived) if text is None else text


def stages(func: Callable[..., Any], *, wrt: Wrt = 0, mode: str = "grad",
           has_aux: bool = False, optimize: bool = True) -> dict[str, str]:
    """Every stage's output for `func`, in order: {stage name: printed text}
    (`pipeline.STAGES` says what each is; the code stages are valid Python).
    The same compile as `grad` and friends (`mode` is one of theirs), so the
    last, "final", is the text `source()` shows."""
    if mode not in ("grad", "value_and_grad", "vjp", "jvp"):
        raise S2SADError(f"mode={mode!r} is not a transform s2s_ad has",
                         hint='use "grad", "value_and_grad", "vjp" or "jvp"')
    out: dict = {}
    compile_adjoint(func, Options(mode, _hashable(wrt), has_aux, optimize),
                    lambda stage, render: out.setdefault(stage, render()))
    return out


def _hashable(wrt):
    """`wrt` as a cache key: a list becomes a tuple; anything but an index,
    a name or a tuple of them (a set, a float) is refused here, where the
    user wrote it, before it could fail to hash."""
    wrt = tuple(wrt) if isinstance(wrt, list) else wrt
    for item in wrt if isinstance(wrt, tuple) else (wrt,):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt={wrt!r}: {item!r} is neither a parameter index nor a name",
                           caller_location(),
                           hint="pass an index or a name, or a tuple of them: wrt=(0, 'y')")
    return wrt


def _transform(func, options: Options):
    if func is None:
        return functools.partial(_transform, options=options)
    if isinstance(func, types.MethodType):          # obj.loss: differentiate loss
        inner = _transform(func.__func__, _shift_wrt(options, 1))
        return types.MethodType(inner, func.__self__)
    if isinstance(func, functools.partial):         # partial(f, a, b=...)
        inner = _transform(func.func, _shift_wrt(options, len(func.args)))
        return functools.partial(inner, *func.args, **func.keywords)
    if frontend.is_callable_object(func):           # obj(x): obj's class's __call__
        return _transform(types.MethodType(type(func).__call__, func), options)
    return derive(func, options)


def _shift_wrt(options: Options, bound: int) -> Options:
    """`wrt` of a function whose first `bound` parameters are already given."""
    def shift(w):
        return w + bound if isinstance(w, int) and w >= 0 else w
    wrt = tuple(shift(w) for w in options.wrt) if isinstance(options.wrt, tuple) \
        else shift(options.wrt)
    return dataclasses.replace(options, wrt=wrt)
