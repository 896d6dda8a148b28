"""Rules for shape manipulation, array construction, indexing-like
selection and sorting, and the zero-gradient constructors and queries.

Conventions:
- Every rule here moves or copies elements: the adjoint moves `d[z]` back
  (reshape, transpose, flip, roll, ...) or scatters it into zeros, adding
  where an element was used several times (tile, repeat, take, pad).
- Functions of a sequence (`np.stack((a, b))`, `np.array([x, y])`) contribute
  a list, item i to element i (`d[arrays] += [...]`).
- Functions returning a list (`np.split`) receive their adjoint as a list or
  as an array stacking equal pieces.
- `atleast_1d/2d/3d` are differentiated for one argument only.
- `pad` supports the modes that copy elements (constant, edge, reflect,
  symmetric, wrap); `constant_values` get no gradient.
- `sort` sends each sorted element's adjoint back to where it came from
  (ties in any order); `take(mode=...)` honours 'wrap' and 'clip'.
- A dtype conversion (`np.array(x, dtype=...)`) sends the gradient back in
  the operand's float dtype; a cast to an integer or bool dtype has none.
- Constructors whose values come from an argument are differentiated with
  respect to it: `full`/`full_like` (the fill value, also an array that
  broadcasts), `linspace` (start and stop, arrays too, `endpoint`, `axis`,
  `retstep`), `logspace` (also `base`), `geomspace`, `arange` (start and
  step; the number of samples is piecewise constant in stop).  Samples cast
  to an integer `dtype` have no gradient.
- `select` sends each element's adjoint to the choice of the first true
  condition (else to `default`); `choose` to the choice its index names
  (`mode` 'wrap' and 'clip' honoured; `out=` is rejected).
- Forward mode: the functions that move, copy or select elements are linear
  in their array operands (their tangent is the same call on the tangents);
  `sort`, `pad`, the conversions and the constructors have tangent templates
  following the conventions above (`constant_values` and samples cast to an
  integer dtype have none).  A tangent is in the result's float dtype.
- The constructors that take only shapes and the queries returning indices,
  counts or booleans (`zeros`, `eye`, `argmax`, `nonzero`, `isnan`, ...) are
  declared non-differentiable.
"""
import numpy as np

from .. import runtime as rt
from .registry import Method, adjoint, nondifferentiable, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


# -- reshaping: the adjoint takes the operand's shape back -------------------
@adjoint(np.reshape, linear="a")
def reshape(z, a, *args, order="C", **kwargs):
    if order == "C":
        g = np.reshape(d[z], np.shape(a))
    else:       # (in the order `a` is read in: "A" depends on its layout)
        g = rt.reshape_as(d[z], np.shape(a), a, order)
    d[a] += g


@tangent(np.reshape)
def reshape_tangent(z, a, *args, order="C", **kwargs):
    if order == "C":
        t[z] += np.reshape(t[a], np.shape(z))
    else:
        t[z] += rt.reshape_as(t[a], np.shape(z), a, order)


@adjoint(np.ravel, Method("ravel"), Method("flatten"), linear="a")
def ravel(z, a, order="C"):
    if order == "C":
        g = np.reshape(d[z], np.shape(a))
    else:       # ("A" and "K" depend on `a`'s layout)
        g = rt.reshape_as(d[z], np.shape(a), a, order)
    d[a] += g


@tangent(np.ravel, Method("ravel"), Method("flatten"))
def ravel_tangent(z, a, order="C"):
    if order == "C":
        t[z] += np.ravel(t[a])
    else:
        t[z] += rt.reshape_as(t[a], np.shape(z), a, order)


# `x.flat[i]` read (a copy) and the view `x.flat[i] = v` writes through
@adjoint(rt.flat_get, linear="a", inert="index")
def flat_get(z, a, index):
    d[a] += np.reshape(rt.unindex(d[z], np.ravel(a), index), np.shape(a))


@tangent(rt.flat_get, inert="index")
def flat_get_tangent(z, a, index):
    t[z] += rt.flat_get(t[a], index)


@adjoint(rt.flat_view, linear="a", inert="where")
def flat_view(z, a, where):
    d[a] += np.reshape(d[z], np.shape(a))


@tangent(rt.flat_view, inert="where")
def flat_view_tangent(z, a, where):
    t[z] += np.ravel(t[a])


@adjoint(np.squeeze, Method("squeeze"), linear="a")
def squeeze(z, a, axis=None):
    d[a] += np.reshape(d[z], np.shape(a))


@adjoint(np.expand_dims, linear="a")
def expand_dims(z, a, axis):
    d[a] += np.reshape(d[z], np.shape(a))


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d, linear="arys")
def atleast_nd(z, arys):
    d[arys] += np.reshape(d[z], np.shape(arys))


