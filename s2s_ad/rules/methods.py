"""Rules for ndarray methods (`x.sum(axis=0)`, `x.reshape(3, 4)`, ...).

A method rule is keyed by `Method(name)`, whatever the receiver's type, and
its template's first operand is the receiver.  Where a method binds like
its NumPy function (`x.sum(0)` as `np.sum(x, 0)`) the function's rule
serves both; the rules here are for methods that differ.  Each mirrors the
rule of the NumPy function of the same name (see reductions.py, shapes.py, linalg.py for the
conventions) with the method's own parameter order: `x.sum(0)` binds
`axis=0`.  As there, a template lists only the parameters its gradient
honours, so a call using another one is rejected at compile time.

`x.astype(dtype)` sends the gradient back in `x`'s float dtype (none for a
cast to an integer or bool dtype), its tangent forward in the result's;
`x.item()` takes no index.  `item`, `reshape`, `transpose` and `mT` are
linear in the receiver (forward mode applies them to its tangent).
"""
import numpy as np

from .. import runtime as rt
from .registry import (ELEMENTWISE, SCALAR, Attr, Method, adjoint, nondifferentiable, suggest,
                       tangent)

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


# Reductions (sum, mean, prod, max, min, var, std, cumsum, cumprod), trace,
# ravel/flatten, squeeze, swapaxes, diagonal, repeat, take, copy/conj and dot
# share their function's rule: see reductions.py, shapes.py and linalg.py.


@adjoint(Method("item"), shape=SCALAR, linear="self")
def item(z, self):
    d[self] += rt.spread(self, d[z])


# -- shapes ------------------------------------------------------------------
@adjoint(Method("reshape"), linear="self")
def reshape(z, self, *shape, order="C"):
    if order == "C":
        g = np.reshape(d[z], np.shape(self))
    else:
        g = rt.reshape_as(d[z], np.shape(self), self, order)
    d[self] += g


@tangent(Method("reshape"))
def reshape_tangent(z, self, *shape, order="C"):
    if order == "C":
        t[z] += np.reshape(t[self], np.shape(z))
    else:
        t[z] += rt.reshape_as(t[self], np.shape(z), self, order)


@adjoint(Method("transpose"), linear="self")
def transpose(z, self, *axes):
    # x.transpose(), x.transpose(1, 0) and x.transpose((1, 0))
    if axes == () or axes == (None,):
        g = np.transpose(d[z])
    else:
        g = np.transpose(d[z], np.argsort(np.ravel(axes)))
    d[self] += g


@adjoint(Attr("mT"), linear="self")
def mT(z, self):
    d[self] += np.swapaxes(d[z], -1, -2)


# -- copies and conversions --------------------------------------------------
@adjoint(Method("astype"))
def astype(z, self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d[self] += rt.uncast(d[z], self, z)


@tangent(Method("astype"))
def astype_tangent(z, self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    # in the result's float dtype; zeros for a cast to an integer or bool dtype
    t[z] += rt.uncast(t[self], z, z)


# -- products and elementwise ------------------------------------------------
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

# A dict's methods on a dict that carries a gradient: what indexing does.
suggest(Method("get"), "d[key] if key in d else default")
suggest(Method("pop"), "v = d[key], then a new dict without it: "
                       "d = {k: w for k, w in d.items() if k != key}")
