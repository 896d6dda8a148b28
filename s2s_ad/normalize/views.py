"""Which expressions read a view of a name: the relation a value bound from
one has to it, for the alias analysis (normalize/aliasing.py).

`view_of` gives the relations the analysis follows exactly: a subscript,
`.T`, `reshape`/`ravel`/`view` (of a local or a temporary), `np.reshape`,
`np.ravel`, `np.asarray`, `np.transpose`.  `may_view` names the arguments
whose memory the result of any other NumPy function or array method may
share, unless it is known to always make a new array (`_FRESH_FUNCTIONS`,
`_FRESH_METHODS`, ufuncs): the analysis holds that relation as uncertain,
so an update through either side is checked at run time and refused where
they share memory, rather than lost.  The sound default is the point: a
view-returning function nobody listed (`np.split`, `np.ascontiguousarray`,
`x.conj()` of a real array) costs a run-time check, never a wrong gradient.
"""
from __future__ import annotations

import gast
import numpy

from .. import astutil, runtime
from ..ir import is_resolved
from .alias_parts import Part

_VIEW_METHODS = {"reshape": "reshape", "ravel": "reshape", "view": "reshape"}
_VIEW_FUNCTIONS = {numpy.reshape: "reshape", numpy.ravel: "reshape",
                   numpy.asarray: "reshape", numpy.transpose: "T",
                   runtime.indexable: "reshape"}
# NumPy functions whose result is always a new array (or a number), whatever
# the arguments: every other NumPy function may return (a list of) views of
# its arguments (`np.ascontiguousarray`, `np.split`, `np.einsum('ii->i', a)`)
_FRESH_FUNCTIONS = frozenset(getattr(numpy, name) for name in """
    sum prod mean std var max min amax amin ptp nansum nanprod nanmean nanstd nanvar
    nanmax nanmin median nanmedian percentile quantile nanpercentile nanquantile average
    all any count_nonzero argmax argmin argsort sort nonzero flatnonzero
    dot vdot inner outer tensordot kron cross trace cumsum cumprod nancumsum nancumprod
    diff ediff1d gradient convolve correlate interp polyval cov corrcoef histogram
    concatenate stack vstack hstack dstack column_stack block append insert delete
    where select piecewise take take_along_axis compress extract repeat tile roll pad
    copy array zeros ones empty full zeros_like ones_like empty_like full_like arange
    linspace logspace geomspace eye identity tri triu tril diag diagflat vander
    round around clip sinc i0 angle unwrap allclose isclose array_equal unique
    searchsorted digitize bincount logical_and logical_or logical_not
    """.split() if hasattr(numpy, name))
_FRESH_MODULES = ("numpy.linalg", "numpy.fft", "numpy.random")
# array methods whose result is always new: any other may return the receiver
# or a view of it (`x.conj()` of a real array, `x.astype(t, copy=False)`)
_FRESH_METHODS = frozenset("""
    copy sum prod mean std var max min ptp all any argmax argmin argsort cumsum cumprod
    dot trace round clip flatten tolist item nonzero repeat take compress choose
    searchsorted
    """.split())


def view_of(nz, value) -> Part | None:
    """The relation a value read from a local has to it, if it may share
    memory with it."""
    view = astutil.clone(value)
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        return Part(value.value.id, "index", view)
    if isinstance(value, gast.Attribute) and value.attr == "T" and \
            isinstance(value.value, gast.Name):
        return Part(value.value.id, "T", view)
    if not isinstance(value, gast.Call):
        return None
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr in _VIEW_METHODS and \
            isinstance(func.value, gast.Name) and \
            (func.value.id in nz.locals or func.value.id in nz.namer.temps):
        return Part(func.value.id, _VIEW_METHODS[func.attr], view)
    callee = nz.src.resolve(func, nz.locals)
    kind = _VIEW_FUNCTIONS.get(callee) if hashable(callee) else None
    if kind and value.args and isinstance(value.args[0], gast.Name) and \
            (kind != "T" or len(value.args) == 1 and not value.keywords):
        return Part(value.args[0].id, kind, view)
    return None


def may_view(nz, value) -> list[str]:
    """The names whose memory the result of `value` may share in a way no
    relation of `view_of` follows: a NumPy function's arguments and a
    method's receiver, unless it always makes a new array (`np.swapaxes(x,
    ...)` is the function: the callee is resolved first).  A `copy=` or
    `out=` keyword makes no call new.  Which names are locals is the
    caller's to check."""
    if not isinstance(value, gast.Call):
        return []
    callee = nz.src.resolve(value.func, nz.locals)
    copying = any(k.arg in ("copy", "out") for k in value.keywords)
    if is_resolved(callee):
        if not _is_numpy(callee) or not copying and _is_fresh(callee):
            return []
        args = [*value.args, *(k.value for k in value.keywords)]
    elif isinstance(value.func, gast.Attribute) and \
            (copying or value.func.attr not in _FRESH_METHODS):
        args = [value.func.value]
    else:
        return []
    return [a.id for a in args if isinstance(a, gast.Name)]


def _is_numpy(callee) -> bool:
    module = getattr(callee, "__module__", None) or ""
    return isinstance(callee, numpy.ufunc) or module == "numpy" or module.startswith("numpy.")


def _is_fresh(callee) -> bool:
    """A NumPy function that always makes a new array: a ufunc (without
    `out=`), a reduction, a constructor, linear algebra ..."""
    if isinstance(callee, numpy.ufunc) or \
            (getattr(callee, "__module__", None) or "").startswith(_FRESH_MODULES):
        return True
    return hashable(callee) and callee in _FRESH_FUNCTIONS


def hashable(obj) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False
