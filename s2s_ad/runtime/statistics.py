"""Run-time helpers for the adjoints of statistics (rules/statistics.py):
the variables of `np.cov`/`np.corrcoef` as rows and back, the weights of
`np.percentile`/`np.quantile`, and the masks of `np.nanmax`/`np.nanmin`.

Invariants: every helper returns a fresh object and none mutates its
arguments.  Imports NumPy, `.core` and `.reductions` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray, is_duck, numpy_only
from .core import _axes, _float_dtype
from .reductions import _from_last, _to_last


# -- cov, corrcoef -------------------------------------------------------------
# NumPy < 2.2 reads a one-row `m` as one variable even when `rowvar` is false
# (numpy/numpy#27658); `y` is read so by every version
_COV_ROW_QUIRK = np.lib.NumpyVersion(np.__version__) < "2.2.0"


def _transposed(v, rowvar, first):
    """Whether `np.cov` transposes its argument `v` (`m` if `first`, else `y`)."""
    shape = np.shape(v)
    if rowvar:
        return False
    if first and not _COV_ROW_QUIRK:
        return len(shape) != 1
    return len(shape) == 2 and shape[0] != 1


def _rows_of(v, rowvar, first):
    """One argument of `np.cov` as NumPy reads it: 2-D, a row per variable."""
    dtype = np.result_type(_float_dtype(v), np.float64)
    x = np.atleast_2d(v).astype(dtype) if is_duck(v) else np.array(v, ndmin=2, dtype=dtype)
    return x.T if _transposed(v, rowvar, first) else x


def cov_variables(m, y=None, rowvar=True):
    """The matrix `np.cov(m, y, rowvar)` works on: one row per variable (m's,
    then y's), one column per observation, as a float64 array."""
    x = _rows_of(m, rowvar, True)
    return x if y is None else np.concatenate((x, _rows_of(y, rowvar, False)), axis=0)


def uncov_variables(g, m, y=None, rowvar=True, which=0):
    """The adjoint of m (`which` 0) or of y (1) from `g`, the adjoint of
    `cov_variables(m, y, rowvar)`: its rows for that argument, in the
    argument's shape."""
    shape = np.shape(m)
    rows = (1 if len(shape) < 2 else shape[1] if _transposed(m, rowvar, True)
            else shape[0])
    part = g[:rows] if which == 0 else g[rows:]
    v = m if which == 0 else y
    if _transposed(v, rowvar, which == 0):
        part = part.T
    return np.reshape(part, np.shape(v))


# -- percentile, quantile ------------------------------------------------------
def quantile_reads(a, q, axis, method):
    """What `np.quantile(a, q, axis, method=method)` reads: `a`'s slices
    along `axis` as rows (`_to_last`, with its layout), the quantiles `qs`
    (flat), and for each the order statistics `lo`, `hi` it interpolates
    with weight `frac` on `hi` (NumPy's own: the quantile of 0, ..., n-1)."""
    flat, layout = _to_last(numpy_only(a, "np.quantile"), axis)     # (np.argsort)
    n = flat.shape[-1]
    qs = np.ravel(asarray(q, dtype=np.float64))
    pos = np.ravel(np.quantile(np.arange(n, dtype=np.float64), qs, method=method))
    lo = np.clip(np.floor(pos), 0, n - 1).astype(np.intp)
    return flat, layout, qs, lo, np.minimum(lo + 1, n - 1), pos - lo


def quantile_adjoint(g, a, q, axis=None, method="linear"):
    """The adjoint of `np.quantile(a, q, axis, method=method)` (any
    `keepdims`): `g` spread on the order statistics each quantile reads.

    Every method of NumPy's reads, for each quantile, two neighbouring order
    statistics k and k + 1 of a slice and returns (1 - t) s_k + t s_(k+1),
    with k and t depending on q, the slice's length and the method only.
    They are NumPy's own: the quantile of 0, 1, ..., n-1 is k + t.  Order
    statistics come from `np.argsort`, as in `median_weights`, so equal
    elements are not split (the median and the 50th percentile agree).
    """
    flat, layout, qs, lo, hi, t = quantile_reads(a, q, axis, method)
    n = flat.shape[-1]
    w = np.zeros((qs.size, n))                  # quantile i = w[i] @ sorted slice
    np.add.at(w, (np.arange(qs.size), lo), 1.0 - t)
    np.add.at(w, (np.arange(qs.size), hi), t)
    gq = np.reshape(g, (qs.size,) + flat.shape[:-1])
    ranked = np.tensordot(gq, w, axes=(0, 0))   # the adjoint of each order statistic
    out = np.zeros(flat.shape, dtype=np.result_type(ranked, _float_dtype(a)))
    np.put_along_axis(out, np.argsort(flat, axis=-1), ranked, axis=-1)
    return _from_last(out, a, layout)


# -- nanmax, nanmin --------------------------------------------------------------
def nan_reduced_mask(x, z, axis=None, keepdims=False):
    """Where `x` attains the extremum `z` of a nanmax/nanmin reduction, ties
    split equally; NaNs (and so all-NaN slices) get 0."""
    if axis is not None and not keepdims:
        z = np.expand_dims(z, _axes(axis, np.ndim(x)))
    mask = (x == z).astype(_float_dtype(x))
    return mask / np.maximum(mask.sum(axis=axis, keepdims=True), 1)
