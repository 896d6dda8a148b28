"""Rules for the methods of binary ufuncs: `reduce`, `accumulate`, `outer`.

Conventions:
- Keys are the bound methods (`np.add.reduce`, `np.maximum.accumulate`);
  a template's first operand is the ufunc itself, as in
  `ufunc.reduce(self, array, ...)`, so one template serves every ufunc and
  the runtime helpers (runtime/ufuncs.py) derive the gradient from the
  ufunc's elementwise partials, with the conventions of its elementwise
  rule.  Every binary ufunc with an elementwise rule has them: add,
  subtract, multiply, divide (= true_divide), power, float_power, maximum,
  minimum, fmax, fmin, logaddexp, logaddexp2, hypot, arctan2, copysign
  (w.r.t. its first operand), fmod, remainder (= mod), heaviside,
  nextafter; ldexp has `outer` only (NumPy has no float reduce for it).
- `reduce(array, axis=0, dtype=None, keepdims=False, initial=, where=)`:
  `axis` an int, a tuple or None where NumPy allows it (several axes only
  for the ufuncs it may reorder).  Non-commutative ufuncs (subtract,
  divide, power, ...) reduce left to right, z = f(...f(f(a_0, a_1), a_2)...,
  a_{n-1}), and are differentiated so.
- `initial=` is the first operand of that fold, differentiated too;
  `where=` leaves elements out of it (they get no gradient).  NumPy's own
  rule holds: `where=` needs `initial=` for a ufunc without an identity
  (all but add, multiply, logaddexp, logaddexp2 and hypot).  A call
  without them has the code it had before (runtime/masked_reduce.py has
  the helpers of the others).
- `accumulate(array, axis=0, dtype=None)`: z_k = f(z_{k-1}, a_k).
- `outer(A, B)`: z[i, j] = f(A[i], B[j]), any dimensions.
- The operand may be a list or tuple of values (`np.maximum.reduce([x, y,
  z])`): each item gets its own adjoint.
- maximum, minimum, fmax, fmin: `reduce` and `accumulate` give the adjoint
  of each result to the elements that attain it, ties split equally, as
  `np.max` does (for `accumulate`: the elements of the prefix equal to its
  extremum, so `np.maximum.accumulate(x)[-1]` and `np.max(x)` agree); a NaN
  result gives no gradient.  `reduce`'s `initial` gets it where it is the
  result and no selected element attains it, as for `np.max(initial=)`.
  `outer` splits ties 1/2 : 1/2, as `maximum`.
- Products of partials are formed without division: exact where an operand
  is zero (`np.multiply.reduce`, `np.multiply.accumulate`).
- Forward mode: each method's tangent template (`<method>_tangent`) calls the
  transpose of its adjoint's helper (runtime/ufunc_tangents.py), with the
  same partials and conventions: the ties of an extremum share its
  tangent's terms equally, a NaN result gets none.

Limits: `outer`'s keyword arguments have no rule (the call is rejected
where a gradient must flow through it).  `reduceat` has no rule: the
error suggests `.at` or a loop of `reduce` over the segments.  The methods of comparison, logical, bitwise
and integer ufuncs (`np.logical_or.reduce`, `np.greater.outer`,
`np.floor_divide.accumulate`, ...) are declared non-differentiable.
"""
import numpy as np

from .. import runtime as rt
from .registry import adjoint, nondifferentiable, suggest, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent

DIFFERENTIABLE = tuple(rt.ufuncs.PARTIALS)
SCANNED = tuple(u for u in DIFFERENTIABLE if u is not np.ldexp)   # reduce, accumulate
PIECEWISE_CONSTANT = (np.equal, np.not_equal, np.greater, np.greater_equal, np.less,
                      np.less_equal, np.logical_and, np.logical_or, np.logical_xor,
                      np.floor_divide, np.bitwise_and, np.bitwise_or, np.bitwise_xor,
                      np.left_shift, np.right_shift, np.gcd, np.lcm)


# (the conditional expression folds at compile time where initial and where
# are literals or left out: a call without them gets `rt.reduce_adjoint`)
@adjoint(*(u.reduce for u in SCANNED))
def reduce(z, ufunc, array, axis=0, dtype=None, *, keepdims=False, initial=None,
           where=True):
    d[array] += (rt.reduce_adjoint(ufunc, d[z], array, z, axis, keepdims)
                 if initial is None and where is True else
                 rt.reduce_where_adjoint(ufunc, d[z], array, z, axis, keepdims, initial,
                                         where))
    d[initial] += rt.reduce_initial_adjoint(ufunc, d[z], array, z, axis, keepdims, initial,
                                            where)


