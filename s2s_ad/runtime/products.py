"""Run-time helpers for the adjoints of products and contractions
(rules/operators.py, rules/linalg.py): `@`, `np.dot`, `np.tensordot`,
`np.inner`, `np.kron` and `np.einsum`.

`X_lhs(g, a, b)` / `X_rhs(g, a, b)` return the adjoint of `a` / `b` in
`X(a, b)`, shaped like that operand (NumPy's 1-D promotion and batch
broadcasting undone).  `einsum_adjoints` returns a `LazyParts`: one adjoint
per operand, each computed only when read.

Invariants: every helper returns a fresh object and none mutates its
arguments (a `LazyParts` only caches the items it computed).  Imports NumPy
and `.core` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray, is_duck, numpy_only
from ..errors import UnsupportedValueError
from .core import Seq, _as_float, _ndarray, unbroadcast
from .origins import origin


def _ndim(x) -> int:
    return x.ndim if type(x) is _ndarray else np.ndim(x)


def matmul_lhs(g, a, b):
    """The adjoint of `a` in `a @ b` (1-D operands as NumPy promotes them)."""
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 2 and b_nd == 2:
        return g @ b.T
    if a_nd == 2 and b_nd == 1:
        return np.outer(g, b)
    if b_nd == 1:
        ga = np.multiply.outer(g, b) if a_nd > 1 else g * asarray(b)
    else:
        ga = (g[..., None, :] if a_nd == 1 else g) @ np.swapaxes(b, -1, -2)
        ga = ga[..., 0, :] if a_nd == 1 else ga
    return unbroadcast(ga, a)


def matmul_rhs(g, a, b):
    """The adjoint of `b` in `a @ b`."""
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 2 and b_nd == 2:
        return a.T @ g
    if a_nd == 2 and b_nd == 1:
        return g @ a
    if a_nd == 1:
        gb = np.expand_dims(a, -1) * np.expand_dims(g, -2) if b_nd > 1 else g * asarray(a)
    else:
        gb = np.swapaxes(a, -1, -2) @ (g[..., None] if b_nd == 1 else g)
        gb = gb[..., 0] if b_nd == 1 else gb
    return unbroadcast(gb, b)


def dot_lhs(g, a, b):
    """The adjoint of `a` in `np.dot(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * asarray(b), a)
    if np.ndim(b) <= 2:
        return matmul_lhs(g, a, b)
    # dot contracts a's last axis with b's second-to-last
    axes_g = tuple(range(np.ndim(a) - 1, np.ndim(g)))
    b_axes = tuple(i for i in range(np.ndim(b)) if i != np.ndim(b) - 2)
    return np.tensordot(g, b, axes=(axes_g, b_axes))


def dot_rhs(g, a, b):
    """The adjoint of `b` in `np.dot(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * asarray(a), b)
    if np.ndim(b) <= 2:
        return matmul_rhs(g, a, b)
    lead = np.ndim(a) - 1
    ga = np.tensordot(a, g, axes=(tuple(range(lead)), tuple(range(lead))))
    return np.moveaxis(ga, 0, -2)


def _tensordot_axes(axes, a_nd, b_nd):
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(a_nd - n, a_nd)), list(range(n))
    ax_a, ax_b = axes
    ax_a = [ax_a] if np.ndim(ax_a) == 0 else list(ax_a)
    ax_b = [ax_b] if np.ndim(ax_b) == 0 else list(ax_b)
    return [int(i) % a_nd for i in ax_a], [int(i) % b_nd for i in ax_b]


def tensordot_lhs(g, a, b, axes=2):
    """The adjoint of `a` in `np.tensordot(a, b, axes)`."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    ax_a, ax_b = _tensordot_axes(axes, a_nd, b_nd)
    free_a = [i for i in range(a_nd) if i not in ax_a]
    free_b = [i for i in range(b_nd) if i not in ax_b]
    g = _as_float(g, a, b)
    t = np.tensordot(g, b, axes=(list(range(len(free_a), g.ndim)), free_b))
    order = sorted(ax_b)             # b's contracted axes, as t holds them
    perm = [0] * a_nd
    for i, ax in enumerate(free_a):
        perm[ax] = i
    for ax, bx in zip(ax_a, ax_b):
        perm[ax] = len(free_a) + order.index(bx)
    return np.transpose(t, perm)


def tensordot_rhs(g, a, b, axes=2):
    """The adjoint of `b` in `np.tensordot(a, b, axes)`."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    ax_a, ax_b = _tensordot_axes(axes, a_nd, b_nd)
    free_a = [i for i in range(a_nd) if i not in ax_a]
    free_b = [i for i in range(b_nd) if i not in ax_b]
    g = _as_float(g, a, b)
    t = np.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    order = sorted(ax_a)             # a's contracted axes, as t holds them
    perm = [0] * b_nd
    for i, bx in enumerate(free_b):
        perm[bx] = len(ax_a) + i
    for ax, bx in zip(ax_a, ax_b):
        perm[bx] = order.index(ax)
    return np.transpose(t, perm)


