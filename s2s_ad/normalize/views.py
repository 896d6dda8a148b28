"""Which expressions read a view of a name: the relation a value bound from
one has to it, for the alias analysis (normalize/aliasing.py).

`view_of` gives the relations the analysis follows exactly: a subscript,
`.T`, `reshape`/`ravel`/`view`, `np.reshape`, `np.ravel`, `np.asarray`,
`np.transpose`.  `may_view` names the argument whose memory the result of
another view-returning NumPy function or array method may share
(`np.moveaxis`, `x.swapaxes`, ...): the analysis holds that relation as
uncertain, so an update through either side is checked at run time and
refused where they share memory, rather than lost.
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
_MAY_VIEW_FUNCTIONS = {numpy.moveaxis, numpy.swapaxes, numpy.squeeze, numpy.expand_dims,
                       numpy.atleast_1d, numpy.atleast_2d, numpy.atleast_3d,
                       numpy.broadcast_to, numpy.diagonal, numpy.flip, numpy.fliplr,
                       numpy.flipud, numpy.rot90, numpy.real, numpy.imag, numpy.asanyarray}
_MAY_VIEW_METHODS = {"transpose", "swapaxes", "squeeze", "diagonal"}


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
            isinstance(func.value, gast.Name) and func.value.id in nz.locals:
        return Part(func.value.id, _VIEW_METHODS[func.attr], view)
    callee = nz.src.resolve(func, nz.locals)
    kind = _VIEW_FUNCTIONS.get(callee) if hashable(callee) else None
    if kind and value.args and isinstance(value.args[0], gast.Name) and \
            (kind != "T" or len(value.args) == 1 and not value.keywords):
        return Part(value.args[0].id, kind, view)
    return None


def may_view(nz, value) -> str | None:
    """The name whose memory the result of `value` may share in a way no
    relation of `view_of` follows: the first argument of a function of
    `_MAY_VIEW_FUNCTIONS`, the receiver of a method of `_MAY_VIEW_METHODS`
    (`np.swapaxes(x, ...)` is the function: the callee is resolved first)."""
    if not isinstance(value, gast.Call):
        return None
    callee = nz.src.resolve(value.func, nz.locals)
    if hashable(callee) and callee in _MAY_VIEW_FUNCTIONS and value.args:
        first = value.args[0]
    elif not is_resolved(callee) and isinstance(value.func, gast.Attribute) and \
            value.func.attr in _MAY_VIEW_METHODS:
        first = value.func.value
    else:
        return None
    return first.id if isinstance(first, gast.Name) else None


def hashable(obj) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False
