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


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=5) * 50.0          # large logits: naive exp overflows
    t = np.eye(5)[2]
    dloss = ad.grad(stable_softmax)
    g = dloss(x, t)
    p = np.exp(x - x.max()) / np.sum(np.exp(x - x.max()))
    print("loss          :", stable_softmax(x, t))
    print("gradient      :", np.round(g, 6))
    print("softmax(x) - t:", np.round(p - t, 6))
    print("match         :", np.allclose(g, p - t))
    print()
    print(ad.source(dloss))


if __name__ == "__main__":
    main()
