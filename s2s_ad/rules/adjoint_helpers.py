"""Rules for the runtime helpers that generated adjoint code calls, so that a
derived function can itself be differentiated in forward mode (`hvp`:
forward over reverse).

A gradient is linear in the adjoint it propagates: nearly every helper that
builds one (`unbroadcast`, `unindex`, `matmul_lhs`, ...) is linear in its
adjoint argument `g` and reads its other arguments for shapes and indices
only, or multilinear with a primal operand (`matmul_lhs(g, a, b)` is
`g @ b.T`).  Those are declared so here (`linear`, registry.py) and forward
mode applies them to tangents.  Helpers that update their first argument in
place (`add_into`, `zero_into`, `restore`) get tangent templates that apply
them to a copy.  Checks, masks and stand-ins carry no derivative.

Reverse mode through these helpers (`grad` of a `grad`) needs their adjoint
templates, which are not written yet: it refuses such a call, located.
"""
import numpy as np

from .. import runtime as rt
from .registry import linear, nondifferentiable, tangent

t = None  # templates are never called: `t[x]` is the tangent of x

# the adjoint they propagate, or the value they pass on, and nothing else
for helper, param in [
        (rt.unbroadcast, "g"), (rt.expand, "g"), (rt.unindex, "g"), (rt.written, "g"),
        (rt.zero_at, "g"), (rt.item_or_zeros, "g"), (rt.head, "g"), (rt.unindexable, "g"),
        (rt.unsum, "g"), (rt.unlist, "g"), (rt.unstack, "g"), (rt.unconcatenate, "g"),
        (rt.like, "g"), (rt.check_scalar, "value"), (rt.snapshot, "x"), (rt.copy, "x"),
        (rt.tangent_like, "t")]:
    linear(helper, param)
linear(rt.like_each, "gs")

# linear in the adjoint and in the other factor of a product, separately
for helper in (rt.matmul_lhs, rt.dot_lhs, rt.inner_lhs, rt.kron_lhs):
    linear(helper, "g", "b", multi=True)
for helper in (rt.matmul_rhs, rt.dot_rhs, rt.inner_rhs, rt.kron_rhs):
    linear(helper, "g", "a", multi=True)
linear(rt.tensordot_lhs, "g", "b", multi=True)
linear(rt.tensordot_rhs, "g", "a", multi=True)
linear(rt.einsum_adjoints, "g", "operands", multi=True)


@tangent(rt.add_into)
def add_into_tangent(z, d, index, g, like):
    t[z] += rt.add_into(rt.copy(t[d]), index, t[g], like)


@tangent(rt.zero_into)
def zero_into_tangent(z, g, index):
    t[z] += rt.zero_at(t[g], index)


@tangent(rt.restore)
def restore_tangent(z, x, saved, index=None):
    t[z] += rt.restore(rt.copy(t[x]), t[saved], index)


nondifferentiable(rt.zeros_like, rt.shape_only, rt.check_seed, rt.check_tangent,
                  rt.reduced_mask, rt.reduced_mask_where, np.full_like)
