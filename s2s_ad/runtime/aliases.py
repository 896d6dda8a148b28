"""Run-time helpers of the alias analysis (normalize/aliasing.py): whether a
name still views a part of another (`shares`), where an update through an
item writes back (`slots` -> `Slots`), the located error for a relation the
analysis could not follow (`refuse_shared`), and the markers of an update
through a view (`sync_*`, identities at run time whose rules carry the
adjoint back to the base); `flat_view`, the view `x.flat[i] = v` writes
through.

Invariants: none of these mutates an argument; `Slots` is a tuple type
the adjoint helpers of inplace.py recognise by exact type.
"""
from __future__ import annotations

import functools
import os
import sys
import types

import numpy as np

from ..errors import Location, UnsupportedSyntaxError
from .origins import INSTALLED


def shares(view, base, index=None):
    """Whether `view` is still a part of `base`: it shares memory with the
    array `base`, or it is the item `base[index]` of a list, tuple or dict
    (or the same view of the same memory: a view re-read after an update is
    a new object)."""
    if isinstance(base, np.ndarray):
        return isinstance(view, np.ndarray) and np.may_share_memory(view, base)
    if index is None:                   # `indexable(seq)` of a list is the list
        return view is base
    if not isinstance(base, (list, tuple, dict)):
        return False
    try:
        item = base[index]
    except (IndexError, KeyError, TypeError):
        return False
    return item is view or _same_view(item, view)


class Slots(tuple):
    """Where an updated object sits in its base, found by `slots`."""


def slots(view, base, index):
    """Where the write-back of an update through `view` writes into `base`:
    the array view's `index` if it shares memory with the array `base`;
    every slot of a list, tuple or dict that holds the object (`[a, a]`
    holds it twice, and an update changes both; after an `append`, `zs[-1]`
    is no longer the item read by it), whatever `index` it was read with.
    The reverse sweep hands each slot's gradient to the update (`written`,
    `zero_at`).  Empty, and false, when `view` is no part of `base`."""
    if isinstance(base, np.ndarray):
        return Slots((index,) if shares(view, base) else ())
    if not isinstance(base, (list, tuple, dict)):
        return Slots()
    if shares(view, base, index):       # (a view re-read since: the same memory)
        view = base[index]
    keys = list(base.keys()) if isinstance(base, dict) else None
    ids = list(map(id, base.values() if keys is not None else base))    # (C speed)
    target = id(view)
    if ids.count(target) == 1 and keys is None:
        return Slots((ids.index(target),))
    at = [k for k, i in enumerate(ids) if i == target]
    return Slots(at if keys is None else (keys[k] for k in at))


def _same_view(a, b) -> bool:
    """Whether `a` and `b` view the same elements the same way (one array,
    or two views read alike: `x[0]` read twice)."""
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
        a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype and \
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


# values an update rebinds rather than changes (`s *= 2` of a float)
_IMMUTABLE = (int, float, complex, str, bytes, np.generic, type(None))


def refuse_shared(view, base, where, unless_same=False):
    """Raise the located `UnsupportedSyntaxError` `where` = (message, hint,
    file, line, column, source line) if `view` shares memory with `base`
    (an in-place update through a relation s2s_ad could not follow): with
    `base`, one of its items or attributes, or theirs.  `unless_same`: not
    where `view` is `base` (the update rebinds such a name to it)."""
    if unless_same and view is base:
        return
    views = view if isinstance(view, (list, tuple)) and view is not base else [view]
    shared = any(_in(v, base) for v in views    # (a list: any of its items)
                 if not isinstance(v, _IMMUTABLE))
    if shared:
        _refuse(where)


def refuse_written(view, base, index, where):
    """Raise the located `UnsupportedSyntaxError` `where` (see
    `refuse_shared`) if `view` shares memory with what an in-place update
    of `base` writes: of an array, the elements `base[index]` where the
    index is basic (`index` None: all of it); of a list or dict, only the
    container (a slot replaced or items moved change no item)."""
    if type(base) in (list, dict):
        if view is base or isinstance(view, (list, tuple, dict)) and _in(base, view):
            _refuse(where)
        return
    if type(base) is np.ndarray and index is not None and _basic(index):
        base = base[index]
    refuse_shared(view, base, where)


def _basic(index) -> bool:
    """Whether `x[index]` is a view of `x` (integers, slices, `...`, `None`)."""
    items = index if type(index) is tuple else (index,)
    return all(type(i) in (int, slice, type(Ellipsis), type(None)) or
               isinstance(i, np.integer) for i in items)


def in_place(x) -> bool:
    """Whether `x op= v` updates `x` in place (a NumPy array), rather than
    binding a new value (a number): which a helper's `v /= n` does to the
    caller's argument (normalize/updating.py)."""
    return isinstance(x, np.ndarray)


def updated_copy(x, where):
    """A copy of the array a helper of the user's updates in place: the
    helper's updating variant runs on it, and its new values are written
    back into `x` (normalize/updating.py).  Anything but a NumPy array is
    refused, as `refuse_shared` does (`where`)."""
    if not isinstance(x, np.ndarray):
        _refuse(where)
    return x.copy(order="K")


def refuse_overlap(item, container, where):
    """Raise the located `UnsupportedSyntaxError` `where` if another item of
    the list or dict `container` shares memory with `item` without being
    it (overlapping views updated at a slot known only at run time: the
    update reaches the other item through memory that the compiler's
    relations do not follow).  Items are compared by the arrays they hold,
    nested lists, tuples and dicts included."""
    if not isinstance(container, (list, tuple, dict)):
        return
    mine = _arrays(item)
    items = list(container.values() if isinstance(container, dict) else container)
    others = {id(a): a for o in items if o is not item for a in _arrays(o)
              if any(a is not m and np.may_share_memory(a, m) for m in mine)}
    # the slot written holds `item`, or an older view of its elements (the
    # name was read again since): one such view is that slot, not another
    held = any(o is item for o in items)
    if len(others) > (0 if held else 1) or \
            any(not any(_same_view(a, m) for m in mine) for a in others.values()):
        _refuse(where)


