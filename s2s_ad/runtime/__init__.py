"""Helpers that generated code calls; the only part of s2s_ad it imports.

Generated code uses plain arithmetic wherever that suffices; these helpers
cover what needs a run-time look at shapes or types.  No helper mutates
its arguments, except those of inplace.py listed in `MUTATORS`: the primal's
own in-place updates spelled as expressions, their undoing, and `add_into`
/ `zero_into`, which update an adjoint that the generated code owns (the
compiler decides that, see ownership.py).  Depends on NumPy only.

Generated code and rule templates reach every helper as `rt.<name>`, with
`rt` this package: it defines the helpers any generated function may call
at its entry and exit (`like`, `check_scalar`, and `bound` for the
staleness guard) and re-exports, by explicit name, every public helper of
its submodules:

    core.py         the adjoint values: unbroadcast, unreduce, Seq, Tree,
                    zeros_like, unindex, shape_only, and the shared private utilities
    inplace.py      setitem, append, pop, scatter_* (np.add.at & co.),
                    snapshot/restore, copy/keep, put (an update's tangent),
                    and their adjoint helpers
    aliases.py      the alias analysis' shares/slots/sync_*/refuse_shared, flat_view,
                    updated_copy (a helper's in-place update, normalize/updating.py),
                    follow (a restore's reach, in a derivative read again)
    reductions.py   max/min masks, prod, cumprod, median/average, sum, list
    shapes.py       the inverses of stack/concatenate/split/tile/pad/take...,
                    flat_get (`x.flat[i]`)
    ranges.py       linspace, logspace, geomspace, arange
    products.py     @, dot, tensordot, inner, kron, einsum
    linalg.py       np.linalg: norm, cholesky, eigh, eig, qr, svd, pinv, lstsq, ...
    linalg_tangents.py  their tangents (forward mode)
    statistics.py   cov/corrcoef variables, quantile weights, nanmax/nanmin masks
    special.py      digamma
    powers.py       times_power: the slope of a power, 0 where the exponent is 0
    scatter.py      the adjoints of np.add.at & co.: products and ties per slot
    signal.py       diff, ediff1d, gradient, convolve/correlate, polyval,
                    trapezoid, meshgrid
    interpolation.py  interp
    signal_tangents.py  the tangents of gradient, interp, trapezoid, polyval's
                        coefficients' adjoint
    ufuncs.py       the adjoints of ufunc methods: reduce, accumulate, outer
    masked_reduce.py  the adjoints of ufunc.reduce with initial= or where=
    ufunc_tangents.py  the tangents of ufunc methods (initial= and where= too)
    sequences.py    `+` and `*` joining or repeating lists and tuples; sorting them
    context.py      the markers of a `with` block, and `managed`
    origins.py      which user function the running generated code is from
    boundary.py     the derived function's boundary: check_scalar, check_seed, like
    fields.py       the fields of named tuples read by name: field, unfield
    zero.py         ZERO, the adjoint of a list or dict item `x[i] = v` replaced
                    (a zero of no shape), ReplacedItemError, and the helpers it passes
    duck.py         arrays of other libraries (Dask, CuPy): is_duck, duck_like,
                    numpy_only
    tangents.py     forward mode's boundary: check_tangent, tangent_like;
                    zero_tangent; overlay (follow's tangent)
    transposes.py   the adjoints of the adjoint helpers (second order)
    reduction_tangents.py  the reductions' and statistics' tangent helpers

Submodules import `.core` (which imports `.zero`; and `linalg`, `statistics` and `ufuncs` import
`.reductions`, `linalg` `.products`, `linalg_tangents` `.linalg`, `inplace`
`.aliases`, `masked_reduce` `.reductions` and `.ufuncs`, `signal_tangents`
`.signal` and `.interpolation`, `ufunc_tangents` `.ufuncs`, `.reductions`,
`.reduction_tangents`, `.origins` and `.masked_reduce`), never this package, so there is no import cycle.
"""
from __future__ import annotations

