"""Which expressions read a view of a name: the relation a value bound from
one has to it, for the alias analysis (normalize/aliasing.py).

`view_of` gives the relations the analysis follows exactly: a subscript,
`.T`, `reshape`/`ravel`/`view` (of a local or a temporary), `np.reshape`,
`np.ravel`, `np.asarray`, `np.transpose`, `rt.flat_view` (`x.flat[i] = v`).
`may_view` names the arguments whose memory the result of any other NumPy
function or array method may share, unless it is known to always make a new
array (fresh.py: ufuncs, reductions, constructors, ...): the analysis holds
that relation as uncertain, so an update through either side is checked at
run time and refused where they share memory, rather than lost.  The sound
default is the point: a view-returning function nobody listed (`np.split`,
`np.ascontiguousarray`, `x.conj()` of a real array) costs a run-time check,
never a wrong gradient.
"""
from __future__ import annotations

import gast
import numpy

from .. import astutil, fresh, runtime
from ..ir import is_resolved
from .alias_parts import Part

_VIEW_METHODS = {"reshape": "reshape", "ravel": "reshape", "view": "reshape"}
_VIEW_FUNCTIONS = {numpy.reshape: "reshape", numpy.ravel: "reshape",
                   numpy.asarray: "reshape", numpy.transpose: "T",
                   runtime.indexable: "reshape", runtime.flat_view: "reshape"}

def view_of(nz, value) -> Part | None:
    """The relation a value read from a local has to it, if it may share
    memory with it."""
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        return Part(value.value.id, "index", astutil.clone(value))
    if isinstance(value, gast.Attribute) and value.attr == "T" and \
            isinstance(value.value, gast.Name):
        return Part(value.value.id, "T", astutil.clone(value))
    if not isinstance(value, gast.Call):
        return None
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr in _VIEW_METHODS and \
            isinstance(func.value, gast.Name) and \
            (func.value.id in nz.locals or func.value.id in nz.namer.temps):
        return Part(func.value.id, _VIEW_METHODS[func.attr], astutil.clone(value))
    callee = nz.src.resolve(func, nz.locals)
    kind = _VIEW_FUNCTIONS.get(callee) if hashable(callee) else None
    if kind and value.args and isinstance(value.args[0], gast.Name) and \
            (kind != "T" or len(value.args) == 1 and not value.keywords):
        return Part(value.args[0].id, kind, astutil.clone(value))
    return None


# attributes of an array that are numbers, tuples or dtypes, never views
_NOT_VIEWS = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})


def may_view(nz, value) -> list[str]:
    """The names whose memory the result of `value` may share in a way no
    relation of `view_of` follows: an object's whose attribute it is (`p.w`,
    `x.real`), the values a nested function used as a value holds
    (`rt.bind`), a NumPy function's arguments and a method's receiver, unless
    it always makes a new array (`np.swapaxes(x, ...)` is the function: the
    callee is resolved first).  A `copy=` or
    `out=` keyword makes no call new.  Which names are locals is the
    caller's to check."""
    if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
        # an attribute of an object (`p.w`) may be an array the object holds;
        # of an array, `x.real`, `x.mT`, `x.flat` are views
        return [] if value.attr in _NOT_VIEWS else [value.value.id]
    if not isinstance(value, gast.Call):
        return []
    callee = nz.src.resolve(value.func, nz.locals)
    if callee is runtime.bind:      # a nested function holding what it read
        return [a.id for a in value.args[2:] if isinstance(a, gast.Name)]
    if is_resolved(callee):
        if not fresh.is_numpy(callee) or fresh.makes_new_array(callee, value):
            return []
        args = [*value.args, *(k.value for k in value.keywords)]
    elif isinstance(value.func, gast.Attribute) and \
            not fresh.method_makes_new_array(value):
        args = [value.func.value]
    else:
        return []
    return [a.id for a in args if isinstance(a, gast.Name)]


def hashable(obj) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False
