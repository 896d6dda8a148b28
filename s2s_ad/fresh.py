"""Which NumPy calls surely make a new array (or a number): the one table
the alias analysis (normalize/views.py) and the helper analysis
(effects.py) read.  The result of any other NumPy function or array method
may be its argument or a view of it (`np.ascontiguousarray`, `np.split`'s
pieces, `x.astype(t, copy=False)`, `x.conj()` of a real array): unlisted
means "may share memory", so a missing entry costs a run-time check, never
a wrong gradient.
"""
from __future__ import annotations

import gast
import numpy as np

# NumPy functions whose result is always a new array (or a number), whatever
# the arguments: every other NumPy function may return (a list of) views of
# its arguments (`np.ascontiguousarray`, `np.split`, `np.einsum('ii->i', a)`)
# (not `np.diag`: of a matrix, a read-only view of its diagonal)
FRESH_FUNCTIONS = frozenset(getattr(np, name) for name in """
    sum prod mean std var max min amax amin ptp nansum nanprod nanmean nanstd nanvar
    nanmax nanmin median nanmedian percentile quantile nanpercentile nanquantile average
    all any count_nonzero argmax argmin argsort sort nonzero flatnonzero
    dot vdot inner outer tensordot kron cross trace cumsum cumprod nancumsum nancumprod
    diff ediff1d gradient convolve correlate interp polyval cov corrcoef histogram
    concatenate stack vstack hstack dstack column_stack block append insert delete
    where select piecewise take take_along_axis compress extract repeat tile roll pad
    copy array zeros ones empty full zeros_like ones_like empty_like full_like arange
    linspace logspace geomspace eye identity tri triu tril diagflat vander
    round around clip sinc i0 angle unwrap allclose isclose array_equal unique
    searchsorted digitize bincount logical_and logical_or logical_not
    """.split() if hasattr(np, name))
_FRESH_MODULES = ("numpy.linalg", "numpy.fft", "numpy.random")
# array methods whose result is always new: any other may return the receiver
# or a view of it (`x.conj()` of a real array, `x.astype(t, copy=False)`)
FRESH_METHODS = frozenset("""
    copy sum prod mean std var max min ptp all any argmax argmin argsort cumsum cumprod
    dot trace round clip flatten tolist item nonzero repeat take compress choose
    searchsorted
    """.split())


def is_numpy(callee) -> bool:
    """A function of NumPy's (or a ufunc)."""
    module = getattr(callee, "__module__", None) or ""
    return isinstance(callee, np.ufunc) or module == "numpy" or module.startswith("numpy.")


def makes_new_array(callee, call: gast.Call) -> bool:
    """Whether `call` of the NumPy function `callee` surely makes a new
    array (or a number): a ufunc, a reduction, a constructor, linear
    algebra ...; not with `copy=` or `out=`."""
    if any(k.arg in ("copy", "out") for k in call.keywords):
        return False
    if isinstance(callee, np.ufunc) or \
            (getattr(callee, "__module__", None) or "").startswith(_FRESH_MODULES):
        return True
    try:
        return callee in FRESH_FUNCTIONS
    except TypeError:           # (unhashable)
        return False


def method_makes_new_array(call: gast.Call) -> bool:
    """Whether the array method `call` surely makes a new array."""
    return call.func.attr in FRESH_METHODS and \
        not any(k.arg in ("copy", "out") for k in call.keywords)
