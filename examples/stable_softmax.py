"""Numerically stable softmax cross-entropy, differentiated by s2s_ad.

Subtracting max(x) keeps exp() from overflowing.  The shift does not change
the loss, so no gradient should flow through it: `stop_gradient` says so,
and s2s_ad generates no adjoint code at all for `np.max(x)`.

    python examples/stable_softmax.py
    s2s-ad dump examples/stable_softmax.py:stable_softmax
"""
import numpy as np

import s2s_ad as ad


def stable_softmax(x, t):
    """Cross-entropy of softmax(x) against the target distribution t."""
    z = x - ad.stop_gradient(np.max(x))
    logp = z - np.log(np.sum(np.exp(z)))
    return -np.sum(t * logp)


def naive_softmax(x, t):
    """The same loss without the shift: exp() overflows for large logits."""
    p = np.exp(x) / np.sum(np.exp(x))
    return -np.sum(t * np.log(p))


def main():
    rng = np.random.default_rng(0)
    x = 1000.0 + 3.0 * rng.normal(size=5)  # large logits: naive exp overflows
    t = np.array([0.1, 0.1, 0.6, 0.1, 0.1])
    dloss = ad.grad(stable_softmax)
    g = dloss(x, t)
    p = np.exp(x - x.max()) / np.sum(np.exp(x - x.max()))
    with np.errstate(over="ignore", invalid="ignore"):
        naive = naive_softmax(x, t)
    print("logits x                :", np.round(x, 3))
    print("naive loss              :", naive)
    print("stable loss             :", stable_softmax(x, t))
    print("gradient                :", np.round(g, 6))
    print("softmax(x) - t          :", np.round(p - t, 6))
    # Softmax is shift-invariant, so the gradient at x - 1000 (where the naive
    # formula is fine) must be the same: the stopped shift adds no gradient.
    g_small = ad.grad(naive_softmax)(x - 1000.0, t)
    print("naive gradient at x-1000:", np.round(g_small, 6))
    assert np.isnan(naive) and np.allclose(g, p - t) and np.allclose(g, g_small)
    print("OK: gradient = softmax(x) - t, finite where the naive formula overflows")
    print()
    print(ad.source(dloss))


if __name__ == "__main__":
    main()