import builtins
import functools
from typing import TypeVar
import sys
import weakref

import numpy as np

from ..errors import (InputTypeError, Location, NonScalarOutputError, SeedError,
                      UnsupportedSyntaxError, UnsupportedValueError)
# every public helper of the submodules, re-exported for `rt.<name>`
from .origins import origin, origins
from . import zero as _zero
from .zero import ZERO, ReplacedItemError
from .duck import duck_like, is_duck, is_real_scalar, numpy_only
from .tangents import check_tangent, overlay, tangent_like, zero_tangent
from .reduction_tangents import (cov_divisor, cumprod_adjoint_tangent, extremum_share,
                                 prod_factors, quantile_tangent, share_sum, symmetric_part2,
                                 unit_rows_tangent, variables_tangent)
from .transposes import (reconcatenate, restack, unbroadcast_transpose, unhead,
                         unitem_or_zeros, unlike_each, unpop_transpose, unsnapshot,
                         unsum_transpose, unwritten)
from .core import (Seq, Tree, _ndarray, _rows, expand, shape_only, size, spread, unbroadcast,
                   unindex, unreduce, zeros_like)
from .fields import field, field_tangent, unfield
from .boundary import check_scalar, check_seed, like, like_each
from .reductions import (average_weights, cumprod_adjoint, default_part, extremum_parts,
                         initial_share, median_weights, prod_others, prod_others_where,
                         reduced_mask, reduced_mask_where, unlist, unsum, where_share)
from .shapes import (choose_adjoints, flat_get, kept_indices, reshape_as, select_adjoints, uncast,
                     uncolumn_stack, unconcatenate, undiag, undiagonal, undstack, unhstack,
                     unpad, unrepeat, unsplit, unstack, untake, untake_along_axis, untile,
                     unvstack)
from .ranges import (arange_adjoints, geomspace_adjoints, linspace_adjoints,
                     logspace_adjoints)
from .products import (LazyParts, dot_lhs, dot_rhs, einsum_adjoints, einsum_adjoints_tangent,
                       inner_lhs, inner_rhs, kron_lhs, kron_rhs, matmul_lhs, matmul_rhs,
                       multi_dot_adjoints, multi_dot_adjoints_along, multi_dot_tangent,
                       multi_dot_tangent_along, tensordot_lhs, tensordot_rhs)
from .linalg import (cholesky_adjoint, cofactors, eig_adjoint, eigh_adjoint, eigvals_adjoint,
                     eigvalsh_adjoint, field_adjoint, inverse_transposed, lstsq_adjoints,
                     matrix_power_adjoint, norm_adjoint, pinv_adjoint, qr_adjoint,
                     svd_adjoint, svdvals_adjoint)
from .linalg_tangents import (cholesky_tangent, cofactors_tangent, eig_tangent, eigh_tangent,
                              eigvals_tangent, eigvalsh_tangent, lstsq_tangent,
                              matrix_power_tangent,
                              norm_tangent, pinv_tangent, qr_tangent, svd_tangent,
                              svdvals_tangent)
from .statistics import (cov_variables, nan_reduced_mask, quantile_adjoint,
                         uncov_variables)
from .special import digamma
from .powers import times_power
from .aliases import (flat_view, follow, in_place, refuse_overlap, refuse_overwrite, refuse_shared,
                      refuse_written, shares, slots, sync_index, sync_reshaped,
                      sync_transposed, updated_copy)
from .inplace import (MUTATORS, SCATTERS, add_into, along_axis_index, append, copy,
                      diagonal_index, head,
                      item_or_zeros, keep, mutated, pop, put, put_into, restore,
                      scatter_add, scatter_divide, scatter_maximum, scatter_minimum,
                      scatter_multiply, scatter_subtract, setitem, snapshot,
                      unpop, written, zero_at, zero_into)
from .scatter import extremum_at_adjoints, others_at, product_at
from .signal import (diff_adjoints, ediff1d_adjoints, gradient_adjoint,
                     gradient_spacing_adjoints, meshgrid_adjoints,
                     poly_derivative, polyval_coefficients, trapezoid_adjoints, unwindow)
