"""Rules for ndarray methods (`x.sum(axis=0)`, `x.reshape(3, 4)`, ...).

A method rule is keyed by `Method(name)`, whatever the receiver's type, and
its template names the receiver `self`.  Each mirrors the rule of the NumPy
function of the same name (see reductions.py, shapes.py, linalg.py for the
conventions) with the method's own parameter order: `x.sum(0)` binds
`axis=0`.  As there, a template lists only the parameters its gradient
honours, so a call using another one is rejected at compile time.

`x.astype(dtype)` sends the gradient back in `x`'s float dtype (none for a
cast to an integer or bool dtype); `x.item()` takes no index.
"""
import numpy as np

from .. import runtime as rt
from .registry import ELEMENTWISE, REDUCTION, SCALAR, Attr, Method, adjoint, nondifferentiable

d = None  # templates are never called: `d[x]` is the adjoint of x


# -- reductions --------------------------------------------------------------
@adjoint(Method("sum"), shape=REDUCTION)
def sum(z, self, axis=None, dtype=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[self] += np.full_like(self, g)


@adjoint(Method("mean"), shape=REDUCTION)
def mean(z, self, axis=None, dtype=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[self] += np.full_like(self, g / (np.size(self) / np.size(z)))


@adjoint(Method("prod"), shape=REDUCTION)
def prod(z, self, axis=None, dtype=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[self] += g * rt.prod_others(self, axis)


@adjoint(Method("max"), Method("min"), shape=REDUCTION)
def extremum(z, self, axis=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[self] += g * rt.reduced_mask(self, z, axis, keepdims)


@adjoint(Method("var"), shape=REDUCTION)
def var(z, self, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    n = np.size(self) / np.size(z) - ddof
    d[self] += g * (2.0 / n) * (self - np.mean(self, axis=axis, keepdims=True))


@adjoint(Method("std"), shape=REDUCTION)
def std(z, self, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
        r = z
    else:
        g = np.expand_dims(d[z], axis)
        r = np.expand_dims(z, axis)
    n = np.size(self) / np.size(z) - ddof
    d[self] += g / (n * r) * (self - np.mean(self, axis=axis, keepdims=True))


@adjoint(Method("cumsum"))
def cumsum(z, self, axis=None, dtype=None):
    if axis is None:        # the result is flat
        g = np.reshape(np.flip(np.cumsum(np.flip(d[z]))), np.shape(self))
    else:
        g = np.flip(np.cumsum(np.flip(d[z], axis), axis), axis)
    d[self] += g


@adjoint(Method("cumprod"))
def cumprod(z, self, axis=None, dtype=None):
    d[self] += rt.cumprod_adjoint(d[z], self, z, axis)


@adjoint(Method("trace"))
def trace(z, self, offset=0, axis1=0, axis2=1, dtype=None):
    d[self] += rt.undiagonal(np.expand_dims(d[z], -1), self, offset, axis1, axis2)


@adjoint(Method("item"), shape=SCALAR)
def item(z, self):
    d[self] += np.full_like(self, d[z])


# -- shapes ------------------------------------------------------------------
@adjoint(Method("reshape"))
def reshape(z, self, *shape, order="C"):
    if order == "C":
        g = np.reshape(d[z], np.shape(self))
    else:
        g = np.reshape(d[z], np.shape(self), order=order)
    d[self] += g


@adjoint(Method("ravel"), Method("flatten"))
def ravel(z, self, order="C"):
    if order == "C":
        g = np.reshape(d[z], np.shape(self))
    else:
        g = np.reshape(d[z], np.shape(self), order=order)
    d[self] += g


@adjoint(Method("squeeze"))
def squeeze(z, self, axis=None):
    d[self] += np.reshape(d[z], np.shape(self))


@adjoint(Method("transpose"))
def transpose(z, self, *axes):
    # x.transpose(), x.transpose(1, 0) and x.transpose((1, 0))
    if axes == () or axes == (None,):
        g = np.transpose(d[z])
    else:
        g = np.transpose(d[z], np.argsort(np.ravel(axes)))
    d[self] += g


@adjoint(Attr("mT"))
def mT(z, self):
    d[self] += np.swapaxes(d[z], -1, -2)


@adjoint(Method("swapaxes"))
def swapaxes(z, self, axis1, axis2):
    d[self] += np.swapaxes(d[z], axis1, axis2)


@adjoint(Method("diagonal"))
def diagonal(z, self, offset=0, axis1=0, axis2=1):
    d[self] += rt.undiagonal(d[z], self, offset, axis1, axis2)


@adjoint(Method("repeat"))
def repeat(z, self, repeats, axis=None):
    d[self] += rt.unrepeat(d[z], self, repeats, axis)


@adjoint(Method("take"))
def take(z, self, indices, axis=None, *, mode="raise"):
    d[self] += rt.untake(d[z], self, indices, axis, mode)


# -- copies and conversions --------------------------------------------------
@adjoint(Method("copy"), Method("conj"), Method("conjugate"))
def copy(z, self, order="C"):
    d[self] += d[z]


@adjoint(Method("astype"))
def astype(z, self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d[self] += rt.uncast(d[z], self, z)


# -- products and elementwise ------------------------------------------------
@adjoint(Method("dot"))
def dot(z, self, b):
    d[self] += rt.dot_lhs(d[z], self, b)
    d[b] += rt.dot_rhs(d[z], self, b)


@adjoint(Method("clip"), shape=ELEMENTWISE)
def clip(z, self, min=None, max=None):
    # as np.clip: minimum(maximum(self, min), max), ties split 1/2 : 1/2
    if min is None:
        m = self
    else:
        m = np.maximum(self, min)
    if max is None:
        dm = d[z]
    else:
        dm = np.where(m < max, d[z], np.where(m == max, 0.5 * d[z], 0.0))
    if min is None:
        da = dm
    else:
        da = np.where(self > min, dm, np.where(self == min, 0.5 * dm, 0.0))
    d[self] += da
    d[min] += dm - da
    d[max] += d[z] - dm


nondifferentiable(Method("argmax"), Method("argmin"), Method("argsort"),
                  Method("nonzero"), Method("searchsorted"), Method("any"),
                  Method("all"))
