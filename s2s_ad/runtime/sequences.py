"""Python's `+` and `*` where they may join or repeat lists and tuples,
and sorting where the sequence may be a list.

`a + b` concatenates two sequences and `s * n` repeats one, where NumPy
would add or multiply item by item.  The primitives stage gives these
operators the rules of `join`/`repeat_items` (rules/operators.py) where an
operand may be a list or tuple; their adjoints look at the operands' types at run
time: a joined sequence's adjoint splits at the first one's length, a
repeated one's sums its copies, and anything else is NumPy arithmetic.
`sorted(xs)` and `xs.sort()` (`sort_like`) give each sorted item's adjoint
back to the place it came from, found by sorting the positions again with
the same key and direction (Python's sort is stable, so ties agree).
`d.get(key, default)` is lowered to `d[key] if has_key(d, key) else
get_other(default, d, key)`: an item of the dict, or the default itself
(an alias of it, to the alias analysis).
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from ..errors import UnsupportedValueError
from .core import Seq, Tree, _rows, unbroadcast, zeros_like
from .origins import origin


def join(a, b):
    """`a + b` (the key of the rule for a `+` that may join sequences)."""
    return a + b


def repeat_items(a, b):
    """`a * b` (the key of the rule for a `*` that may repeat a sequence)."""
    return a * b


def _is_seq(x) -> bool:
    return isinstance(x, (list, tuple))


def _items(g, n: int) -> list:
    """The adjoint of an n-item sequence as a list of at most n items (an
    adjoint shorter than its list is zero past its end)."""
    return list(g) if _is_seq(g) else _rows(g, n)


def _numpy(x):
    """An operand NumPy broadcast (a list stands for its array here)."""
    return asarray(x) if _is_seq(x) else x


def unjoin(g, a, b, i: int):
    """The adjoint of operand `i` of `a + b`."""
    if not (_is_seq(a) and _is_seq(b)):
        return unbroadcast(g, _numpy(b if i else a))
    items = _items(g, len(a) + len(b))
    return Seq(items[len(a):] if i else items[:len(a)])


def unrepeat_items(g, a, b, i: int):
    """The adjoint of operand `i` of `a * b`: for a repeated sequence, the
    sum of its copies' adjoints (the count gets none)."""
    seq = a if _is_seq(a) and not isinstance(b, np.ndarray) else \
        b if _is_seq(b) and not isinstance(a, np.ndarray) else None
    if seq is None:
        return unbroadcast(g * (b if i == 0 else a), _numpy(b if i else a))
    if (a if i == 0 else b) is not seq:
        return 0.0
    n = len(seq)
    items = _items(g, n * int(b if seq is a else a))
    return sum((Seq(items[k:k + n]) for k in range(0, len(items), n)), Seq())


def sort_like(x, axis=-1, key=None, reverse=False):
    """What `x.sort(...)` leaves in `x`: `np.sort(x, axis)` for an array,
    `sorted(x, key=key, reverse=reverse)` for a list."""
    if isinstance(x, np.ndarray):
        if key is not None or reverse:
            raise TypeError("ndarray.sort() takes no `key` or `reverse` argument")
        return np.sort(x, axis=axis)
    if axis != -1:
        raise TypeError(f"{type(x).__name__}.sort() takes no `axis` argument")
    return sorted(x, key=key, reverse=reverse)


def unsort_like(g, x, axis=-1, key=None, reverse=False):
    """The adjoint of `sort_like(x, ...)`."""
    if not isinstance(x, np.ndarray):
        return unsorted(g, x, key, reverse)
    inverse = np.argsort(np.argsort(x, axis=axis, kind="stable"), axis=axis)
    return np.take_along_axis(np.broadcast_to(g, np.shape(x)), inverse, axis=axis)


def unsorted(g, items, key=None, reverse=False):
    """The adjoint of `sorted(items, key=key, reverse=reverse)`: item j of
    the result came from the position `order[j]`."""
    values = list(items)
    by = values.__getitem__ if key is None else (lambda i: key(values[i]))
    order = sorted(range(len(values)), key=by, reverse=reverse)
    sorted_adjoints = _items(g, len(values))
    back = [0.0] * len(values)
    for j, i in enumerate(order[:len(sorted_adjoints)]):
        back[i] = sorted_adjoints[j]
    if isinstance(items, np.ndarray):
        return np.stack([np.broadcast_to(b, np.shape(v)) for b, v in zip(back, values)]) \
            if values else np.zeros(items.shape)
    return Seq(back)


def has_key(items, key) -> bool:
    """Whether `items.get(key, ...)` reads `items[key]`: a dict holding it."""
    return isinstance(items, dict) and key in items


def get_other(default, items, key):
    """`items.get(key, default)` where `has_key` is false: the default for
    a dict, else whatever the object's own `get` returns."""
    return default if isinstance(items, dict) else items.get(key, default)


def unget_other(g, items):
    """The adjoint of the `items` of `get_other`: none for a dict (the key
    was missing)."""
    _only_a_dict(items)
    return Tree((k, zeros_like(v)) for k, v in items.items())


def unget_default(g, items):
    """The adjoint of the default of `get_other`: all of `g` for a dict."""
    _only_a_dict(items)
    return g


def _only_a_dict(items) -> None:
    if not isinstance(items, dict):
        raise UnsupportedValueError(
            f"s2s_ad differentiates `.get` of a dict, and this is a {type(items).__name__} "
            "whose `get` it cannot see into", origin(),
            hint="index it, or wrap the call in stop_gradient(...) if no gradient "
                 "should flow through it")