@tangent(*(u.reduce for u in SCANNED))
def reduce_tangent(z, ufunc, array, axis=0, dtype=None, *, keepdims=False, initial=None,
                   where=True):
    t[z] += rt.reduce_tangent(ufunc, t[array], array, z, axis, keepdims, initial, where)
    t[z] += rt.initial_tangent(ufunc, t[initial], array, z, axis, keepdims, initial, where)


@tangent(rt.reduce_adjoint, inert=("ufunc", "axis", "keepdims"))
def reduce_adjoint_tangent(out, ufunc, g, array, z, axis=0, keepdims=False):
    # second order (forward over reverse): linear in g; in array and z, a helper
    t[out] += rt.reduce_adjoint(ufunc, t[g], array, z, axis, keepdims)
    t[out] += rt.reduce_adjoint_tangent(ufunc, g, t[array], t[z], array, z, axis, keepdims)


_MASKED = ("ufunc", "axis", "keepdims", "where")


@tangent(rt.reduce_where_adjoint, inert=_MASKED)
def reduce_where_adjoint_tangent(out, ufunc, g, array, z, axis=0, keepdims=False,
                                 initial=None, where=True):
    t[out] += rt.reduce_where_adjoint(ufunc, t[g], array, z, axis, keepdims, initial, where)
    t[out] += rt.reduce_where_adjoint_tangents(ufunc, g, t[array], t[z], t[initial], array,
                                               z, axis, keepdims, initial, where)[0]


@tangent(rt.reduce_initial_adjoint, inert=_MASKED)
def reduce_initial_adjoint_tangent(out, ufunc, g, array, z, axis=0, keepdims=False,
                                   initial=None, where=True):
    t[out] += rt.reduce_initial_adjoint(ufunc, t[g], array, z, axis, keepdims, initial,
                                        where)
    t[out] += rt.reduce_where_adjoint_tangents(ufunc, g, t[array], t[z], t[initial], array,
                                               z, axis, keepdims, initial, where)[1]


@tangent(rt.accumulate_adjoint, inert=("ufunc", "axis"))
def accumulate_adjoint_tangent(out, ufunc, g, array, z, axis=0):
    t[out] += rt.accumulate_adjoint(ufunc, t[g], array, z, axis)
    t[out] += rt.accumulate_adjoint_tangent(ufunc, g, t[array], t[z], array, z, axis)


@tangent(rt.outer_lhs, inert="ufunc")
def outer_lhs_tangent(out, ufunc, g, A, B, z):
    t[out] += rt.outer_lhs(ufunc, t[g], A, B, z)
    t[out] += rt.outer_adjoints_tangent(ufunc, 0, g, t[A], t[B], t[z], A, B, z)


@tangent(rt.outer_rhs, inert="ufunc")
def outer_rhs_tangent(out, ufunc, g, A, B, z):
    t[out] += rt.outer_rhs(ufunc, t[g], A, B, z)
    t[out] += rt.outer_adjoints_tangent(ufunc, 1, g, t[A], t[B], t[z], A, B, z)


@adjoint(*(u.accumulate for u in SCANNED))
def accumulate(z, ufunc, array, axis=0, dtype=None):
    d[array] += rt.accumulate_adjoint(ufunc, d[z], array, z, axis)


@tangent(*(u.accumulate for u in SCANNED))
def accumulate_tangent(z, ufunc, array, axis=0, dtype=None):
    t[z] += rt.accumulate_tangent(ufunc, t[array], array, z, axis)


@adjoint(*(u.outer for u in DIFFERENTIABLE))
def outer(z, ufunc, A, B):
    d[A] += rt.outer_lhs(ufunc, d[z], A, B, z)
    d[B] += rt.outer_rhs(ufunc, d[z], A, B, z)


@tangent(*(u.outer for u in DIFFERENTIABLE))
def outer_tangent(z, ufunc, A, B):
    t[z] += rt.outer_tangent_lhs(ufunc, t[A], A, B, z)
    t[z] += rt.outer_tangent_rhs(ufunc, t[B], A, B, z)


nondifferentiable(*(getattr(u, method) for u in PIECEWISE_CONSTANT
                    for method in ("reduce", "accumulate", "outer", "reduceat")))

# reduceat: what to write instead (`.at` into one slot per segment, or a loop)
_AT_START = {np.add: "np.zeros(k)", np.multiply: "np.ones(k)",
             np.maximum: "np.full(k, -np.inf)", np.minimum: "np.full(k, np.inf)"}


def _instead_of_reduceat(ufunc) -> str:
    name = f"np.{ufunc.__name__}"
    loop = f"a loop of {name}.reduce(a[i:j]) over the segments"
    if ufunc not in _AT_START:
        return loop
    return (f"{name}.at(out, segment, a) with out = {_AT_START[ufunc]} and segment "
            f"the number of each element's segment, or {loop}")


for _ufunc in SCANNED:
    suggest(_ufunc.reduceat, _instead_of_reduceat(_ufunc))
