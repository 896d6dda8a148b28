"""Rules for linear algebra: products, contractions and `np.linalg`."""
import numpy as np

from .. import runtime as rt
from .registry import ELEMENTWISE, REDUCTION, SCALAR, adjoint, nondifferentiable

d = None  # templates are never called: `d[x]` is the adjoint of x


@adjoint(np.dot)
def dot(z, a, b, out=None):
    d[a] += rt.dot_lhs(d[z], a, b)
    d[b] += rt.dot_rhs(d[z], a, b)
