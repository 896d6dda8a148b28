"""Masking: which names hold a value `stop_gradient` returned.

Functions over the normalizer's state `nz` (__init__.py), for the alias
analysis (aliasing.py): an in-place update must not carry a gradient
across from a masked value to an unmasked one sharing its memory
(writebacks.py refuses it).  `nz.masked` and `nz.unmasked` hold the names
bound each way; they only grow.  `crossing` says how a name bound to a
masked (or unmasked) value follows an update through another.
"""
from __future__ import annotations

import gast

from .. import astutil, scopes, traversal
from ..ir import RUNTIME
from ..rules import stop_gradient_like


def is_stop_gradient(nz, value) -> bool:
    return isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords \
        and stop_gradient_like(nz.src.resolve(value.func, nz.locals))

def note_mask(nz, target: str, value) -> None:
    """Record whether `target = value` binds a masked value (returned by
    `stop_gradient`, or a copy of one).  The sets only grow, and the
    user's bindings were all noted up front (`note_masks`), so a name
    bound both ways anywhere is mixed at every point of the function."""
    mask = True if is_stop_gradient(nz, value) else \
        mask_of(nz, value.id) if isinstance(value, gast.Name) else False
    if mask is not False:
        nz.masked.add(target)
    if mask is not True:
        nz.unmasked.add(target)


def note_masks(nz) -> None:
    """Note every binding of the user's function (and its parameters)."""
    by_stop = {s.targets[0] for s in scopes.assignments(nz.src.tree.body)
               if isinstance(s.targets[0], gast.Name) and is_stop_gradient(nz, s.value)}
    for node in traversal.names(nz.src.tree):
        if type(node.ctx) is gast.Store:
            (nz.masked if node in by_stop else nz.unmasked).add(node.id)
    nz.unmasked |= nz.params


def mask_of(nz, name: str) -> bool | None:
    """Whether `name` holds a masked value: True, False, or None where
    it may be either."""
    masked, unmasked = name in nz.masked, name in nz.unmasked
    return None if masked and unmasked else masked


def crossing(nz, want, have) -> str:
    """How a name whose binding is masked by `stop_gradient` as `want`
    says (True, False or None: either) follows an update that gave the
    object a new value held by a name masked as `have`: "same" (`v =
    name`), "mask" (`v = rt.stop_gradient(name)`) or "refuse" - an
    update through a masked name changed a value that carries gradient,
    and which of its elements it changed is not known."""
    if want is not None and want == have:
        return "same"
    return "mask" if want is True and have is False else "refuse"


def view_mask(nz, view: str, part):
    """Whether the view `view` holds a masked value: bound by
    `stop_gradient`, or read from a masked base."""
    found = [mask_of(nz, view), mask_of(nz, part.base), part.masked]
    return None if None in found else any(found)


def masked_as(value, how: str):
    return astutil.call(f"{RUNTIME}.stop_gradient", [value]) if how == "mask" else value
