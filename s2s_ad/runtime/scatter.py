"""Run-time helpers for the adjoints of the unbuffered in-place updates
`np.multiply.at`, `np.divide.at`, `np.maximum.at` and `np.minimum.at`
(rules/scatter.py).

`ufunc.at(a, index, values)` applies the ufunc once per element of `values`
(broadcast against `a[index]`), so a slot named several times by `index`
is updated several times: for `multiply.at` it is multiplied by every value
sent there.  The helpers group those values by slot: the *slots* of an
update are the flat positions in `a` that `index` names, one per element of
the broadcast values.  Everything is exact, with zeros too (products of the
others, never a division).

Invariants: every helper returns fresh arrays and none mutates its
arguments.  Imports NumPy and `.core` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from .core import _float_dtype, _summed_to, size


def _values(values, like):
    """`values` as an array in the float dtype the update computes in."""
    vals = values if isinstance(values, (float, int)) else asarray(values)
    return asarray(vals, dtype=np.result_type(vals, _float_dtype(like)))


def _slots(like, index):
    """The flat position in `like` of each element of `like[index]`."""
    return np.arange(size(like)).reshape(np.shape(like))[index]


def product_at(like, index, values):
    """For each slot of `like`, the product of the values that
    `np.multiply.at(like, index, values)` multiplies into it (1 if none)."""
    vals = _values(values, like)
    out = np.ones(np.shape(like), dtype=vals.dtype)
    np.multiply.at(out, index, vals)
    return out


def others_at(like, index, values):
    """For each element of `values` (broadcast against `like[index]`), the
    product of the *other* values sent to the same slot (1 if none)."""
    slots = _slots(like, index)
    vals = np.broadcast_to(_values(values, like), np.shape(slots)).ravel()
    flat = np.ravel(slots)
    order = np.argsort(flat, kind="stable")
    group, sorted_vals = flat[order], vals[order]
    before = _exclusive_products(sorted_vals, group)
    after = _exclusive_products(sorted_vals[::-1], group[::-1])[::-1]
    out = np.empty_like(sorted_vals)
    out[order] = before * after
    return out.reshape(np.shape(slots))


def _exclusive_products(vals, group):
    """For each position, the product of the earlier values of its group
    (`group` sorted, so each group is contiguous): a segmented scan by
    doubling, O(n log(largest group)) and exact."""
    acc = vals.copy()
    k = 1
    while k < len(acc):
        same = group[k:] == group[:-k]
        if not same.any():
            break
        acc[k:] = np.where(same, acc[k:] * acc[:-k], acc[k:])
        k *= 2
    out = np.ones_like(vals)
    out[1:] = np.where(group[1:] == group[:-1], acc[:-1], 1)
    return out


def extremum_at_adjoints(g, z, old, index, values):
    """(d a, d values) for `np.maximum.at(a, index, values)` (or minimum),
    given `z` (a after the update) and `old` (`a[index]` before it): each
    slot's adjoint goes to the candidates equal to its result (its old
    element and the values sent there), split equally between ties; a NaN
    result gives no gradient."""
    g = asarray(g)
    new = z[index]
    sent = np.broadcast_to(_values(values, z), np.shape(new)) == new
    old_wins = np.ones(np.shape(z), dtype=bool)         # untouched slots keep a
    old_wins[index] = old == new
    count = old_wins.astype(g.dtype)
    np.add.at(count, index, sent)
    share = g / np.where(count == 0, 1, count)
    return np.where(old_wins, share, 0), _summed_to(share[index] * sent, values)