from .interpolation import interp_adjoints
from .signal_tangents import (gradient_tangent, interp_adjoints_tangent, interp_tangent,
                              polyval_coefficients_tangent, trapezoid_adjoints_tangent,
                              trapezoid_tangent)
from .context import MARKERS, enter, exit, managed, no_exception, sets_state  # noqa: A004
from .sequences import (get_other, has_key, join, repeat_items, sort_like, unget_default,
                        unget_other, unjoin, unrepeat_items, unsort_like, unsorted)
from .ufuncs import accumulate_adjoint, outer_lhs, outer_rhs, reduce_adjoint
from .masked_reduce import reduce_initial_adjoint, reduce_where_adjoint
from .ufunc_tangents import (accumulate_tangent, initial_tangent, outer_tangent_lhs,
                             outer_tangent_rhs, reduce_adjoint_tangent, reduce_tangent,
                             reduce_where_adjoint_tangents, accumulate_adjoint_tangent,
                             outer_adjoints_tangent)


T = TypeVar("T")


def stop_gradient(x: T) -> T:
    """The identity at run time; for s2s_ad, `x` carries no gradient."""
    return x


class Bound(functools.partial):
    """A nested function as a value (`bind`): a `functools.partial` whose
    bound keywords are the enclosing values it reads.  A call site
    (dispatch.py) differentiates through them, by name: the adjoint (and
    tangent) of such a value is a `Tree` from each name to its value's.
    A call naming one of them raises, as the user's function would (it
    has no such parameter)."""

    def __call__(self, /, *args, **kwargs):
        self.check_keywords(kwargs)
        return super().__call__(*args, **kwargs)

    def check_keywords(self, kwargs: dict) -> None:
        taken = sorted(kwargs.keys() & self.keywords.keys())
        if taken:
            raise TypeError(f"{self.func.__qualname__}() got an unexpected keyword argument {taken[0]!r}")


def bind(func, names: tuple, /, *values):
    """A nested function as a value: its lifted function (normalize/lift.py)
    with the enclosing values it reads bound by `names`, so a caller that
    receives it calls it as the user's code would."""
    return Bound(func, **dict(zip(names, values)))


def unbind(d_func, names: tuple) -> tuple:
    """The adjoints of the values `bind` bound under `names`, from the
    function value's adjoint (a `Tree` by name, or a zero)."""
    if not isinstance(d_func, dict):
        return (0.0,) * len(names)
    return tuple(d_func.get(name, 0.0) for name in names)


def bound_tangent(names: tuple, tangents) -> Tree:
    """The tangent of a function value `bind` made: its values', by name."""
    return Tree(zip(names, tangents))


def check_unpack(items: list, at_least: int) -> None:
    """Python's check for `a, *rest = items`: enough items for the names."""
    if len(items) < at_least:
        raise ValueError(f"not enough values to unpack (expected at least {at_least}, "
                         f"got {len(items)})")


def check_reduce(items: list) -> None:
    """Python's check for `functools.reduce(f, items)`: an item to start from."""
    if not items:
        raise TypeError("reduce() of empty iterable with no initial value")


def check_arity(items, count: int, fname: str) -> None:
    """Python's check for `f(..., *items)` where `f` takes `count` more
    positional arguments (generated code then passes `items[0]`, ...)."""
    if len(items) != count:
        raise TypeError(f"{fname}() takes {count} more positional argument"
                        f"{'s' * (count != 1)} here but {len(items)} were given")


def check_keywords(items, names: tuple, fname: str) -> None:
    """Python's check for `f(..., **items)` where `f` takes exactly the
    keyword parameters `names` more (generated code passes `items[name]`)."""
    if not isinstance(items, dict):
        raise TypeError(f"{fname}() argument after ** must be a mapping, not "
                        f"{type(items).__name__}")
    extra = sorted(set(items) - set(names))
    if extra:
        raise TypeError(f"{fname}() got an unexpected keyword argument {extra[0]!r}")
    missing = [n for n in names if n not in items]
    if missing:
        raise TypeError(f"{fname}() missing a required argument: {missing[0]!r}")


