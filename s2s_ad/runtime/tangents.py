"""The boundary of a tangent function (forward mode): the tangents the user
passes, checked against their arguments, and the output's tangent, given
the output's structure, shape and dtype.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputTypeError, SeedError, UnsupportedValueError
from .core import Seq, Tree, zeros_like
from .duck import duck_like, is_duck
from .origins import origin

_ndarray = np.ndarray


def check_tangent(t, x, pname: str):
    """`t`, the tangent the user passed for argument `x`, with `x`'s
    structure, shape and float dtype; a located error if it cannot be."""
    if type(t) is float and type(x) is float:      # (scalar code)
        return t
    if type(t) is _ndarray and type(x) is _ndarray and t.dtype == x.dtype and \
            x.dtype.kind == "f" and t.shape == x.shape:
        return t                                    # (what the checks below return)
    if isinstance(x, (list, tuple, dict)):
        return _check_tree(t, x, pname)
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (int, np.integer)) or \
            isinstance(x, np.ndarray) and x.dtype.kind in "biu":
        raise InputTypeError(
            f"cannot differentiate with respect to {pname!r}: it is an integer or "
            f"boolean ({type(x).__name__}); s2s_ad never differentiates int or bool values",
            origin(), hint="pass a float (e.g. 3.0) or a float array")
    if is_duck(x) and x.dtype.kind == "f":
        if np.shape(t) != x.shape or np.iscomplexobj(t):
            _refuse_shape(t, x, pname)
        return duck_like(t, x)
    if not isinstance(x, (float, np.ndarray, np.floating)):
        raise InputTypeError(
            f"cannot differentiate with respect to {pname!r}: it is a {type(x).__name__}; "
            "s2s_ad differentiates floats, float arrays, and lists, tuples and dicts of "
            "them", origin(), hint="pass the object's float values as arguments")
    if isinstance(t, (list, tuple, dict)) or np.shape(t) != np.shape(x) or \
            np.iscomplexobj(t) or not np.issubdtype(np.asarray(t).dtype, np.number):
        _refuse_shape(t, x, pname)
    if isinstance(x, np.ndarray):
        return np.asarray(t, dtype=x.dtype)
    return x.dtype.type(t) if isinstance(x, np.generic) else float(t)


def _refuse_shape(t, x, pname: str):
    raise SeedError(
        f"the tangent for {pname!r} has shape {_shape_text(t)}, but {pname!r} has "
        f"shape {np.shape(x)}", origin(),
        hint=f"pass a real tangent shaped like {pname!r} (e.g. np.ones_like({pname}))")


def _check_tree(t, x, pname: str):
    if isinstance(x, dict):
        if not isinstance(t, dict) or set(t) != set(x):
            raise SeedError(f"the tangent for {pname!r} must be a dict with the keys "
                            f"{sorted(map(repr, x))}", origin(),
                            hint="pass one tangent per entry")
        return {k: check_tangent(t[k], v, f"{pname}[{k!r}]") for k, v in x.items()}
    if not isinstance(t, (list, tuple)) or len(t) != len(x):
        raise SeedError(f"the tangent for {pname!r} must be a {type(x).__name__} of "
                        f"{len(x)} item(s)", origin(), hint="pass one tangent per item")
    items = [check_tangent(ti, xi, f"{pname}[{i}]") for i, (ti, xi) in enumerate(zip(t, x))]
    return type(x)(items) if isinstance(x, list) or type(x) is tuple else type(x)(*items)


def _shape_text(t) -> str:
    if isinstance(t, (list, tuple, dict)):
        return f"of a {type(t).__name__}"
    return str(np.shape(t))


def tangent_like(t, out, fname: str):
    """The tangent `t` of `fname`'s output `out`, with its structure, shape
    and float dtype (an int or bool output's tangent is float zeros)."""
    if type(out) is float and type(t) is float:    # (scalar code)
        return t
    if type(t) is type(out) and isinstance(out, np.floating):
        return t                                    # (an immutable NumPy scalar)
    if isinstance(out, (dict, list, tuple)):
        return _tangent_tree(t, out, fname)
    if isinstance(out, np.ndarray):
        dtype = out.dtype if out.dtype.kind in "fc" else np.float64
        result = np.empty(out.shape, dtype=dtype)
        result[...] = t
        return result
    if isinstance(out, np.floating):
        return out.dtype.type(t)
    if is_duck(out):
        return duck_like(t, out if out.dtype.kind in "fc" else out.astype(np.float64))
    if isinstance(out, (complex, np.complexfloating)):
        return complex(t)
    return float(t) if not isinstance(t, (Seq, Tree)) else t


def _tangent_tree(t, out, fname: str):
    """`tangent_like` item by item (a function of its own: the scalar path
    above makes no closure cells)."""
    if isinstance(out, dict):
        return {k: tangent_like(t[k] if isinstance(t, dict) else 0.0, v, fname)
                for k, v in out.items()}
    parts = t if isinstance(t, (list, tuple)) else [0.0] * len(out)
    items = [tangent_like(p, v, fname) for p, v in zip(parts, out)]
    return type(out)(items) if isinstance(out, list) or type(out) is tuple \
        else type(out)(*items)


def zero_tangent(x):
    """A zero tangent for `x`: its structure with `x`'s own container types
    (a list for a list, an adjoint's `Seq` for a `Seq`: a tangent behaves in
    `+` and in NumPy as its primal does), float zeros for its leaves."""
    if type(x) is float:
        return 0.0
    if isinstance(x, (list, tuple)):
        items = [zero_tangent(v) for v in x]
        return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)
    if isinstance(x, dict):
        return type(x)((k, zero_tangent(v)) for k, v in x.items())
    return zeros_like(x)


