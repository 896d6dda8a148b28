"""The other orders a program is judged in, once its gradient is right:

    jvp   forward mode: `ad.jvp` along the direction the gradient was
          checked in; the value (and aux) must be the primal's, the
          arguments and tangents untouched, and the tangent's projection
          equal to <gradient, direction> (the gradient is already checked
          against finite differences, so this is exact up to rounding, of
          the order of the primal's magnitude).
          Where reverse mode refused the program, forward mode is judged
          too: its tangent against the finite differences themselves
    hvp   second order, forward over reverse (scalar programs, one `wrt`
          entry, no `stop_gradient`: it holds at every order, as JAX's does,
          which differences of gradients do not see): <u, H v> against
          central differences of <u, gradient> along v

Each gives an outcome of the runner's (ok / skipped / refused / wrong /
crash) and a signature, reported per order (`Result.orders`).
"""
from __future__ import annotations

import copy
import inspect
import warnings

import numpy as np

import s2s_ad as ad
from s2s_ad import errors

from . import oracle

ORDERS = ("jvp", "hvp")
RTOL, ATOL = 1e-7, 1e-9             # forward against reverse: the same derivative
_INTERNAL = getattr(errors, "InternalError", None)


def judge(order: str, prog, f, out, grads, dirs, idx, signature, check=None) -> tuple:
    """(outcome, signature, detail) of `order` for a program whose gradient
    `grads` was found right along `dirs` (arguments at positions `idx`).
    `check(tangent's projection)`, None or a problem (outcome, signature,
    detail), judges jvp's tangent; by default against <grads, dirs>."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if order == "jvp":
                return _jvp(prog, f, out, dirs, check or _against(prog, grads, dirs, out))
            return _hvp(prog, f, out, dirs, idx)
    except errors.S2SADError as exc:
        internal = _INTERNAL is not None and isinstance(exc, _INTERNAL)
        return ("crash" if internal else "refused", signature(exc), "")
    except Exception as exc:                # from generated code, or a bug
        import traceback
        return ("crash", signature(exc), traceback.format_exc())


def _call(derived, args, tangents):
    """The jvp function called as documented: tangents after the arguments,
    by keyword when it takes them so."""
    params = list(inspect.signature(derived).parameters.values())
    if params and params[-1].kind is params[-1].KEYWORD_ONLY:
        names = [p.name for p in params][-len(tangents):]
        return derived(*args, **dict(zip(names, tangents)))
    return derived(*args, *tangents)


def _against(prog, grads, dirs, out):
    """The check of a tangent's projection against <gradient, direction>,
    up to rounding of the order of the primal's magnitude: where values
    reach 1e20 (`a -= a ** 3` in a loop), the reverse sweep subtracts
    adjoints of 1e22 that forward mode never forms, and loses what is
    smaller than their rounding (seed 134956; differences lose it too)."""
    want = oracle.inner(list(grads) if prog.wrt_tuple else [grads], dirs)
    slack = oracle.rounding_noise(_magnitude(out[0] if prog.has_aux else out), 1.0)

    def check(got):
        if not oracle.agree(got, want, RTOL, ATOL * max(1.0, abs(want)) + slack):
            return ("wrong", "jvp: wrong tangent",
                    f"jvp {got!r}, <gradient, direction> {want!r}")
        return None
    return check


def _magnitude(tree) -> float:
    """The largest absolute value among the numbers in `tree` (0 if none)."""
    sizes = [0.0]
    for leaf in oracle.tree_leaves(tree):
        try:
            sizes.append(float(np.max(np.abs(np.asarray(leaf, dtype=float)), initial=0.0)))
        except (TypeError, ValueError):
            pass
    return max(sizes)


def _jvp(prog, f, out, dirs, check) -> tuple:
    wrt = prog.wrt_value(list(inspect.signature(f).parameters))
    options = {"has_aux": prog.has_aux}
    if wrt is not None:
        options["wrt"] = wrt
    derived = ad.jvp(f, **options)
    args = copy.deepcopy(list(prog.args))
    tangents = copy.deepcopy(dirs)
    before = copy.deepcopy((args, tangents))
    res = _call(derived, args, tangents)
    if not oracle.identical(before, (args, tangents)):
        return ("wrong", "jvp: mutated input", "")
    value, tangent = res[0], res[1]
    primal = out[0] if prog.has_aux else out
    if not oracle.close(value, primal):
        return ("wrong", "jvp: wrong value", f"expected {primal!r}, got {value!r}")
    if prog.has_aux and not oracle.close(res[2], out[1]):
        return ("wrong", "jvp: wrong aux", f"expected {out[1]!r}, got {res[2]!r}")
    if prog.mode == "vjp":
        ct = prog.cotangent(out)
        got = oracle.inner(ct, tangent)
    else:
        got = float(tangent)
    return check(got) or ("ok", "", "")


def _hvp(prog, f, out, dirs, idx) -> tuple:
    if prog.mode == "vjp" or prog.has_aux or len(idx) != 1:
        return ("skipped", "hvp: needs a scalar function and one wrt entry", "")
    if "stop_gradient" in prog.source:      # it holds at every order, as JAX's does;
        return ("skipped", "hvp: stop_gradient holds at every order",  # differences of
                "")                                                    # gradients do not
    wrt = prog.wrt_value(list(inspect.signature(f).parameters))
    options = {} if wrt is None else {"wrt": wrt[0] if isinstance(wrt, tuple) else wrt}
    args, v = copy.deepcopy(list(prog.args)), dirs[0]
    got_hv = ad.hvp(f, **options)(*args, v)
    rng = np.random.default_rng(prog.seed + 29)
    u = oracle.direction(args[idx[0]], rng)
    got = oracle.inner(got_hv, u)
    grad = ad.grad(f, **options)
    estimates = []
    for h in (oracle.H1, oracle.H2):
        plus, minus = list(args), list(args)
        plus[idx[0]] = oracle.tree_map(lambda a, d: oracle._shift(a, d, h), args[idx[0]], v)
        minus[idx[0]] = oracle.tree_map(lambda a, d: oracle._shift(a, d, -h), args[idx[0]], v)
        estimates.append((oracle.inner(grad(*copy.deepcopy(plus)), u) -
                          oracle.inner(grad(*copy.deepcopy(minus)), u)) / (2 * h))
    if not all(np.isfinite(estimates)) or not oracle.agree(*estimates):
        return ("skipped", "hvp: gradient not smooth at the point", "")
    if not any(oracle.agree(got, e) for e in estimates):
        return ("wrong", "hvp: wrong Hessian-vector product",
                f"<u, H v>: s2s_ad {got!r}, differences of gradients {estimates!r}")
    return ("ok", "", "")