def same_length(length: int, count: int, where) -> None:
    """The located error for a loop whose body changed the length of the
    sequence it iterates (`where` = file, line, column, source line):
    Python's iterator would see the change, the generated loop counts the
    items there were when it started."""
    if length != count:
        raise UnsupportedSyntaxError(
            f"the body of this loop changed the length of the sequence it iterates "
            f"({count} items when the loop started, {length} now); s2s_ad counts "
            "the items once, where Python's iterator would see the change",
            Location(*where), hint="iterate over a copy (`for x in list(xs):`), or "
            "loop with `while` over an index")


_GONE = object()        # what `bound` gives for a name that no longer resolves


def bound(scope, *paths: str):
    """What each dotted path denotes now, for a staleness guard (see
    s2s_ad/guards.py): the object for one path, a tuple for several.
    `scope` is a module's globals (then builtins), a closure cell (holding
    the paths' head), the name of a module imported inside the function
    (the paths are then attribute paths in it), or a weak reference to the
    function being derived (attribute paths of it).  A name that no longer
    resolves gives a value equal to nothing."""
    values = tuple(_bound(scope, path) for path in paths)
    return values[0] if len(values) == 1 else values


def _bound(scope, path: str):
    first, *rest = path.split(".")
    try:
        if isinstance(scope, str):
            obj, rest = sys.modules[scope], path.split(".") if path else []
        elif isinstance(scope, weakref.ref):    # (the primal itself: `__code__`)
            obj, rest = scope(), path.split(".")
        elif isinstance(scope, dict):
            obj = scope[first] if first in scope else getattr(builtins, first)
        else:
            obj = scope.cell_contents
        for attr in rest:
            obj = getattr(obj, attr)
    except Exception:          # unbound, deleted, or a property that raised
        return _GONE
    return obj


def dict_parts(g, keys, values):
    """The adjoints of a dict display's values, from the dict's adjoint; a
    value a later one of the same key replaced gets none (`{"a": x, "a": y}`)."""
    last = {k: i for i, k in enumerate(keys)}
    if isinstance(g, dict):
        return Seq(g[k] if k in g and last[k] == i else zeros_like(v)
                   for i, (k, v) in enumerate(zip(keys, values)))
    return Seq(zeros_like(v) for v in values)


def undict(g, mapping):
    """The adjoint of `dict(mapping)`: a dict's, entry by entry; for
    (key, value) pairs, each value whose key no later pair repeats."""
    got = g if isinstance(g, dict) else {}
    if isinstance(mapping, dict):
        return {k: got[k] if k in got else zeros_like(v) for k, v in mapping.items()}
    pairs = list(mapping)
    last = {k: i for i, (k, _) in enumerate(pairs)}
    return Seq((zeros_like(k), got[k] if k in got and last[k] == i else zeros_like(v))
               for i, (k, v) in enumerate(pairs))


def keys(mapping):
    """A snapshot of a dict's keys, for `for k, v in d.items()`."""
    return list(mapping)


def indexable(seq):
    """What `for x in seq` iterates, indexable: the keys of a dict, else
    `seq` itself."""
    return list(seq) if isinstance(seq, dict) else seq


def unindexable(g, seq):
    """The adjoint of `indexable(seq)`: none for a dict's keys."""
    return zeros_like(seq) if isinstance(seq, dict) else g


def shaped_like(g, like):
    """`g` in the shape of `like`, a reshaped view of the same memory (the
    adjoint of a write-back through it, `sync_reshaped`); a list or tuple,
    which a loop reads as itself (`for v in (a[:1], a[1:])`), keeps `g`."""
    if isinstance(like, (list, tuple)) or isinstance(g, (list, tuple)):
        return g
    return np.reshape(g, np.shape(like))



_zero.pass_through(globals())