def overlay(t, t_restored, x, restored, depth: int = 0):
    """The tangent of `x` after `restored` was put back in place (`follow`):
    `t`, with the elements of `x` that are memory of `restored` taking the
    tangents of theirs (all of it when `x` is `restored`), and the items of
    a list, tuple or dict `x` followed likewise; `t` itself where nothing
    is shared.  A fresh value where anything changes."""
    if x is restored:
        return t_restored
    if isinstance(x, np.ndarray) and isinstance(restored, np.ndarray):
        return _overlay_array(t, t_restored, x, restored)
    if isinstance(x, (list, tuple, dict)) and isinstance(t, (list, tuple, dict)) \
            and depth < 8:
        keys = list(x) if isinstance(x, dict) else range(len(x))
        items = {k: overlay(t[k], t_restored, x[k], restored, depth + 1) for k in keys}
        if all(items[k] is t[k] for k in keys):
            return t
        if isinstance(t, dict):
            return type(t)((k, items[k]) for k in keys)
        values = [items[k] for k in keys]
        return type(t)(*values) if hasattr(type(t), "_fields") else type(t)(values)
    return t


def _overlay_array(t, t_restored, x, restored):
    """`overlay` of an array sharing memory with the array `restored`: its
    elements matched by address."""
    if not np.may_share_memory(x, restored):
        return t
    if x.dtype != restored.dtype:
        raise UnsupportedValueError(
            "an array viewed as another dtype was restored in place while its "
            "derivative was being differentiated again", origin(),
            hint="copy the view (`.copy()`) where it is made")
    mine, theirs = _addresses(x), _addresses(restored)
    order = np.argsort(theirs, kind="stable")
    at = np.minimum(np.searchsorted(theirs[order], mine), len(order) - 1)
    hit = theirs[order][at] == mine
    if not hit.any():
        return t
    out = np.array(np.broadcast_to(t, x.shape))
    if out.dtype.kind != "f":
        out = out.astype(float)
    values = np.broadcast_to(t_restored, restored.shape).reshape(-1)
    out.reshape(-1)[hit] = values[order[at[hit]]]
    return out


def _addresses(a: np.ndarray) -> np.ndarray:
    """The address of each element of `a`, in C order."""
    offsets = np.zeros(a.shape, dtype=np.int64)
    for axis, (n, stride) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[axis] = n
        offsets = offsets + (np.arange(n, dtype=np.int64) * stride).reshape(shape)
    return offsets.reshape(-1) + a.__array_interface__["data"][0]