@adjoint(np.broadcast_to, linear="array")
def broadcast_to(z, array, shape):
    d[array] += rt.unbroadcast(d[z], array)


# -- permuting axes and elements ---------------------------------------------
@adjoint(np.transpose, linear="a")
def transpose(z, a, axes=None):
    if axes is None:
        g = np.transpose(d[z])
    else:
        g = np.transpose(d[z], np.argsort(axes))
    d[a] += g


@adjoint(np.swapaxes, Method("swapaxes"), linear="a")
def swapaxes(z, a, axis1, axis2):
    d[a] += np.swapaxes(d[z], axis1, axis2)


@adjoint(np.moveaxis, linear="a")
def moveaxis(z, a, source, destination):
    d[a] += np.moveaxis(d[z], destination, source)


@adjoint(np.flip, linear="m")
def flip(z, m, axis=None):
    d[m] += np.flip(d[z], axis)


@adjoint(np.fliplr, linear="m")
def fliplr(z, m):
    d[m] += np.fliplr(d[z])


@adjoint(np.flipud, linear="m")
def flipud(z, m):
    d[m] += np.flipud(d[z])


@adjoint(np.rot90, linear="m")
def rot90(z, m, k=1, axes=(0, 1)):
    d[m] += np.rot90(d[z], -k, axes)


@adjoint(np.roll, linear="a")
def roll(z, a, shift, axis=None):
    d[a] += np.roll(d[z], np.negative(shift), axis)


@adjoint(np.sort)
def sort(z, a, axis=-1, kind=None):
    # the inverse permutation puts each sorted element's adjoint back
    inverse = np.argsort(np.argsort(a, axis=axis), axis=axis)
    if axis is None:
        g = np.reshape(np.take_along_axis(d[z], inverse, axis=None), np.shape(a))
    else:
        g = np.take_along_axis(d[z], inverse, axis=axis)
    d[a] += g


@tangent(np.sort)
def sort_tangent(z, a, axis=-1, kind=None):
    # the tangent moves with its element (the adjoint's permutation, inverted)
    t[z] += np.take_along_axis(np.asarray(t[a]), np.argsort(a, axis=axis), axis=axis)


# -- joining and splitting ---------------------------------------------------
@adjoint(np.concatenate, linear="arrays")
def concatenate(z, arrays, axis=0):
    d[arrays] += rt.unconcatenate(d[z], arrays, axis)


@adjoint(np.stack, linear="arrays")
def stack(z, arrays, axis=0):
    d[arrays] += rt.unstack(d[z], axis)


@adjoint(np.hstack, linear="tup")
def hstack(z, tup):
    d[tup] += rt.unhstack(d[z], tup)


@adjoint(np.vstack, linear="tup")
def vstack(z, tup):
    d[tup] += rt.unvstack(d[z], tup)


@adjoint(np.dstack, linear="tup")
def dstack(z, tup):
    d[tup] += rt.undstack(d[z], tup)


@adjoint(np.column_stack, linear="tup")
def column_stack(z, tup):
    d[tup] += rt.uncolumn_stack(d[z], tup)


@adjoint(np.append, linear=("arr", "values"))
def append(z, arr, values, axis=None):
    parts = rt.unconcatenate(d[z], (arr, values), axis)
    d[arr] += parts[0]
    d[values] += parts[1]


@adjoint(np.split, np.array_split, linear="ary", inert="indices_or_sections")
def split(z, ary, indices_or_sections, axis=0):
    d[ary] += rt.unsplit(d[z], ary, indices_or_sections, axis)


# -- repeating and padding: copies' adjoints add up --------------------------
@adjoint(np.tile, linear="A")
def tile(z, A, reps):
    d[A] += rt.untile(d[z], A, reps)


@adjoint(np.repeat, Method("repeat"), linear="a", inert="repeats")
def repeat(z, a, repeats, axis=None):
    d[a] += rt.unrepeat(d[z], a, repeats, axis)


@adjoint(np.pad)
def pad(z, array, pad_width, mode="constant", **kwargs):
    d[array] += rt.unpad(d[z], array, pad_width, mode)


@tangent(np.pad)
def pad_tangent(z, array, pad_width, mode="constant", **kwargs):
    # copies of the tangent; constant (and empty) padding pads zeros, as
    # constant_values get no gradient; a mode computing statistics is not in
    # the table (KeyError), as rt.unpad refuses it
    copied = {"constant": "constant", "empty": "constant", "edge": "edge",
              "reflect": "reflect", "symmetric": "symmetric", "wrap": "wrap"}[mode]
    t[z] += np.pad(t[array], pad_width, copied)


# -- diagonals and triangles -------------------------------------------------
@adjoint(np.diag, linear="v")
def diag(z, v, k=0):
    d[v] += rt.undiag(d[z], v, k)


