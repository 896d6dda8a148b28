"""The derived function's boundary: the output checked (`check_scalar`,
`check_seed`), and each gradient given its argument's type, shape and
dtype (`like`, item by item for a list, tuple or dict: the gradient is a
pytree), with the arguments s2s_ad cannot differentiate refused.
Imports NumPy, the errors, `origins`, `duck`, `zero` and `core` only.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import InputTypeError, NonScalarOutputError, SeedError, UnsupportedValueError
from .core import _ndarray, _rows, zeros_like
from .duck import duck_like, is_duck, is_real_scalar
from .origins import origin
from .zero import ZERO


def check_scalar(value, fname: str):
    """Raise `NonScalarOutputError` unless `value` is a real scalar (a
    number or a 0-d real array; not None, a string or a complex number)."""
    if type(value) is float:
        return value
    if isinstance(value, (float, int, np.floating, np.integer, np.bool_, numbers.Real)) or \
            type(value) is _ndarray and value.ndim == 0 and value.dtype.kind in "biuf" or \
            is_real_scalar(value):
        return value        # (a Fraction too: the gradient's boundary refuses it as wrt)
    hint = "return a real number; use s2s_ad.vjp for non-scalar outputs, or " \
           "reduce the output (e.g. np.sum) inside the function"
    if (isinstance(value, (np.ndarray, list, tuple)) or is_duck(value)) and np.ndim(value) > 0:
        what = f"a value of shape {np.shape(value)}"
    else:
        what = "None" if value is None else f"a {type(value).__name__}"
        if value is not None and not isinstance(value, (complex, np.ndarray, np.generic)):
            hint = (f"return a float; if it is a {type(value).__name__} because an argument "
                    "is one (a Decimal, a string, ...), pass a float instead: s2s_ad "
                    "differentiates floats and float arrays")
    raise NonScalarOutputError(
        f"grad of {fname!r}: the function returned {what}, but grad needs a "
        "real scalar output", origin(), hint=hint)


def check_seed(seed, value, fname: str):
    """Raise `SeedError` unless the vjp `seed` has the shape of the output
    `value` it weighs."""
    if np.shape(seed) != np.shape(value):
        raise SeedError(
            f"vjp of {fname!r}: the seed has shape {np.shape(seed)}, but the "
            f"function returned a value of shape {np.shape(value)}", origin(),
            hint="pass a seed shaped like the output (the cotangent of the value "
                 "the function returns)")
    return seed


def like(g, x, pname: str):
    """Give the gradient `g` the type, shape and dtype of the argument `x`
    (item by item for a list, tuple or dict: the gradient is a pytree);
    `ZERO`, a replaced list item's adjoint, is a zero of `x`'s shape."""
    if g is ZERO:
        g = zeros_like(x)
    if type(g) is float and type(x) is float:
        return g
    if type(g) is _ndarray and type(x) is _ndarray and g.dtype == x.dtype \
            and g.shape == x.shape and x.dtype.kind == "f":
        return g                                  # already right
    if isinstance(x, (list, tuple, dict)):
        return _like_tree(g, x, pname)
    _check_differentiable(x, pname)
    if is_duck(x):
        _check_float_array(x, pname)
        _check_real(g, x, pname)
        return duck_like(g, x)                      # (lazy for Dask)
    _check_real(g, x, pname)
    if isinstance(x, np.ndarray):
        _check_float_array(x, pname)
        if is_duck(g):              # a NumPy parameter of duck (Dask) data: lazy too
            return np.broadcast_to(g, x.shape).astype(x.dtype)
        out = np.empty(x.shape, dtype=x.dtype)
        out[...] = g
        return out
    if is_duck(g):      # a scalar's gradient from duck arrays: 0-d, of their type (lazy)
        return g.astype(x.dtype if isinstance(x, np.generic) else np.float64, copy=False)
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    return float(g)


def _check_differentiable(x, pname: str) -> None:
    """Refuse an argument that is not a float, a float array (NumPy's or a
    duck array) or a complex value (refused later, by `_check_real`)."""
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (int, np.integer)) and \
            not isinstance(x, float):
        raise InputTypeError(
            f"cannot differentiate with respect to {pname!r}: it is an "
            f"integer or boolean ({type(x).__name__}); s2s_ad never "
            "differentiates int or bool values", origin(),
            hint="pass a float (e.g. 3.0) or a float array")
    if not isinstance(x, (float, complex, np.ndarray, np.generic)) and not is_duck(x):
        raise InputTypeError(
            f"cannot differentiate with respect to {pname!r}: it is a "
            f"{type(x).__name__}; s2s_ad differentiates floats, float arrays, and "
            "lists, tuples and dicts of them", origin(),
            hint="pass the object's float values as arguments (or a dict of them), "
                 "or choose another `wrt`")


def _check_float_array(x, pname: str) -> None:
    if x.dtype.kind != "f":
        raise InputTypeError(
            f"cannot differentiate with respect to {pname!r}: its dtype "
            f"is {x.dtype}", origin(), hint="pass a float array, e.g. x.astype(float)")


def like_each(gs: tuple, xs: tuple, pnames: tuple) -> tuple:
    """`like` for several gradients: the tuple a `wrt=(...)` request returns."""
    return tuple(like(g, x, p) for g, x, p in zip(gs, xs, pnames))


def _check_real(g, x, pname: str) -> None:
    """Complex values are not differentiated yet: refuse a complex argument,
    and a gradient that came out complex (from a complex intermediate or
    seed), rather than drop its imaginary part."""
    if _is_complex(x):
        raise InputTypeError(
            f"cannot differentiate with respect to {pname!r}: it is complex "
            f"({type(x).__name__}); s2s_ad does not differentiate complex values yet",
            origin(), hint="differentiate with respect to the real and imaginary "
                            "parts as two float arguments")
    if _is_complex(g):
        raise UnsupportedValueError(
            f"the gradient with respect to {pname!r} came out complex: a complex "
            "value (an intermediate, or the seed) lies on the gradient's path, and "
            "s2s_ad does not differentiate complex values yet", origin(),
            hint="keep the differentiated computation real (e.g. |x + iy| as "
                 "np.hypot(x, y)), or wrap the complex part in stop_gradient(...)")


def _is_complex(v) -> bool:
    return isinstance(v, complex) or getattr(getattr(v, "dtype", None), "kind", "") == "c"


def _like_tree(g, x, pname):
    if isinstance(x, dict):
        return {k: like(_part(g, k), v, f"{pname}[{k!r}]") for k, v in x.items()}
    parts = g if isinstance(g, (list, tuple)) else _rows(g, len(x))   # array adjoint
    items = [like(parts[i], v, f"{pname}[{i}]") for i, v in enumerate(x)]
    return type(x)(items) if isinstance(x, list) or type(x) is tuple else type(x)(*items)


def _part(g, key):
    if isinstance(g, (list, tuple, dict)):
        return g[key]
    return 0.0          # a zero adjoint for the whole structure
