"""Forward mode and second order: s2s_ad's jvp, hvp and hessian timed.

Run (from the repository root, with s2s_ad installed):

    python benchmarks/forward.py            # full run, about 15 s
    python benchmarks/forward.py --quick    # fewer, shorter batches

Same process, float64, one BLAS thread, timed as benchmarks/run.py times
(interleaved batches, median).  Each derived result is first checked: a
jvp against the hand-written one (where there is one) and central finite
differences, an hvp against differences of gradients.  Tables:

1. jvp ÷ primal on B1, B4, B5 (target ≤ 2), next to a hand-written jvp;
2. hvp ÷ grad on B2 (100-step scalar loop, with a hand-written forward-
   over-forward reference) and B5 (MLP loss) (target ≤ 3, what forward
   over reverse costs in theory);
3. `hessian` of a 50-parameter function against 50 `hvp` calls.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench                   # noqa: E402  (sets the BLAS threads first)
import workloads as wl                # noqa: E402

import numpy as np                    # noqa: E402

import s2s_ad as ad                   # noqa: E402


# -- hand-written references ---------------------------------------------------
def b1_hand_jvp(x, tx):
    return wl.b1_poly(x), ((9.0 * x + 4.0) * x - 1.0) * tx


def b4_hand_jvp(x, t, tx):
    z = x - np.max(x)
    p = np.exp(z)
    s = np.sum(p)
    p /= s
    value = -np.sum(t * (z - np.log(s)))
    return value, -np.sum(t * (tx - p @ tx))


def b5_hand_jvp(X, Y, W1, b1, W2, b2, tW1, tb1, tW2, tb2):
    h = np.tanh(X @ W1 + b1)
    th = (1.0 - h * h) * (X @ tW1 + tb1)
    logits = h @ W2 + b2
    tlogits = th @ W2 + h @ tW2 + tb2
    m = np.max(logits, axis=1, keepdims=True)
    e = np.exp(logits - m)
    s = np.sum(e, axis=1, keepdims=True)
    value = np.mean(m + np.log(s) - np.sum(Y * logits, axis=1, keepdims=True))
    tangent = np.mean(np.sum((e / s - Y) * tlogits, axis=1))
    return value, tangent


def b2_hand_hvp(x, v):
    """f''(x) v for the 100-step map, forward over forward by hand."""
    d1, d2 = 1.0, 0.0
    for _ in range(100):
        g1 = 0.9 * math.cos(x) + 0.2 * x
        g2 = -0.9 * math.sin(x) + 0.2
        d2 = g2 * d1 * d1 + g1 * d2
        d1 = g1 * d1
        x = math.sin(x) * 0.9 + 0.1 * x * x
    return d2 * v


def quadratic_tanh(x, A):
    """A 50-parameter function for the Hessian table."""
    return np.sum(np.tanh(A @ x)) + 0.5 * x @ x


# -- checks ---------------------------------------------------------------------
def _close(a, b, what: str) -> None:
    if not np.allclose(a, b, rtol=1e-7, atol=1e-9):
        sys.exit(f"{what}: s2s_ad {a!r} differs from the reference {b!r}")


def check_jvp(f, args, tangents, hand, jvp) -> None:
    value, tangent = jvp(*args, *tangents)
    if hand is not None:
        hv, ht = hand(*args, *tangents)
        _close(value, hv, f"{f.__name__} jvp value")
        _close(tangent, ht, f"{f.__name__} jvp tangent")
    h = 1e-6
    plus = [a + h * t if t is not None else a for a, t in zip(args, _padded(args, tangents))]
    minus = [a - h * t if t is not None else a for a, t in zip(args, _padded(args, tangents))]
    fd = (f(*plus) - f(*minus)) / (2 * h)
    if not np.isclose(tangent, fd, rtol=1e-5, atol=1e-7):
        sys.exit(f"{f.__name__}: jvp {tangent!r}, finite differences {fd!r}")


def _padded(args, tangents) -> list:
    return [None] * (len(args) - len(tangents)) + list(tangents)


# -- tables ---------------------------------------------------------------------
def jvp_table(settings) -> list:
    rng = np.random.default_rng(0)
    rows = []
    for key, f, make, wrt, hand in [
            ("B1", wl.b1_poly, wl.b1_args, 0, b1_hand_jvp),
            ("B4", wl.b4_softmax_xent, wl.b4_args, 0, b4_hand_jvp),
            ("B5", wl.b5_mlp, wl.b5_args, (2, 3, 4, 5), b5_hand_jvp)]:
        args = make(rng)
        idx = wrt if isinstance(wrt, tuple) else (wrt,)
        tangents = [rng.standard_normal(np.shape(args[i])) if np.ndim(args[i])
                    else float(rng.standard_normal()) for i in idx]
        jvp = ad.jvp(f, wrt=wrt)
        if key != "B4":           # (B4's jvp is with respect to x only)
            check_jvp(f, list(args), tangents, hand, jvp)
        else:
            check_jvp(lambda x, t=args[1]: f(x, t), [args[0]], tangents,
                      lambda x, tx, t=args[1]: hand(x, t, tx),
                      lambda x, tx, t=args[1]: jvp(x, t, tx))
        times = bench.time_interleaved({
            "primal": (f, args, {}), "jvp": (jvp, (*args, *tangents), {}),
            "hand": (hand, (*args, *tangents), {})}, settings)
        rows.append((key, times))
    return rows


def hvp_table(settings) -> list:
    rng = np.random.default_rng(1)
    rows = []
    b2x, v = wl.b2_args(rng)[0], 0.7
    hvp2, grad2 = ad.hvp(wl.b2_iterate), ad.grad(wl.b2_iterate)
    h = 1e-6
    _close(hvp2(b2x, v), (grad2(b2x + h * v) - grad2(b2x - h * v)) / (2 * h), "B2 hvp")
    _close(hvp2(b2x, v), b2_hand_hvp(b2x, v), "B2 hvp against the hand-written one")
    rows.append(("B2", bench.time_interleaved({
        "grad": (grad2, (b2x,), {}), "hvp": (hvp2, (b2x, v), {}),
        "hand": (b2_hand_hvp, (b2x, v), {})}, settings)))
    args = wl.b5_args(rng)
    vW1 = rng.standard_normal(args[2].shape)
    hvp5, grad5 = ad.hvp(wl.b5_mlp, wrt=2), ad.grad(wl.b5_mlp, wrt=2)
    plus, minus = list(args), list(args)
    plus[2], minus[2] = args[2] + h * vW1, args[2] - h * vW1
    got = hvp5(*args, vW1)
    want = (grad5(*plus) - grad5(*minus)) / (2 * h)
    if not np.allclose(got, want, rtol=1e-4, atol=1e-6):
        sys.exit("B5 hvp differs from differences of gradients")
    rows.append(("B5", bench.time_interleaved({
        "grad": (grad5, args, {}), "hvp": (hvp5, (*args, vW1), {})}, settings)))
    return rows


def hessian_row(settings):
    rng = np.random.default_rng(2)
    n = 50
    x, A = rng.standard_normal(n), rng.standard_normal((n, n)) / math.sqrt(n)
    hess, hvp = ad.hessian(quadratic_tanh), ad.hvp(quadratic_tanh)
    H = hess(x, A)
    basis = np.eye(n)

    def by_hvp(x, A):
        return np.stack([hvp(x, A, e) for e in basis], axis=-1)
    _close(H, by_hvp(x, A), "hessian against 50 hvp calls")
    _close(H, H.T, "hessian symmetry")
    return bench.time_interleaved({"hessian": (hess, (x, A), {}),
                                   "50 hvp": (by_hvp, (x, A), {})}, settings)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args(argv)
    settings = bench.QUICK if opts.quick else bench.FULL
    started = time.perf_counter()
    fmt = bench.fmt_time
    print("| | workload | primal | s2s jvp | hand jvp | jvp ÷ primal | hand ÷ primal "
          "| target | result |")
    print("|---|---|---|---|---|---|---|---|---|")
    titles = {w.key: w.title for w in wl.WORKLOADS}
    for key, t in jvp_table(settings):
        ratio = t["jvp"] / t["primal"]
        print(f"| {key} | {titles[key]} | {fmt(t['primal'])} | {fmt(t['jvp'])} | "
              f"{fmt(t['hand'])} | {ratio:.2f} | {t['hand'] / t['primal']:.2f} | ≤ 2 | "
              f"{'PASS' if ratio <= 2 else 'MISS'} |")
    print()
    print("| | workload | s2s grad | s2s hvp | hand hvp | hvp ÷ grad | target | result |")
    print("|---|---|---|---|---|---|---|---|")
    for key, t in hvp_table(settings):
        ratio = t["hvp"] / t["grad"]
        hand = fmt(t["hand"]) if "hand" in t else "—"
        print(f"| {key} | {titles[key]} | {fmt(t['grad'])} | {fmt(t['hvp'])} | {hand} | "
              f"{ratio:.2f} | ≤ 3 | {'PASS' if ratio <= 3 else 'MISS'} |")
    print()
    t = hessian_row(settings)
    print("| | function | hessian | 50 hvp calls | hessian ÷ 50 hvp |")
    print("|---|---|---|---|---|")
    print(f"| H50 | sum(tanh(A @ x)) + x @ x / 2, 50 parameters | {fmt(t['hessian'])} | "
          f"{fmt(t['50 hvp'])} | {t['hessian'] / t['50 hvp']:.2f} |")
    print()
    print(f"{bench.environment()}; {'quick' if opts.quick else 'full'} run.  "
          f"Total {time.perf_counter() - started:.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