@adjoint(np.diagflat, linear="v", inert="k")
def diagflat(z, v, k=0):
    d[v] += np.reshape(rt.undiag(d[z], np.ravel(v), k), np.shape(v))


@adjoint(np.diagonal, Method("diagonal"), linear="a")
def diagonal(z, a, offset=0, axis1=0, axis2=1):
    d[a] += rt.undiagonal(d[z], a, offset, axis1, axis2)


@adjoint(np.trace, Method("trace"))
def trace(z, a, offset=0, axis1=0, axis2=1, dtype=None):
    # (a sum cast to an integer dtype has no gradient)
    if dtype is None:
        g = d[z]
    else:
        g = rt.uncast(d[z], z, z)
    d[a] += rt.undiagonal(np.expand_dims(g, -1), a, offset, axis1, axis2)


@tangent(np.trace, Method("trace"))
def trace_tangent(z, a, offset=0, axis1=0, axis2=1, dtype=None):
    t[z] += rt.uncast(np.trace(t[a], offset, axis1, axis2), z, z)


@adjoint(np.tril, linear="m")
def tril(z, m, k=0):
    d[m] += np.tril(d[z], k)


@adjoint(np.triu, linear="m")
def triu(z, m, k=0):
    d[m] += np.triu(d[z], k)


# -- selecting elements ------------------------------------------------------
@adjoint(np.take, Method("take"), linear="a", inert="indices")
def take(z, a, indices, axis=None, *, mode="raise"):
    d[a] += rt.untake(d[z], a, indices, axis, mode)


@adjoint(np.delete, linear="arr", inert="obj")
def delete(z, arr, obj, axis=None):
    d[arr] += rt.untake(d[z], arr, rt.kept_indices(arr, obj, axis), axis)


nondifferentiable(rt.kept_indices)


@adjoint(np.compress, linear="a", inert="condition")
def compress(z, condition, a, axis=None):
    d[a] += rt.untake(d[z], a, np.flatnonzero(condition), axis)


@adjoint(np.take_along_axis, linear="arr", inert="indices")
def take_along_axis(z, arr, indices, axis=-1):
    d[arr] += rt.untake_along_axis(d[z], arr, indices, axis)


@adjoint(np.select, linear=("choicelist", "default"), inert="condlist")
def select(z, condlist, choicelist, default=0):
    # each element comes from the choice of the first true condition, else default
    parts = rt.select_adjoints(d[z], condlist, choicelist, default)
    d[choicelist] += parts[0]
    d[default] += parts[1]


@adjoint(np.choose, linear="choices", inert="a")
def choose(z, a, choices, *, mode="raise"):
    d[choices] += rt.choose_adjoints(d[z], a, choices, mode)


# -- construction and conversion ---------------------------------------------
@adjoint(np.array)
def array(z, object, dtype=None, *, copy=True, order="K"):
    if dtype is None:
        g = d[z]
    else:
        g = rt.uncast(d[z], object, z)
    d[object] += g


@tangent(np.array)
def array_tangent(z, object, dtype=None, *, copy=True, order="K"):
    # in the result's float dtype; zeros for a cast to an integer or bool dtype
    t[z] += rt.uncast(np.reshape(t[object], np.shape(z)), z, z)


@adjoint(np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray)
def asarray(z, a, dtype=None):
    # (ascontiguousarray and asfortranarray make a scalar a 1-element array)
    if dtype is None:
        g = d[z]
    else:
        g = rt.uncast(d[z], a, z)
    d[a] += np.reshape(g, np.shape(a))


@tangent(np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray)
def asarray_tangent(z, a, dtype=None):
    t[z] += rt.uncast(np.reshape(t[a], np.shape(z)), z, z)


@adjoint(np.copy, Method("copy"), Method("conj"), Method("conjugate"), linear="a")
def copy(z, a, order="K"):
    d[a] += d[z]


# -- constructors whose values flow from an argument ---------------------------
@adjoint(np.full)
def full(z, shape, fill_value, dtype=None, order="C"):
    # z is fill_value broadcast to `shape` (no gradient if cast to an integer dtype)
    d[fill_value] += rt.unbroadcast(rt.uncast(d[z], fill_value, z), fill_value)


@tangent(np.full)
def full_tangent(z, shape, fill_value, dtype=None, order="C"):
    t[z] += rt.uncast(np.full(np.shape(z), t[fill_value]), z, z)


