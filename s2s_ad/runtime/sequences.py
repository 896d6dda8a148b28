"""Python's `+` and `*` where they may join or repeat lists and tuples.

`a + b` concatenates two sequences and `s * n` repeats one, where NumPy
would add or multiply item by item.  The primitives stage gives these
operators the rules of `join`/`repeat_items` (rules/operators.py) where an
operand may be a list or tuple; their adjoints look at the operands' types at run
time: a joined sequence's adjoint splits at the first one's length, a
repeated one's sums its copies, and anything else is NumPy arithmetic.
"""
from __future__ import annotations

import numpy as np

from .core import Seq, _rows, unbroadcast


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
    return np.asarray(x) if _is_seq(x) else x


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
