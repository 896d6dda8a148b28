"""The primal's in-place updates as expressions, their undoing, and
their adjoints.

`setitem`, `append`, `pop` and `scatter_*` (`np.add.at` & co.) update their
first argument in place and return it (generated code prints the user's
statement); `snapshot` / `restore` save and put back what one destroys
(aliases.py has the helpers of the alias analysis); `copy` and `keep`
copy what the caller gave or receives.  `zero_at`, `unpop`, `item_or_zeros`, `head` and `written` are the matching
adjoint helpers; `written` and `zero_at` return copies, so that the
adjoints they read stay the generated code's own.  These, and `add_into`
and `zero_into` (which update an adjoint the generated code owns, see
ownership.py), are the runtime's only helpers that mutate an argument
(`MUTATORS`), by design.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from ..errors import Location, UnsupportedSyntaxError
from .aliases import Slots, refuse_shared, refuse_written
from .core import (_FLOAT64, _FLOATS, Seq, Tree, _rows, repeats_possible, size, unindex,
                   zeros_like)
from .duck import is_duck, numpy_only
from .zero import ZERO


def setitem(x, index, value):
    """`x[index] = value`, as an expression (generated code prints the
    statement); returns `x` itself, mutated, as NumPy would leave it."""
    x[index] = value
    return x


# `np.add.at(a, index, values)` and its siblings update `a` in place, unbuffered
# (repeated indices apply repeatedly); as expressions, these return `a` itself.
# Generated code prints the user's call back (`SCATTERS` names the ufunc).
def scatter_add(a, index, values):
    np.add.at(a, index, values)
    return a


def scatter_subtract(a, index, values):
    np.subtract.at(a, index, values)
    return a


def scatter_multiply(a, index, values):
    np.multiply.at(a, index, values)
    return a


def scatter_divide(a, index, values):
    np.divide.at(a, index, values)
    return a


def scatter_maximum(a, index, values):
    np.maximum.at(a, index, values)
    return a


def scatter_minimum(a, index, values):
    np.minimum.at(a, index, values)
    return a


SCATTERS = {np.add: scatter_add, np.subtract: scatter_subtract,
            np.multiply: scatter_multiply, np.divide: scatter_divide,
            np.maximum: scatter_maximum, np.minimum: scatter_minimum}


def zero_at(g, index):
    """A copy of the adjoint `g` with zeros at `index` (the slots that a
    `x[index] = v` overwrote carry no gradient back to the old `x`).  A
    list's or dict's slot gets `ZERO`: the item there now is the new one,
    and the old one, whose zero this is, may have had another shape."""
    if g is ZERO:
        return g
    if type(index) is Slots:
        for slot in index:
            g = zero_at(g, slot)
        return g
    if isinstance(g, (list, tuple)):
        out = Seq(g)
        if isinstance(index, slice):
            for j in range(*index.indices(len(out))):
                out[j] = ZERO
        else:
            out[index] = ZERO
        return out
    if isinstance(g, dict):
        out = Tree(g)
        out[index] = ZERO
        return out
    out = g.copy() if is_duck(g) else np.array(g)     # (a Dask array stays lazy)
    out[index] = 0
    return out


def zero_into(g, index):
    """`zero_at(g, index)`, writing the zeros into `g` itself when it is an
    array.  Generated code calls it only on an adjoint it owns: one no other
    value references (decided at compile time, ownership.py)."""
    if g is ZERO:
        return g
    if type(index) is Slots:
        for slot in index:
            g = zero_into(g, slot)
        return g
    if not _writable(g):
        return zero_at(g, index)
    g[index] = 0
    return g


def add_into(acc, index, g, like):
    """`acc + unindex(g, like, index)`, adding `g` into the slots `index` of `acc`
    itself when `acc` is an array of `like`'s shape that can hold the sum.
    Generated code calls it only on an adjoint it owns (ownership.py).  The
    adjoint of a list, tuple or dict gets `g` in its slot, the others kept
    (not a new container of zeros per read: reading `zs[-1]` in a loop).
    `ZERO` (a replaced item's adjoint) adds nothing, and to it, `g` is added
    into zeros."""
    if acc is ZERO:
        return unindex(g, like, index)
    if g is ZERO:
        return acc
    if type(acc) is np.ndarray and type(index) is int and type(like) is np.ndarray \
            and type(g) in _FLOATS and acc.dtype == _FLOAT64 and acc.shape == like.shape \
            and acc.flags.writeable:
        acc[index] += g                   # (one element of a float array: scalar code)
        return acc
    if _own_slot(acc, index, like):
        acc[index] = acc[index] + g
        return acc
    if is_duck(g) or not (_writable(acc) and acc.shape == np.shape(like)
            and np.can_cast(np.result_type(g), acc.dtype, "same_kind")):
        return acc + unindex(g, like, index)
    if repeats_possible(index):
        np.add.at(acc, index, g)          # repeated indices accumulate
    else:
        acc[index] += g
    return acc


def _own_slot(d, index, like) -> bool:
    """Whether `index` is one slot of the container adjoint `d` of `like`."""
    if type(d) is Seq and isinstance(like, (list, tuple)) and len(d) == len(like):
        return isinstance(index, (int, np.integer)) and not isinstance(index, bool) \
            and -len(d) <= index < len(d)
    if type(d) is Tree and isinstance(like, dict):
        try:
            return index in d and index in like and len(d) == len(like)
        except TypeError:               # an unhashable index
            return False
    return False


def _writable(a) -> bool:
    return type(a) is np.ndarray and a.flags.writeable


_MISSING = type("Missing", (), {"__repr__": lambda self: "<missing key>"})()


def snapshot(x, index=None):
    """The value an in-place update is about to destroy, copied (a list or
    dict shallowly: its items are not changed by an update of it).  A duck
    array's part selected by a lazy index (a Dask mask) is refused: Dask
    cannot write back a part of unknown size."""
    if isinstance(x, dict) and index is not None and index not in x:
        return _MISSING                 # a new key: restoring deletes it
    if is_duck(x):
        for part in index if isinstance(index, tuple) else (index,):
            numpy_only(part, "an in-place update through a lazy index")
    part = x if index is None else x[index]
    if isinstance(part, (np.ndarray, list, dict)) or is_duck(part):
        return part.copy()
    return part


def restore(x, saved, index=None):
    """Undo an in-place update: put `saved` back into `x` (in place for
    arrays and lists, so that aliases see the old values again)."""
    if index is not None:
        if saved is _MISSING:
            del x[index]
        else:
            x[index] = saved
        return x
    if (isinstance(x, np.ndarray) and isinstance(saved, np.ndarray) or
            is_duck(x) and type(saved) is type(x)) and x.shape == saved.shape:
        x[...] = saved
        return x
    if isinstance(x, list) and isinstance(saved, list):
        x[:] = saved
        return x
    if isinstance(x, dict) and isinstance(saved, dict):
        x.clear()
        x.update(saved)
        return x
    return saved


def copy(x, callee=None):
    """A copy of an argument that the function updates in place.

    With `callee` = (helper, parameter, file, line, column, source line) it
    checks a call instead: the helper augments that parameter in place
    (`p += v`), which would change the caller's `x` if it is an array, list
    or dict (then `UnsupportedSyntaxError`); `x` is returned as it is."""
    if callee is not None:
        if isinstance(x, (np.ndarray, list, dict)):
            fname, param, *where = callee
            raise UnsupportedSyntaxError(
                f"{fname} updates its parameter {param} in place, so this call changes "
                f"the caller's {type(x).__name__}; s2s_ad does not differentiate "
                "through a helper that mutates its argument", Location(*where),
                hint=f"return the new value from {fname} and assign it at the call, "
                     "or pass a copy")
        return x
    return _copy_tree(x, {})


def _copy_tree(x, memo: dict):
    """A copy of the arrays, lists and dicts in `x` (each copied once, so
    what shared an object still does)."""
    if not isinstance(x, (np.ndarray, list, tuple, dict)) and not is_duck(x):
        return x
    if id(x) in memo:
        return memo[id(x)]
    if isinstance(x, np.ndarray) or is_duck(x):
        out = x.copy()
    elif isinstance(x, dict):
        out = type(x)((k, _copy_tree(v, memo)) for k, v in x.items())
    elif isinstance(x, list):
        out = type(x)(_copy_tree(v, memo) for v in x)
    else:
        items = [_copy_tree(v, memo) for v in x]
        out = type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    memo[id(x)] = out
    return out


def keep(value):
    """A deep copy of the arrays in `value` (a returned value or aux), taken
    before the reverse sweep restores arrays in place."""
    if isinstance(value, np.ndarray) or is_duck(value):
        return value.copy()
    if isinstance(value, (list, tuple)):
        items = [keep(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: keep(v) for k, v in value.items()}
    return value


def append(items, item, position):
    """`items.append(item)`, as an expression; `position` is the new item's
    index (generated code prints the statement)."""
    items.append(item)
    return items


def pop(items, index):
    """`items.pop(index)` for a list or dict, as an expression returning
    `items` (the popped item was read before, as `items[index]`)."""
    items.pop(index)
    return items


def unpop(g, items, index):
    """The adjoint of a list or dict before `items.pop(index)`, from `g`,
    the adjoint after: zeros where the item was (its value's adjoint comes
    back through the read of `items[index]`)."""
    if g is ZERO:
        return zeros_like(items)
    if isinstance(items, dict):
        out = Tree(g) if isinstance(g, dict) else Tree()
        out[index] = zeros_like(items[index])
        return out
    parts = list(g) if isinstance(g, (list, tuple)) else _rows(g, len(items) - 1)
    at = index % len(items)
    return Seq(parts[:at] + [zeros_like(items[at])] + parts[at:])


def item_or_zeros(g, position, item):
    """Item `position` of a list's adjoint `g`, or zeros if `g` ends before
    (a copy of an array's row: `g` may be updated in place after)."""
    if isinstance(g, (list, tuple)) or isinstance(g, np.ndarray) and g.ndim:
        if position < len(g) and g[position] is not ZERO:   # (items may differ in shape)
            return np.copy(g[position]) if isinstance(g, np.ndarray) else g[position]
    return zeros_like(item)


def head(g, position):
    """A list's adjoint before the append at `position`: its first items."""
    if g is ZERO:
        return g
    if isinstance(g, np.ndarray) and g.ndim:
        return Seq(g[:position])
    return Seq(g[:position]) if isinstance(g, (list, tuple)) else g


def diagonal_index(a):
    """The index of `a`'s main diagonal, as `np.fill_diagonal` writes it."""
    n = min(np.shape(a))
    return (np.arange(n),) * np.ndim(a)


def along_axis_index(a, indices, axis):
    """The index `np.put_along_axis(a, indices, values, axis)` writes at:
    `indices` along `axis`, every position along the others."""
    along = np.asarray(indices)
    index = []
    for dim, n in enumerate(np.shape(a)):
        shape = [1] * along.ndim
        shape[dim] = n
        index.append(along if dim == axis % np.ndim(a) else np.arange(n).reshape(shape))
    return tuple(index)


def mutated(target, _):
    """`target` after a call that updated it in place (generated code prints
    the call itself); no gradient flows through such a call."""
    return target


def written(g, index):
    """`g[index]`, where a slot that `x[index] = v` writes several times
    (repeated integer indices) keeps only its last write, as NumPy does:
    the other writes get no gradient.  `Slots` written together sum."""
    if g is ZERO:
        return g
    if type(index) is Slots:
        parts = [written(g, slot) for slot in index]
        return sum(parts[1:], parts[0])
    part = g[index] if isinstance(g, (np.ndarray, list, tuple, dict)) or is_duck(g) \
        else asarray(g)[index]
    if not repeats_possible(index):
        return np.copy(part) if isinstance(part, np.ndarray) else part
    slots = np.arange(size(g)).reshape(np.shape(g))[index]
    order = np.ravel(slots)
    _, last_reversed = np.unique(order[::-1], return_index=True)
    last = np.zeros(order.size, dtype=bool)
    last[order.size - 1 - last_reversed] = True
    return np.where(last.reshape(np.shape(slots)), part, 0)


# Helpers that write into an argument (the primal's in-place updates and
# their undoing): a call of one is never dead code.

def put(x, index, value):
    """A copy of `x` with `value` at `index` (each slot of a `Slots`): the
    tangent of an update `x[index] = value`, which no other tangent sees."""
    if isinstance(x, dict):             # (its own type: a tangent behaves as its primal)
        out = type(x)(x) if type(x) in (dict, Tree) else dict(x)
    elif isinstance(x, (list, tuple)):
        out = type(x)(x) if type(x) in (list, Seq) else list(x)
    else:
        out = np.array(x, dtype=np.result_type(x, value, float))
    for slot in index if type(index) is Slots else (index,):
        out[slot] = value
    return out if not isinstance(out, np.ndarray) or out.shape else out[()]


def put_into(x, index, value):
    """`put(x, index, value)`, writing into `x` itself where it can hold the
    value.  Generated code calls it only on a tangent it owns (ownership.py)."""
    writable = isinstance(x, np.ndarray) and x.flags.writeable and x.ndim and \
        np.can_cast(np.result_type(value), x.dtype, "same_kind")
    if not (writable or type(x) is Seq or type(x) is dict):
        return put(x, index, value)
    for slot in index if type(index) is Slots else (index,):
        x[slot] = value
    return x


MUTATORS = frozenset({setitem, append, pop, restore, mutated, refuse_shared, refuse_written,
                      add_into, zero_into, put_into, *SCATTERS.values()})