@adjoint(np.full_like, inert="a")
def full_like(z, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    # z is fill_value broadcast to a's shape, in a's dtype: none of a's values
    d[fill_value] += rt.unbroadcast(rt.uncast(d[z], fill_value, z), fill_value)


@tangent(np.full_like)
def full_like_tangent(z, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    t[z] += rt.uncast(np.full(np.shape(z), t[fill_value]), z, z)


@adjoint(np.linspace)
def linspace(z, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    # z = start + (stop - start) * t with t_i = i / (num - 1) (i / num without the endpoint)
    parts = rt.linspace_adjoints(d[z], start, stop, num, endpoint, retstep, dtype, axis)
    d[start] += parts[0]
    d[stop] += parts[1]


@tangent(np.linspace)
def linspace_tangent(z, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    # linear in (start, stop) jointly; samples cast to an integer dtype: none;
    # the step of one sample with the endpoint (nan) gets none, as in the adjoint
    if retstep:
        div = num - 1 if endpoint else num
        t[z] += (rt.uncast(np.linspace(t[start], t[stop], num, endpoint, axis=axis), z[0], z[0]),
                 (t[stop] - t[start]) * (1.0 / div if div > 0 else 0.0))
    else:
        t[z] += rt.uncast(np.linspace(t[start], t[stop], num, endpoint, axis=axis), z, z)


@adjoint(np.logspace)
def logspace(z, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    # z = base ** linspace(start, stop, num, endpoint)
    parts = rt.logspace_adjoints(d[z], z, start, stop, num, endpoint, base, dtype, axis)
    d[start] += parts[0]
    d[stop] += parts[1]
    d[base] += parts[2]


@tangent(np.logspace)
def logspace_tangent(z, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    # dz = z (ln(base) dy + y dbase / base), y = linspace(start, stop); an
    # array base gets the samples' axis, as in NumPy
    nd = np.broadcast(start, stop, base).ndim
    b = np.expand_dims(np.array(base, ndmin=nd), axis)
    t[z] += rt.uncast(z * np.log(b) * np.linspace(np.array(t[start], ndmin=nd), np.array(
        t[stop], ndmin=nd), num, endpoint, axis=axis), z, z)
    t[z] += rt.uncast(z * np.linspace(np.array(start, ndmin=nd), np.array(
        stop, ndmin=nd), num, endpoint, axis=axis) / b * np.expand_dims(
        np.array(t[base], ndmin=nd), axis), z, z)


@adjoint(np.geomspace)
def geomspace(z, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    # z = start ** (1 - t) * stop ** t, t as in linspace
    parts = rt.geomspace_adjoints(d[z], z, start, stop, num, endpoint, dtype, axis)
    d[start] += parts[0]
    d[stop] += parts[1]


@tangent(np.geomspace)
def geomspace_tangent(z, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    # dz = z ((1 - t) dstart / start + t dstop / stop)
    t[z] += rt.uncast(z * np.linspace(t[start] / start, t[stop] / stop, num, endpoint,
                                      axis=axis), z, z)


@adjoint(np.arange, inert="stop")
def arange(z, start_or_stop, /, stop=None, step=1, *, dtype=None):
    # z = start + i * step; the number of samples is piecewise constant in stop
    parts = rt.arange_adjoints(d[z], z, start_or_stop, stop, step)
    d[start_or_stop] += parts[0]
    d[step] += parts[1]


@tangent(np.arange)
def arange_tangent(z, start_or_stop, /, stop=None, step=1, *, dtype=None):
    # dz_i = dstart + i dstep (`arange(stop)` starts at 0; `is` would warn of a literal stop)
    given = 0.0 if isinstance(stop, type(None)) else 1.0
    t[z] += rt.uncast(np.full(np.shape(z), t[start_or_stop] * given), z, z)
    t[z] += rt.uncast(np.arange(rt.size(z)) * t[step], z, z)


nondifferentiable(np.shape, np.ndim, np.size, np.argmax, np.argmin, np.argsort,
                  np.nanargmax, np.nanargmin, np.argwhere, np.flatnonzero,
                  np.lexsort, np.searchsorted, np.nonzero, np.count_nonzero,
                  np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like,
                  np.empty_like, np.eye, np.identity, np.tri,
                  np.indices, np.diag_indices, np.tril_indices, np.triu_indices,
                  np.unravel_index, np.ravel_multi_index, np.isfinite, np.isnan,
                  np.isinf, np.isreal, np.signbit, np.allclose, np.isclose,
                  np.array_equal, np.any, np.all, np.equal, np.not_equal, np.less,
                  np.less_equal, np.greater, np.greater_equal, np.logical_and,
                  np.logical_or, np.logical_not, np.logical_xor)
# dtypes and casting questions: a type, never a number
nondifferentiable(np.result_type, np.promote_types, np.can_cast, np.min_scalar_type,
                  np.common_type)
# random numbers of a given shape: no operand carries a value (samplers with
# parameters, `normal(mu, sigma)`, `permutation(x)`, have no rule)
nondifferentiable(*(getattr(np.random, name) for name in (
    "rand", "randn", "random", "random_sample", "ranf", "sample", "randint",
    "random_integers", "standard_normal", "standard_exponential", "standard_cauchy",
    "seed", "default_rng", "bytes") if hasattr(np.random, name)))
