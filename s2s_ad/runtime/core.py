"""The adjoint values themselves, and the small utilities every part of the
runtime shares.

`unbroadcast` and `unreduce` move an adjoint between shapes; `Seq` and `Tree`
are the adjoints of lists/tuples and dicts (`+` adds item by item);
`zeros_like` builds a zero adjoint of any structure; `unindex` scatters the
adjoint of an indexing back.  The private helpers (`_axes`, `_float_dtype`,
`_as_float`, `_ndarray`) are imported by the sibling modules.

Invariants: every helper returns a fresh object or an immutable scalar and
none mutates its arguments (`unbroadcast` may return `g` itself when no
summing is needed: the compiler's ownership analysis, ownership.py, treats
such a result as `g` itself, so it is updated in place only where `g` is an
adjoint the generated code owns).
This module imports NumPy, the errors, `origins`, `duck` and `zero` only, never the
package or another sibling: it is the root of the runtime's import graph.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedValueError
from .duck import asarray, is_duck, numpy_only
from .origins import origin
from .zero import ZERO

_ndarray = np.ndarray
_FLOATS = (float, np.float64)
_FLOAT64 = np.dtype(np.float64)


def unbroadcast(g, like, full=None):
    """Sum `g` down to the shape of `like` (undo NumPy broadcasting).

    `g` may be *compact*: smaller than the value it is the adjoint of, which
    it stands for broadcast (a reduction's adjoint is its result's adjoint,
    not a filled array).  Axes `g` lacks stay lacking.  Summing is exact as
    long as `g` spans every axis along which `like` was broadcast; where it
    may not, the caller passes `full`, a value with the broadcast result's
    shape, and `g` is spread over it first.
    """
    if full is None:
        kind = type(like)
        if kind is float:                                   # scalar code
            return g if type(g) is float else _scalar_sum(g)
        if kind is np.float64 and type(g) in _FLOATS or \
                kind is _ndarray and type(g) is _ndarray and g.shape == like.shape:
            return g                                        # (the common cases, fast)
    if g is ZERO:                   # a replaced item's: a zero of `like`'s shape
        return zeros_like(like)
    shape, gshape = _shape(like), _shape(g)
    if full is not None and gshape != _shape(full):
        if _shape(full) == shape:
            return expand(g, full)
        g = np.broadcast_to(g, _shape(full))        # summed below: never returned
        gshape = g.shape
    if isinstance(like, (list, tuple)) and _longer(g, gshape, shape):
        _refuse_joined()
    if gshape == shape:
        return g
    if not shape:
        return g.sum() if type(g) is _ndarray else np.sum(g)
    return _summed_down(g, gshape, shape)


def _summed_down(g, gshape: tuple, shape: tuple):
    """`g` summed over its leading axes and the axes `shape` has as 1."""
    lead = len(gshape) - len(shape)
    if lead > 0:
        g = np.sum(g, axis=tuple(range(lead)))
        gshape = gshape[lead:]
    skip = len(shape) - len(gshape)                 # axes a compact g lacks
    axes = tuple(i for i, n in enumerate(gshape)
                 if n != 1 and shape[skip + i] == 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return g


def _longer(g, gshape: tuple, shape: tuple) -> bool:
    """Whether the adjoint `g` of a list is longer than the list, which
    broadcasting cannot make it: `+` joined or `*` repeated the list."""
    if type(g) is Seq:
        return len(g) > shape[0]
    return len(gshape) == len(shape) and len(shape) > 0 and gshape[0] > shape[0]


def _scalar_sum(g):
    """`g` summed to a Python float; a complex sum stays complex, for the
    gradient boundary to refuse rather than lose its imaginary part."""
    if g is ZERO:
        return 0.0
    total = np.sum(g)
    if is_duck(total):
        return total                    # (lazy: `like` keeps it so)
    return complex(total) if np.iscomplexobj(total) else float(total)


def size(x) -> int:
    """`np.size(x)`, read off the shape (Dask implements no `np.size`, and
    would compute the array to count it)."""
    return math.prod(_shape(x))


def _shape(x) -> tuple:
    """`np.shape(x)`, fast for arrays and NumPy scalars; a list or tuple of
    items of different shapes has its length as its shape."""
    if type(x) is float:
        return ()
    shape = getattr(x, "shape", None)
    if type(shape) is tuple:
        return shape
    try:
        return np.shape(x)
    except ValueError:      # items of different shapes (`(a, 1)`): a sequence of them
        return (len(x),)


def expand(g, like):
    """A compact adjoint `g` spread to the shape of `like` (a fresh array)."""
    if g is ZERO:
        return zeros_like(like)
    if isinstance(like, (list, tuple)):         # the adjoint of a list: its items'
        if isinstance(g, (list, tuple)):        # (an item's may be a compact one:
            if len(g) != len(like):             # a zeroed slot plus a mean's)
                return g
            return Seq(part if part is ZERO else expand(part, item)
                       for part, item in zip(g, like))
        return Seq(expand(part, item) for part, item in zip(_rows(g, len(like)), like))
    shape = np.shape(like)
    if np.shape(g) == shape:
        return g
    return _filled(shape, np.result_type(_float_dtype(g), _float_dtype(like)), g, like)


def _filled(shape, dtype, g, like):
    """A fresh array of `shape` and `dtype` holding `g` broadcast; of the
    duck array type of `g` or `like` if either is one (lazy for Dask)."""
    base = g if is_duck(g) else like if is_duck(like) else None
    if base is not None:
        return np.zeros_like(base, shape=shape, dtype=dtype) + g
    out = np.empty(shape, dtype=dtype)
    out[...] = g
    return out


def spread(like, g):
    """`np.full_like(like, g)`: `g` (a reduction's adjoint) spread over an
    array shaped like `like`.  A duck array's own `full_like` may take only
    a scalar `g` (Dask's does), so for one it is zeros plus `g`."""
    if g is ZERO:
        return zeros_like(like)
    if type(like) is _ndarray and type(g) in _FLOATS or not (is_duck(like) or is_duck(g)):
        return np.full_like(like, g)        # (the common case first: a hot path)
    return _filled(np.shape(like), _float_dtype(like), g, like)


def split(g, ends, axis=0) -> list:
    """`np.split(g, ends, axis)` by slicing (views of `g`, as NumPy's), which
    any array type takes: Dask implements no `np.split`."""
    axis %= np.ndim(g)
    bounds = [0, *(int(e) for e in ends), np.shape(g)[axis]]
    lead = (slice(None),) * axis
    return [g[lead + (slice(lo, hi),)] for lo, hi in zip(bounds, bounds[1:])]


def unreduce(g, like, axis=None, keepdims=False):
    """Spread the adjoint of a reduction over `axis` back to `like`'s shape."""
    if g is ZERO:
        return zeros_like(like)
    shape = np.shape(like)
    dtype = np.result_type(g, _float_dtype(like))    # a Python float stays weak
    g = asarray(g)
    if axis is not None and not keepdims:
        g = np.expand_dims(g, _axes(axis, len(shape)))
    out = _filled(shape, dtype, g, like)
    return out if shape or is_duck(out) else out[()]


def _axes(axis, ndim):
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim for a in axes)


def _float_dtype(x):
    dtype = _sequence_dtype(x) if isinstance(x, (list, tuple)) else np.result_type(x)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _sequence_dtype(items):
    """The dtype NumPy gives a list or tuple of numbers and arrays (which
    `np.result_type` would read as a structured dtype's fields); for items
    of different shapes, which make no array, the common dtype of the items."""
    try:
        if any(map(is_duck, items)):
            raise ValueError        # (NumPy would compute them to tell)
        return np.asarray(items).dtype
    except ValueError:
        return np.result_type(*(_float_dtype(i) for i in items)) if items else np.float64


def _summed_to(g, like):
    """`g` summed back to the shape of `like` (un-broadcast), in `like`'s
    float dtype: a Python float for a Python float."""
    if g is ZERO:
        return zeros_like(like)
    g = unbroadcast(asarray(g), like)
    dtype, shape = np.dtype(_float_dtype(like)), np.shape(like)
    if not shape and is_duck(g):
        return g.astype(dtype)          # (lazy: `like` keeps it so)
    if type(like) is float:
        return float(g)
    if not shape:
        return dtype.type(g)
    return _filled(shape, dtype, g, like)


def _as_float(g, *likes):
    """`g` as an array of the float dtype the gradients of `likes` have."""
    return asarray(g, dtype=np.result_type(g, *(_float_dtype(x) for x in likes)))


def unindex(g, like, index):
    """The adjoint of `like[index]`: `g` scattered into zeros (repeats add).

    For a list, tuple or dict `like` it is a `Seq` or `Tree` of zeros
    shaped like its items, with `g` at `index`.  Of `ZERO`, zeros.
    """
    if g is ZERO:
        return zeros_like(like)
    if isinstance(like, (list, tuple)):
        out = Seq(zeros_like(item) for item in like)
        if isinstance(index, slice):
            for j, part in zip(range(*index.indices(len(like))), g):
                out[j] = out[j] + part
        else:
            out[index] = out[index] + g
        return out
    if isinstance(like, dict):
        out = Tree((k, zeros_like(v)) for k, v in like.items())
        out[index] = out[index] + g
        return out
    if type(like) is _ndarray and type(index) is int and type(g) in _FLOATS \
            and like.dtype == _FLOAT64 and like.ndim:
        out = np.zeros(like.shape)      # (one element of a float array: scalar code)
        out[index] = g
        return out
    if is_duck(like) or is_duck(g):
        return _duck_unindex(g, like, index)
    out = np.zeros(np.shape(like), dtype=np.result_type(g, _float_dtype(like)))
    if repeats_possible(index):
        np.add.at(out, index, g)        # repeated indices accumulate
    else:
        out[index] += g
    return out if out.shape else out[()]


def _duck_unindex(g, like, index):
    """`unindex` where `like` or `g` is a duck array: zeros of its type,
    `g` written into them (Dask arrays take slices and one 1-d index array).
    Repeated indices would need `np.add.at`, which NumPy alone has."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        numpy_only(part, "indexing with a lazy index")
    if repeats_possible(index):
        numpy_only(like if is_duck(like) else g, "indexing with integer arrays")
    base = like if is_duck(like) else g
    shape = np.shape(like)
    out = np.zeros_like(base, shape=shape,
                        dtype=np.result_type(g.dtype if is_duck(g) else g, _float_dtype(like)))
    picked = np.broadcast_to(0.0, shape)        # (O(1) memory: for the indexed shapes)
    if any(part is None for part in parts):     # (Dask's setitem takes no np.newaxis)
        g = np.broadcast_to(g, picked[index].shape)
        index = tuple(part for part in parts if part is not None)
        g = np.reshape(g, picked[index].shape)
    out[index] = np.broadcast_to(g, picked[index].shape)
    return out


def repeats_possible(index) -> bool:
    """Whether `index` may name one slot several times (integer arrays)."""
    if type(index) is int:
        return False
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (list, np.ndarray)) and np.asarray(p).dtype.kind in "iu"
               for p in parts)


class Seq(list):
    """The adjoint of a tuple or list: `+` adds item by item (NumPy defers)
    and, as arithmetic does for ownership.py, always gives a new list (its
    arrays shared: an adjoint's arrays are never written)."""

    __array_ufunc__ = None

    def __add__(self, other):
        if isinstance(other, (int, float)) and other == 0 or other is ZERO:
            return Seq(self)
        if not isinstance(other, (list, tuple)):    # an array adjoint of the list
            other = _rows(other, len(self))
        out = Seq(a + b for a, b in zip(self, other))
        # a list that grew by appends: the shorter adjoint is zero past its end
        out.extend(self[len(out):] if len(self) > len(out) else other[len(out):])
        return out

    __radd__ = __add__

    def __mul__(self, other):
        """Generated code multiplies the adjoint of a list only when `*`
        repeated that list under a rule for NumPy's `*`."""
        _refuse_joined()

    __rmul__ = __mul__


def _refuse_joined():
    raise UnsupportedValueError(
        "a list or tuple was joined with `+` or repeated with `*` here, where "
        "s2s_ad could not tell that it was a list (it differentiated NumPy's "
        "item-by-item `+` and `*`)", origin(),
        hint="build the list in the function (`list(xs)`, a list display or "
             "comprehension) before joining it, or use np.concatenate / np.tile")


def _rows(g, n: int):
    """An array adjoint (or a compact scalar one) of an n-item list, as its
    n items."""
    if np.ndim(g) == 0:
        return [g] * n
    return list(np.broadcast_to(g, (n,) + np.shape(g)[1:]))


class Tree(dict):
    """The adjoint of a dict: `+` adds value by value (NumPy defers), into a
    new dict, as `Seq`'s `+`."""

    __array_ufunc__ = None

    def __add__(self, other):
        if isinstance(other, (int, float)) and other == 0 or other is ZERO:
            return Tree(self)
        out = Tree(self)
        for k, v in other.items():
            out[k] = out[k] + v if k in out else v
        return out

    __radd__ = __add__


def shape_only(x):
    """A stand-in for `x` where the reverse sweep reads only its type,
    structure, shape and dtype (un-broadcasting to it, expanding to it, a
    zero adjoint like it): zero data, an array's held in O(1) memory (a
    read-only broadcast of one zero).  A value of another type is kept
    itself."""
    kind = type(x)
    if kind is float:
        return 0.0
    if kind is np.ndarray:
        return np.broadcast_to(np.zeros((), dtype=x.dtype), x.shape)
    if kind is list or kind is tuple:
        return kind(shape_only(item) for item in x)
    if kind is dict:
        return {k: shape_only(v) for k, v in x.items()}
    if isinstance(x, np.generic) and kind.__module__ == "numpy":
        return x.dtype.type(0)
    return x


def zeros_like(x):
    """A zero adjoint for `x`: the same structure, shapes and float dtype."""
    if type(x) is float:
        return 0.0
    if isinstance(x, (list, tuple)):
        return Seq(zeros_like(item) for item in x)
    if isinstance(x, dict):
        return Tree((k, zeros_like(v)) for k, v in x.items())
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=_float_dtype(x))
    if isinstance(x, np.generic):
        return _float_dtype(x).type(0)
    if is_duck(x):                      # of x's own array type (lazy for Dask)
        return np.zeros_like(x, dtype=_float_dtype(x))
    return 0.0
