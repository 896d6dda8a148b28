"""Duck arrays: arrays of other libraries that implement NumPy's dispatch
protocols (`__array_function__`, `__array_ufunc__`), such as Dask and CuPy.

Generated code is plain `np.*` calls, which dispatch to such an array's own
library, so a gradient runs on it unchanged and stays of its type: a Dask
gradient is lazy until the user computes it.  The runtime must then never
turn a user's value into a NumPy array (`np.asarray`, `float()`, `np.size`
and `np.can_cast`, which Dask does not implement and so computes): the
helpers below are what the boundary and the adjoint helpers use instead.

Invariant: nothing here computes a duck array or reads its data; only its
type, shape and dtype (which Dask knows without computing).
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedValueError
from .origins import origin


def is_duck(x) -> bool:
    """Whether `x` is an array of another library that NumPy dispatches to
    (not an `np.ndarray`, a NumPy scalar, or an ndarray subclass)."""
    kind = type(x)
    return kind is not np.ndarray and hasattr(kind, "__array_function__") and \
        hasattr(kind, "__array_ufunc__") and not isinstance(x, (np.ndarray, np.generic)) \
        and hasattr(x, "shape") and hasattr(x, "dtype")


def duck_like(g, x):
    """The gradient `g` as an array of `x`'s own type, shape and float dtype
    (`x` a float duck array): `g` itself when it is one already, else `g`
    spread over `x`'s zeros, which dispatches to `x`'s library (a constant
    or NumPy adjoint becomes lazy, not `x` concrete)."""
    if isinstance(g, (list, tuple)):     # the rows of an array, one adjoint each
        g = np.stack([np.broadcast_to(row, x.shape[1:]) for row in g])
    if type(g) is type(x) and g.shape == x.shape:
        return g if g.dtype == x.dtype else g.astype(x.dtype)
    return (np.zeros_like(x) + np.broadcast_to(g, x.shape)).astype(x.dtype)


def is_real_scalar(value) -> bool:
    """Whether a duck `value` is a 0-d real array: a scalar function's
    output, left lazy (its dtype and shape are known without computing)."""
    return is_duck(value) and value.ndim == 0 and value.dtype.kind in "biuf"


def numpy_only(x, what: str):
    """`x` itself, or a located error if it is a duck array: the adjoint of
    `what` (e.g. "np.linalg.eig") needs NumPy's own arrays."""
    if is_duck(x):
        raise UnsupportedValueError(
            f"the derivative of {what} is computed for NumPy arrays only, and this "
            f"value is a {type(x).__module__}.{type(x).__name__}", origin(),
            hint=f"convert it to NumPy first (e.g. np.asarray(...), or x.compute() for "
                 f"Dask), or keep {what} out of the differentiated code with "
                 "stop_gradient(...)")
    return x


def asarray(x, dtype=None):
    """`np.asarray(x, dtype)`, except that a duck array stays one (of the
    dtype, by its own lazy `astype`): what the adjoint helpers use to read
    an operand as an array."""
    if is_duck(x):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    return np.asarray(x, dtype=dtype)
