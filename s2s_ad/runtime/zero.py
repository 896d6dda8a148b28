"""`ZERO`: the adjoint of a list or dict item that `x[i] = v` replaced, a
zero of no particular shape.

Why: the reverse sweep of `x[i] = v` resets slot `i` of the container's
adjoint (the old item's value is gone, so its adjoint starts from zero),
at a point where only the *new* item is in `x`.  A zero shaped like the new
item is wrong when the old item had another shape (`xs[0] = a[:2]` over a
3-vector), and a 0-d zero is wrong where a display's adjoint indexes it
(the old item was a list).  `ZERO` stands for the zero of whatever shape
or structure its reader expects:

- indexing it, and a linear map of it (a product with a primal value,
  `np.sum`, `reshape`, `@`, `np.where(c, g, 0)`, ...), give it again;
- adding it to a value gives that value (a copy of an array: generated
  code may own the sum and update it in place, ownership.py);
- a helper that knows the shape it is the adjoint of (`unbroadcast`,
  `expand`, `unindex`, `like`, ...) makes it a real zero of that shape.

Anything else (an adjoint read whole by a function that is not known to be
linear in it, its shape asked for) is refused with `ReplacedItemError`,
located at the user's function: never a wrong gradient, and never a NumPy
error from generated code.  Imports only the errors and `origins`.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import UnsupportedValueError
from .origins import origin


class ReplacedItemError(UnsupportedValueError):
    """The adjoint of a replaced list or dict item (a zero of no shape)
    reached an operation that needs its shape."""


class _AttributeAsked(ReplacedItemError, AttributeError):
    """An attribute of `ZERO` read (`g.shape`): refused, and `hasattr` is
    false (`duck.is_duck` asks)."""


def _refuse(what: str, kind=ReplacedItemError):
    raise kind(
        f"the gradient of a list or dict item that an assignment `x[i] = v` "
        f"replaced reached {what}, which s2s_ad cannot apply to a zero of unknown "
        "shape", origin(),
        hint="build a new list instead of replacing the item (`xs = [v] + xs[1:]`), "
             "or replace it by a value of the old item's shape")


# NumPy functions linear in each adjoint they read, that no template applies
# to two adjoints at once: of ZERO (with primal operands), ZERO.
_LINEAR = frozenset(getattr(np, name) for name in (
    "sum", "reshape", "transpose", "moveaxis", "swapaxes", "expand_dims", "squeeze",
    "ravel", "flip", "fliplr", "flipud", "rot90", "roll", "conj", "conjugate", "real",
    "imag", "broadcast_to", "cumsum", "dot", "vdot", "tensordot", "inner", "outer",
    "kron", "einsum", "trace", "diagonal", "diag", "tril", "triu", "take", "repeat",
    "take_along_axis", "convolve", "correlate", "cross",
    "tile", "copy", "negative", "atleast_1d", "atleast_2d", "zeros_like")
    if hasattr(np, name))
# NumPy functions linear in their second argument alone
_SECOND = frozenset({np.linalg.solve})
# ufuncs linear in their first operand (and, for the products, in either)
_PRODUCTS = frozenset({np.multiply, np.matmul})
_FIRST = frozenset({np.divide, np.true_divide, np.negative, np.positive, np.conjugate})


class _Zero:
    """The type of `ZERO` (one instance; test with `is ZERO`)."""

    __slots__ = ()

    def __repr__(self):
        return "rt.ZERO"

    def __reduce__(self):
        return "ZERO"

    def __add__(self, other):
        return _copied(other)

    __radd__ = __iadd__ = __add__

    def __sub__(self, other):
        return self if other is self else -other

    def __rsub__(self, other):
        return _copied(other)

    def _same(self, *_, **__):
        return self

    __mul__ = __rmul__ = __truediv__ = __matmul__ = __rmatmul__ = _same
    __neg__ = __pos__ = __getitem__ = _same
    conj = conjugate = reshape = transpose = sum = ravel = squeeze = _same
    swapaxes = copy = astype = cumsum = _same

    @property
    def T(self):
        return self

    real = T

    def __rtruediv__(self, other):
        _refuse("a division by it")

    def __float__(self):
        return 0.0

    def __bool__(self):
        _refuse("a truth test")

    def __len__(self):
        _refuse("`len`")

    def __iter__(self):
        _refuse("an iteration")

    def __array__(self, *_, **__):
        _refuse("a conversion to an array")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None:
            return _refuse(f"np.{ufunc.__name__}.{method}")
        others = [x for x in inputs if x is not self]
        if ufunc is np.add and len(inputs) == 2:
            return _copied(others[0]) if others else self
        if ufunc is np.subtract and len(inputs) == 2:
            return self.__rsub__(inputs[0]) if inputs[1] is self else self - inputs[1]
        if ufunc in _PRODUCTS or ufunc in _FIRST and inputs[0] is self:
            return self
        return _refuse(f"np.{ufunc.__name__}")

    def __array_function__(self, func, types, args, kwargs):
        if func in _LINEAR:
            return self
        if func is np.where and len(args) == 3 and all(_is_zero(x) for x in args[1:]):
            return self                 # (a mask's adjoint: `np.where(m, g, 0.0)`)
        if func in _SECOND and len(args) >= 2 and args[1] is self and args[0] is not self:
            return self                 # `np.linalg.solve(a.T, g)`

        return _refuse(f"np.{func.__name__}")

    def __getattr__(self, name):
        if name.startswith("__"):           # (protocols probed: not these)
            raise AttributeError(name)
        _refuse(f"its `.{name}`", _AttributeAsked)


def _copied(x):
    """`x + 0`: a fresh array for an array (the sum is new in generated code's
    eyes), a new container for an adjoint container, `x` itself otherwise."""
    if type(x) is np.ndarray:
        return x.copy()
    if isinstance(x, (list, dict)):
        return type(x)(x)
    return x


def _is_zero(x) -> bool:
    return x is ZERO or type(x) in (int, float) and x == 0


ZERO = _Zero()


# Adjoint helpers linear in their first argument, the adjoint `g` (jointly
# with primal operands only: rules/adjoint_helpers.py declares them so, and
# tests/test_replaced_items.py checks this list against it): of `ZERO`, a
# replaced list item's adjoint, they give `ZERO` (a zero of every part).
PASSES = (
    "arange_adjoints choose_adjoints default_part diff_adjoints dot_lhs dot_rhs "
    "ediff1d_adjoints einsum_adjoints extremum_at_adjoints extremum_parts field_adjoint "
    "initial_share inner_lhs inner_rhs kron_lhs kron_rhs linspace_adjoints matmul_lhs "
    "matmul_rhs meshgrid_adjoints reconcatenate reshape_as restack select_adjoints shaped_like "
    "tensordot_lhs tensordot_rhs uncast uncolumn_stack unconcatenate undiag undiagonal "
    "undstack unfield unhstack unindexable unjoin unlist unpad unrepeat unrepeat_items "
    "unsort_like unsorted unsplit unstack unsum untake untake_along_axis untile unvstack "
    "unwindow").split()
# ...and linear in `g` with factors that are primal values where the
# templates call them (the spacings, the nodes and the coefficients), which
# their rules need not call inert: of `ZERO`, zero too
FACTORED = "gradient_adjoint interp_adjoints polyval_coefficients".split()


def pass_through(helpers: dict) -> None:
    """Make each helper of `PASSES` and `FACTORED` in the namespace `helpers` (the
    runtime's) give `ZERO` back when its adjoint argument is `ZERO`."""
    for name in PASSES + FACTORED:
        helpers[name] = _passing(helpers[name])


def _passing(helper):
    @functools.wraps(helper)
    def passing(g, *args, **kwargs):
        return g if g is ZERO else helper(g, *args, **kwargs)
    return passing