def refuse_overwrite(x, index, value, where):
    """Raise the located `UnsupportedSyntaxError` `where` if `x[index] =
    value` writes elements `value` views (other than each onto itself,
    `y[1:] = y[1:]`) in an order that may read one after writing it: the
    derivative takes `value` as read whole before the write, and NumPy's
    result then depends on its copy order (`y[2] = y[:, 3]`)."""
    if type(x) is np.ndarray and type(value) is np.ndarray and \
            np.may_share_memory(x, value):
        target = x[index]
        if type(target) is np.ndarray and np.shares_memory(target, value) and \
                not _same_view(target, value) and not _read_first(index, target, value):
            _refuse(where)


def _read_first(index, target: np.ndarray, value: np.ndarray) -> bool:
    """Whether NumPy's `x[index] = value`, `target` being `x[index]`, gives
    what it would with `value` copied first, although the two share memory.
    Only a basic index (integers, slices, `...`, `None`) assigns a view;
    NumPy then copies an overlapping `value` first into a target of two or
    more dimensions, or of one walked the other way (`y[:] = y[::-1]`); a
    1-d target walked in `value`'s own step is copied in the direction
    that reads each element before it is overwritten (`y[1:] = y[:-1]`).
    One element read and written is in order too.  Anything else (a step
    of its own: `y[2] = y[:, 3]`) is not promised.  tests/test_overwrite.py
    checks each case against NumPy's result."""
    if not _basic(index):
        return False
    if target.size <= 1 or target.ndim > 1:
        return True
    if value.shape != target.shape:
        return False
    step, own = target.strides[0], value.strides[0]
    return step == own or step * own < 0


def _refuse(where):
    """Raise the located `UnsupportedSyntaxError` `where` = (message, hint,
    file, line, column, source line) the compiler wrote."""
    message, hint, *location = where
    raise UnsupportedSyntaxError(message, Location(*location), hint=hint)


def _arrays(x, depth: int = 0) -> list:
    """The NumPy arrays `x` is or holds in lists, tuples and dicts (nesting
    deeper than 8 is not followed)."""
    if type(x) is np.ndarray:
        return [x]
    if depth > 8 or not isinstance(x, (list, tuple, dict)):
        return []
    return [a for v in (x.values() if isinstance(x, dict) else x) for a in _arrays(v, depth + 1)]


def _in(view, base, depth: int = 0) -> bool:
    """Whether `view` is `base`, shares memory with it, or is (or shares
    memory with) one of its items or attributes, or theirs
    (`dict([("w", w)])` holds `w` through a pair, `p.w` an object's, a
    nested function made by `rt.bind` what it read; nesting deeper than 8,
    or a list holding itself, is not followed)."""
    if isinstance(base, np.ndarray):
        return isinstance(view, np.ndarray) and np.may_share_memory(view, base)
    if view is base:
        return True
    if isinstance(base, (list, tuple, dict)):
        items = base.values() if isinstance(base, dict) else base
    elif isinstance(base, functools.partial):     # (a nested function's values: rt.bind)
        items = (*base.args, *base.keywords.values())
    elif _users_object(base) or depth == 0 and _plain_object(base):
        items = vars(base).values()
    else:
        return False
    return any(item is view
               or (isinstance(item, (list, tuple, dict, functools.partial))
                   or _users_object(item))
               and depth < 8 and _in(view, item, depth + 1)
               or isinstance(item, np.ndarray) and isinstance(view, np.ndarray)
               and np.may_share_memory(item, view) for item in items)


def _plain_object(x) -> bool:
    """An instance with a `__dict__` of attributes (not a class, module or
    function)."""
    return not isinstance(x, (type, types.ModuleType, types.FunctionType,
                              types.MethodType)) and \
        isinstance(getattr(x, "__dict__", None), dict)


def _users_object(x) -> bool:
    """`_plain_object`, of a class defined in the user's code (not Python's
    or an installed package's, whose objects' attributes are looked into
    only at the top: they may hold much)."""
    if not _plain_object(x):
        return False
    name = type(x).__module__
    module = sys.modules.get(name)
    if module is None or name == "builtins":
        return False
    path = getattr(module, "__file__", None)     # (None: a notebook's or REPL's)
    return path is None or not os.path.abspath(path).startswith(INSTALLED)


def sync_index(x, index, value):
    """`x[index]` was updated in place through the view `value`: nothing to
    do at run time; for the reverse sweep, `x[index] = value`."""
    return x


def sync_transposed(base, view):
    """`base` was updated in place through `view = base.T`."""
    return base


def sync_reshaped(base, view):
    """`base` was updated in place through a reshaped view of it."""
    return base


def flat_view(a, where):
    """`a` as the 1-D view of its elements in C order that `a.flat[i] = v`
    writes through (normalize/inplace.py): `np.reshape(a, -1)`, which is a
    view wherever one exists.  Where it is a copy (a transpose, a strided
    view), the located refusal `where` (see `refuse_shared`): a write into
    the copy would not reach `a`."""
    a.flat              # (as the user's code: an AttributeError where `a` has none)
    view = np.reshape(a, -1)
    if view.size and not np.may_share_memory(view, a):
        _refuse(where)
    return view


def follow(name, restored):
    """`name` after `restored` was put back in place by `restore` (a derived
    function differentiated again): nothing to do at run time, the memory
    they share changed with it; its tangent rule carries the restored
    tangent over (`tangents.overlay`)."""
    return name
