"""Training a restricted Boltzmann machine by contrastive divergence (CD-k).

The CD loss is mean F(data) - mean F(samples), with F the RBM's free energy.
The samples come from a k-step Gibbs chain started at the data (np.random, a
Python loop): it lives inside `stop_gradient`, so s2s_ad neither differentiates
through the random sampler nor generates any adjoint code for it; the samples
count as constants, which is exactly the CD approximation of the likelihood gradient.

    python examples/contrastive_divergence.py
    s2s-ad dump examples/contrastive_divergence.py:cd_loss --wrt W,b,c
"""
import numpy as np

import s2s_ad as ad

CD_STEPS = 1                   # k: Gibbs steps per sample
PROTOTYPES = (["XX..", "XX..", "..XX", "..XX"],      # 4x4 training patterns
              ["X..X", ".XX.", ".XX.", "X..X"],
              ["XXXX", "....", "XXXX", "...."])


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def gibbs_chain(W, b, c, v, steps, seed):
    """`steps` rounds of block Gibbs sampling v -> h -> v, started at the data."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        h = (rng.random((v.shape[0], W.shape[1])) < sigmoid(v @ W + c)).astype(float)
        v = (rng.random(v.shape) < sigmoid(h @ W.T + b)).astype(float)
    return v


def cd_loss(W, b, c, v, seed):
    """Free energy of the data minus free energy of the (constant) Gibbs samples."""
    v_model = ad.stop_gradient(gibbs_chain(W, b, c, v, CD_STEPS, seed))
    f_data = -(v @ b) - np.sum(np.logaddexp(0.0, v @ W + c), axis=1)
    f_model = -(v_model @ b) - np.sum(np.logaddexp(0.0, v_model @ W + c), axis=1)
    return np.mean(f_data) - np.mean(f_model)


cd_value_and_grad = ad.value_and_grad(cd_loss, wrt=("W", "b", "c"))


def textbook_cd_update(W, b, c, v, seed):
    """The CD gradient as usually written by hand: <v h>_model - <v h>_data."""
    v_model = gibbs_chain(W, b, c, v, CD_STEPS, seed)
    h_data, h_model = sigmoid(v @ W + c), sigmoid(v_model @ W + c)
    n = len(v)
    return ((v_model.T @ h_model - v.T @ h_data) / n,
            (v_model - v).mean(axis=0),
            (h_model - h_data).mean(axis=0))


def reconstruction_error(W, b, c, v):
    """Mean squared error of the mean-field reconstruction v -> p(h|v) -> p(v|h)."""
    return np.mean((v - sigmoid(sigmoid(v @ W + c) @ W.T + b)) ** 2)


def noisy_patterns(rng, n=60, flip=0.05):
    """`n` 4x4 binary images: a random prototype with each pixel flipped w.p. `flip`."""
    protos = np.array([[ch == "X" for ch in "".join(rows)] for rows in PROTOTYPES], float)
    clean = protos[rng.integers(0, len(protos), n)]
    return np.abs(clean - (rng.random(clean.shape) < flip))


def main():
    rng = np.random.default_rng(1)
    v = noisy_patterns(rng)                      # 60 images, 16 pixels
    W = 0.1 * rng.standard_normal((v.shape[1], 8))
    b, c = np.zeros(v.shape[1]), np.zeros(8)
    lr, steps = 1.0, 30

    print(f"RBM {v.shape[1]} visible x {W.shape[1]} hidden, CD-{CD_STEPS}, "
          f"{len(v)} noisy 4x4 images of {len(PROTOTYPES)} patterns")
    print(" step   CD loss  recon err  |grad|")
    errors = []
    for step in range(steps):
        loss, (gW, gb, gc) = cd_value_and_grad(W, b, c, v, step)
        ref = textbook_cd_update(W, b, c, v, step)
        assert all(np.allclose(g, r) for g, r in zip((gW, gb, gc), ref))
        errors.append(reconstruction_error(W, b, c, v))
        norm = np.sqrt(np.sum(gW ** 2) + np.sum(gb ** 2) + np.sum(gc ** 2))
        print(f" {step:4d}  {loss:8.4f}  {errors[-1]:9.4f}  {norm:7.4f}")
        W, b, c = W - lr * gW, b - lr * gb, c - lr * gc
    final = reconstruction_error(W, b, c, v)
    print(f"reconstruction error: {errors[0]:.4f} -> {final:.4f}")
    assert final < 0.5 * errors[0]
    print("OK: the s2s_ad gradient equals the textbook CD update at every step, "
          "and the reconstruction error fell")


if __name__ == "__main__":
    main()
