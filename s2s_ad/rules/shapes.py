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
- The constructors that take only shapes and the queries returning indices,
  counts or booleans (`zeros`, `eye`, `argmax`, `nonzero`, `isnan`, ...) are
  declared non-differentiable.
"""
import numpy as np

from .. import runtime as rt
from .registry import Method, adjoint, nondifferentiable

d = None  # templates are never called: `d[x]` is the adjoint of x


# -- reshaping: the adjoint takes the operand's shape back -------------------
@adjoint(np.reshape, linear="a")
def reshape(z, a, *args, order="C", **kwargs):
    if order == "C":
        g = np.reshape(d[z], np.shape(a))
    else:
        g = np.reshape(d[z], np.shape(a), order=order)
    d[a] += g


@adjoint(np.ravel, Method("ravel"), Method("flatten"))
def ravel(z, a, order="C"):
    if order == "C":
        g = np.reshape(d[z], np.shape(a))
    else:
        g = np.reshape(d[z], np.shape(a), order=order)
    d[a] += g


@adjoint(np.squeeze, Method("squeeze"))
def squeeze(z, a, axis=None):
    d[a] += np.reshape(d[z], np.shape(a))


@adjoint(np.expand_dims)
def expand_dims(z, a, axis):
    d[a] += np.reshape(d[z], np.shape(a))


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd(z, arys):
    d[arys] += np.reshape(d[z], np.shape(arys))


@adjoint(np.broadcast_to)
def broadcast_to(z, array, shape):
    d[array] += rt.unbroadcast(d[z], array)


# -- permuting axes and elements ---------------------------------------------
@adjoint(np.transpose)
def transpose(z, a, axes=None):
    if axes is None:
        g = np.transpose(d[z])
    else:
        g = np.transpose(d[z], np.argsort(axes))
    d[a] += g


@adjoint(np.swapaxes, Method("swapaxes"))
def swapaxes(z, a, axis1, axis2):
    d[a] += np.swapaxes(d[z], axis1, axis2)


@adjoint(np.moveaxis)
def moveaxis(z, a, source, destination):
    d[a] += np.moveaxis(d[z], destination, source)


@adjoint(np.flip)
def flip(z, m, axis=None):
    d[m] += np.flip(d[z], axis)


@adjoint(np.fliplr)
def fliplr(z, m):
    d[m] += np.fliplr(d[z])


@adjoint(np.flipud)
def flipud(z, m):
    d[m] += np.flipud(d[z])


@adjoint(np.rot90)
def rot90(z, m, k=1, axes=(0, 1)):
    d[m] += np.rot90(d[z], -k, axes)


@adjoint(np.roll)
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


# -- joining and splitting ---------------------------------------------------
@adjoint(np.concatenate, linear="arrays")
def concatenate(z, arrays, axis=0):
    d[arrays] += rt.unconcatenate(d[z], arrays, axis)


@adjoint(np.stack, linear="arrays")
def stack(z, arrays, axis=0):
    d[arrays] += rt.unstack(d[z], axis)


@adjoint(np.hstack)
def hstack(z, tup):
    d[tup] += rt.unhstack(d[z], tup)


@adjoint(np.vstack)
def vstack(z, tup):
    d[tup] += rt.unvstack(d[z], tup)


@adjoint(np.dstack)
def dstack(z, tup):
    d[tup] += rt.undstack(d[z], tup)


@adjoint(np.column_stack)
def column_stack(z, tup):
    d[tup] += rt.uncolumn_stack(d[z], tup)


@adjoint(np.append)
def append(z, arr, values, axis=None):
    parts = rt.unconcatenate(d[z], (arr, values), axis)
    d[arr] += parts[0]
    d[values] += parts[1]


@adjoint(np.split, np.array_split)
def split(z, ary, indices_or_sections, axis=0):
    d[ary] += rt.unsplit(d[z], ary, indices_or_sections, axis)


# -- repeating and padding: copies' adjoints add up --------------------------
@adjoint(np.tile)
def tile(z, A, reps):
    d[A] += rt.untile(d[z], A, reps)


@adjoint(np.repeat, Method("repeat"))
def repeat(z, a, repeats, axis=None):
    d[a] += rt.unrepeat(d[z], a, repeats, axis)


@adjoint(np.pad)
def pad(z, array, pad_width, mode="constant", **kwargs):
    d[array] += rt.unpad(d[z], array, pad_width, mode)


# -- diagonals and triangles -------------------------------------------------
@adjoint(np.diag)
def diag(z, v, k=0):
    d[v] += rt.undiag(d[z], v, k)


@adjoint(np.diagonal, Method("diagonal"))
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


@adjoint(np.tril)
def tril(z, m, k=0):
    d[m] += np.tril(d[z], k)


@adjoint(np.triu)
def triu(z, m, k=0):
    d[m] += np.triu(d[z], k)


# -- selecting elements ------------------------------------------------------
@adjoint(np.take, Method("take"))
def take(z, a, indices, axis=None, *, mode="raise"):
    d[a] += rt.untake(d[z], a, indices, axis, mode)


@adjoint(np.take_along_axis)
def take_along_axis(z, arr, indices, axis=-1):
    d[arr] += rt.untake_along_axis(d[z], arr, indices, axis)


@adjoint(np.select)
def select(z, condlist, choicelist, default=0):
    # each element comes from the choice of the first true condition, else default
    parts = rt.select_adjoints(d[z], condlist, choicelist, default)
    d[choicelist] += parts[0]
    d[default] += parts[1]


@adjoint(np.choose)
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


@adjoint(np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray)
def asarray(z, a, dtype=None):
    # (ascontiguousarray and asfortranarray make a scalar a 1-element array)
    if dtype is None:
        g = d[z]
    else:
        g = rt.uncast(d[z], a, z)
    d[a] += np.reshape(g, np.shape(a))


@adjoint(np.copy, Method("copy"), Method("conj"), Method("conjugate"))
def copy(z, a, order="K"):
    d[a] += d[z]


# -- constructors whose values flow from an argument ---------------------------
@adjoint(np.full)
def full(z, shape, fill_value, dtype=None, order="C"):
    # z is fill_value broadcast to `shape` (no gradient if cast to an integer dtype)
    d[fill_value] += rt.unbroadcast(rt.uncast(d[z], fill_value, z), fill_value)


@adjoint(np.full_like)
def full_like(z, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    # z is fill_value broadcast to a's shape, in a's dtype: none of a's values
    d[fill_value] += rt.unbroadcast(rt.uncast(d[z], fill_value, z), fill_value)


@adjoint(np.linspace)
def linspace(z, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    # z = start + (stop - start) * t with t_i = i / (num - 1) (i / num without the endpoint)
    parts = rt.linspace_adjoints(d[z], start, stop, num, endpoint, retstep, dtype, axis)
    d[start] += parts[0]
    d[stop] += parts[1]


@adjoint(np.logspace)
def logspace(z, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    # z = base ** linspace(start, stop, num, endpoint)
    parts = rt.logspace_adjoints(d[z], z, start, stop, num, endpoint, base, dtype, axis)
    d[start] += parts[0]
    d[stop] += parts[1]
    d[base] += parts[2]


@adjoint(np.geomspace)
def geomspace(z, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    # z = start ** (1 - t) * stop ** t, t as in linspace
    parts = rt.geomspace_adjoints(d[z], z, start, stop, num, endpoint, dtype, axis)
    d[start] += parts[0]
    d[stop] += parts[1]


@adjoint(np.arange)
def arange(z, start_or_stop, /, stop=None, step=1, *, dtype=None):
    # z = start + i * step; the number of samples is piecewise constant in stop
    parts = rt.arange_adjoints(d[z], z, start_or_stop, stop, step)
    d[start_or_stop] += parts[0]
    d[step] += parts[1]


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
# random numbers of a given shape: no operand carries a value (samplers with
# parameters, `normal(mu, sigma)`, `permutation(x)`, have no rule)
nondifferentiable(*(getattr(np.random, name) for name in (
    "rand", "randn", "random", "random_sample", "ranf", "sample", "randint",
    "random_integers", "standard_normal", "standard_exponential", "standard_cauchy",
    "seed", "default_rng", "bytes") if hasattr(np.random, name)))