def inner_lhs(g, a, b):
    """The adjoint of `a` in `np.inner(a, b)` (last axes contracted)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * asarray(b), a)
    return tensordot_lhs(g, a, b, ([-1], [-1]))


def inner_rhs(g, a, b):
    """The adjoint of `b` in `np.inner(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * asarray(a), b)
    return tensordot_rhs(g, a, b, ([-1], [-1]))


def _kron_grid(g, a, b):
    """`g` of `np.kron(a, b)` reshaped to a's dimensions then b's."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    grid = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    return np.transpose(grid, list(range(0, 2 * nd, 2)) + list(range(1, 2 * nd, 2))), sa, sb


def kron_lhs(g, a, b):
    """The adjoint of `a` in `np.kron(a, b)`."""
    grid, sa, sb = _kron_grid(_as_float(g, a, b), a, b)
    return np.tensordot(grid, np.reshape(b, sb), axes=len(sb)).reshape(np.shape(a))


def kron_rhs(g, a, b):
    """The adjoint of `b` in `np.kron(a, b)`."""
    grid, sa, sb = _kron_grid(_as_float(g, a, b), a, b)
    return np.tensordot(np.reshape(a, sa), grid, axes=len(sa)).reshape(np.shape(b))


class LazyParts:
    """A sequence whose item i is computed when first read (for rules that
    contribute to several operands of which only some need a gradient)."""

    def __init__(self, item, n):
        self._item, self._n, self._done = item, n, {}

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if i not in self._done:
            self._done[i] = self._item(i)
        return self._done[i]


def _is_sublist(item) -> bool:
    """An einsum sublist: labels (ints) and `...`, not the tangents of one."""
    return isinstance(item, (list, tuple)) and all(
        v is Ellipsis or isinstance(v, (int, np.integer)) for v in item)


def einsum_adjoints(g, operands):
    """The adjoints of `np.einsum(*operands)`, one per item of `operands`
    (None for a subscripts string or sublist), each computed when read.

    Supports both call forms, the subscripts string (`"ij,jk->ik", a, b`)
    and the interleaved sublists (`a, [0, 1], b, [1, 2], [0, 2]`), with
    explicit or implicit output, `...` (`Ellipsis` in a sublist), repeated
    labels (diagonals, traces), labels summed within one operand only,
    broadcasting, any number of operands and scalar operands.
    """
    subscripts, arrays, at = _einsum_form(operands)
    inputs, output = _einsum_labels(subscripts, [np.shape(x) for x in arrays])
    g = _as_float(g, *arrays)
    which = {i: k for k, i in enumerate(at)}

    def item(i):
        k = which.get(i)
        return None if k is None else _einsum_adjoint(g, inputs, output, arrays, k)
    return LazyParts(item, len(operands))


def einsum_adjoints_tangent(g, tg, operands, t_operands):
    """The tangent of `einsum_adjoints(g, operands)` (forward over reverse):
    operand k's adjoint is linear in g and in each other operand, so its
    tangent is the adjoint of tg, plus, for each other operand j, the
    adjoint with operand j replaced by its tangent."""
    subscripts, arrays, at = _einsum_form(operands)
    tangents = [np.broadcast_to(t_operands[i], np.shape(a)) for i, a in zip(at, arrays)]
    inputs, output = _einsum_labels(subscripts, [np.shape(x) for x in arrays])
    g, tg = _as_float(g, *arrays), _as_float(tg, *arrays)
    which = {i: k for k, i in enumerate(at)}

    def item(i):
        k = which.get(i)
        if k is None:
            return None
        out = _einsum_adjoint(tg, inputs, output, arrays, k)
        for j in range(len(arrays)):
            if j != k:
                swapped = [tangents[j] if m == j else a for m, a in enumerate(arrays)]
                out = out + _einsum_adjoint(g, inputs, output, swapped, k)
        return out
    return LazyParts(item, len(operands))


def _einsum_form(operands) -> tuple:
    """(the subscripts string, the arrays, their positions in `operands`) of
    either call form of np.einsum."""
    if isinstance(operands[0], str):
        return operands[0], operands[1:], range(1, len(operands))
    if not all(_is_sublist(operands[i]) for i in range(1, len(operands), 2)):
        raise UnsupportedValueError(    # (never from s2s_ad's own code: a bad call)
            "np.einsum's operands are neither a subscripts string and arrays nor "
            "arrays and sublists", origin())
    pairs = 2 * (len(operands) // 2)    # array, sublist, ..., [output sublist]
    return _einsum_subscripts(operands), operands[0:pairs:2], range(0, pairs, 2)


def _einsum_subscripts(operands) -> str:
    """The subscripts string of an interleaved call: sublist label k is NumPy's
    letter k ('A'-'Z' for 0-25, 'a'-'z' for 26-51), `Ellipsis` is `...`."""
    def spell(sublist):
        return "".join("..." if label is Ellipsis else
                       chr(ord("A") + label) if label < 26 else chr(ord("a") + label - 26)
                       for label in sublist)
    ins = ",".join(spell(operands[i]) for i in range(1, len(operands), 2))
    return ins if len(operands) % 2 == 0 else ins + "->" + spell(operands[-1])


def _einsum_labels(subscripts, shapes):
    """Input and output labels with `...` spelled out and the output explicit."""
    spec = subscripts.replace(" ", "")
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
             if c not in spec]
    n_ell = max([len(shape) - (len(s) - 3) for s, shape in zip(ins, shapes)
                 if "..." in s] + [0])
    ell = "".join(spare[:n_ell])
    spelled = []
    for s, shape in zip(ins, shapes):
        if "..." in s:
            s = s.replace("...", ell[n_ell - (len(shape) - (len(s) - 3)):])
        spelled.append(s)
    if not arrow:
        plain = "".join(ins).replace("...", "")
        out = ell + "".join(sorted(c for c in set(plain) if plain.count(c) == 1))
    else:
        out = out.replace("...", ell)
    return spelled, out


def _einsum_adjoint(g, inputs, output, arrays, k):
    labels, shape = inputs[k], np.shape(arrays[k])
    size = dict(zip(labels, shape))
    others = [j for j in range(len(arrays)) if j != k]
    seen = set(output).union(*(inputs[j] for j in others))
    unique = list(dict.fromkeys(labels))
    kept = [c for c in unique if c in seen]
    spec = ",".join([output] + [inputs[j] for j in others]) + "->" + "".join(kept)
    t = np.einsum(spec, g, *(arrays[j] for j in others))
    t = np.reshape(t, [t.shape[kept.index(c)] if c in kept else 1 for c in unique])
    for i, c in enumerate(unique):               # size-1 (broadcast) labels
        if size[c] == 1 and t.shape[i] != 1:
            t = t.sum(axis=i, keepdims=True)
    t = np.broadcast_to(t, [size[c] for c in unique])
    if len(unique) == len(labels):               # no repeated label (a scalar too)
        return t if is_duck(t) else np.array(t)
    out = np.zeros(shape, dtype=numpy_only(t, "np.einsum with a repeated index").dtype)
    np.einsum(labels + "->" + "".join(unique), out)[...] = t   # a writable view
    return out


def multi_dot_adjoints(g, arrays):
    """The adjoints of `np.linalg.multi_dot(arrays)`: of each factor, the
    adjoint times the transposed products on either side of it (a 1-d
    first factor is a row, a 1-d last one a column, as multi_dot reads
    them)."""
    mats = [np.reshape(a, (1, -1)) if i == 0 and np.ndim(a) == 1 else
            np.reshape(a, (-1, 1)) if i == len(arrays) - 1 and np.ndim(a) == 1 else
            np.asarray(a) for i, a in enumerate(arrays)]
    g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    left, right = [np.eye(mats[0].shape[0])], [np.eye(mats[-1].shape[1])]
    for m in mats[:-1]:
        left.append(left[-1] @ m)
    for m in reversed(mats[1:]):
        right.append(m @ right[-1])
    right.reverse()
    return Seq(np.reshape(left[i].T @ g @ right[i].T, np.shape(a))
               for i, a in enumerate(arrays))


def multi_dot_tangent(ts, arrays):
    """The tangent of `np.linalg.multi_dot(arrays)` from its factors'
    (a zero tangent, of a factor that does not vary, is left out)."""
    return sum((np.linalg.multi_dot([*arrays[:i], t, *arrays[i + 1:]])
                for i, t in enumerate(ts) if not _is_zero(t)),
               np.zeros(np.shape(np.linalg.multi_dot(arrays))))


def multi_dot_adjoints_along(g, arrays, us):
    """The derivative of `multi_dot_adjoints(g, arrays)` along tangents
    `us` of the factors: each factor's adjoint reads every other factor,
    once (second order: hvp through multi_dot)."""
    out = Seq(np.zeros(np.shape(a)) for a in arrays)
    for j, u in enumerate(us):
        if not _is_zero(u):
            moved = multi_dot_adjoints(g, [*arrays[:j], u, *arrays[j + 1:]])
            for i in range(len(arrays)):
                if i != j:
                    out[i] = out[i] + moved[i]
    return out


def multi_dot_tangent_along(ts, arrays, us):
    """The derivative of `multi_dot_tangent(ts, arrays)` along tangents
    `us` of the factors: each term with a second factor moved."""
    terms = [np.linalg.multi_dot([*(us[k] if k == j else ts[k] if k == i else a
                                    for k, a in enumerate(arrays))])
             for i, t in enumerate(ts) for j, u in enumerate(us)
             if i != j and not _is_zero(t) and not _is_zero(u)]
    return sum(terms, np.zeros(np.shape(np.linalg.multi_dot(arrays))))


def _is_zero(t) -> bool:
    """A tangent that stands for zeros of any shape (of a value that does
    not vary)."""
    return t is None or np.ndim(t) == 0 and not np.any(t)

