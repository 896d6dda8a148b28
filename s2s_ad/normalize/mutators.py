"""Calls that update an argument in place through a form s2s_ad has no
functional lowering for: NumPy's mutators (`np.put`, `np.place`, ...,
`np.add.at` into a view), ndarray methods (`y.put`, `y.resize`, ...), the
in-place dunders (`y.__imul__(c)`, `y.__setitem__(i, v)`) and the operator
module's in-place functions (`operator.iadd(y, v)`, `operator.setitem`).

As a statement such a call is an opaque update of the local it writes
(`inplace._opaque_mutation`: refused where a gradient flows through it); as
a value it is refused, located (`refuse_as_value`): its result would be
read with the update unfollowed.
"""
from __future__ import annotations

import operator

import gast
import numpy

from ..ir import INPLACE_OPERATORS, MUTATING_METHODS, member

# NumPy functions and ndarray methods that update an argument in place and
# have no functional form here (copyto, fill_diagonal and put_along_axis:
# the forms not lowered by inplace._function_mutation)
NAMES = {"put", "place", "putmask", "partition", "itemset", "resize", "shuffle",
         "setfield", "byteswap", "copyto", "fill_diagonal", "put_along_axis"}
DUNDERS = {m for m in MUTATING_METHODS if m.startswith("__")}     # `y.__imul__(c)`
OPERATORS = {getattr(operator, op) for op in INPLACE_OPERATORS}   # `operator.iadd(y, v)`


def root_name(node) -> str | None:
    """`a` for `a`, `a[i]`, `a.T`, `a[i].T`, ...; None otherwise."""
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def is_ufunc_at(callee) -> bool:
    """Whether `callee` is a ufunc's `.at` method (`np.add.at`)."""
    return isinstance(getattr(callee, "__self__", None), numpy.ufunc) and \
        getattr(callee, "__name__", None) == "at"


def opaque_target(nz, call: gast.Call, callee) -> str | None:
    """The local that `call` updates in place through such a form (its
    receiver, or the root of its first argument), or None."""
    func = call.func
    if isinstance(func, gast.Attribute) and func.attr in NAMES | DUNDERS:
        receiver = root_name(func.value)
        if receiver in nz.locals:
            return receiver
    root = root_name(call.args[0]) if call.args else None
    if root not in nz.locals:
        return None
    if is_ufunc_at(callee) or member(callee, OPERATORS) or \
            callable(callee) and getattr(callee, "__name__", None) in NAMES:
        return root
    return None


def refuse_as_value(nz, call: gast.Call, callee) -> None:
    """A call that updates a local in place, whose value is read: refused."""
    target = opaque_target(nz, call, callee)
    if target is not None:
        nz.unsupported(call, f"a call that updates `{target}` in place, used as a value "
                             "(s2s_ad follows such an update only as a statement of its "
                             f"own); call it on a line of its own, then read `{target}`")
