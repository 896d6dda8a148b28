"""Generated gradients free their arrays at the last use (s2s_ad/release.py)."""
import tracemalloc

import numpy as np

import s2s_ad as ad
from fdcheck import check_grad


def mlp(X, W1, W2):
    h = np.tanh(X @ W1)
    return np.sum((h @ W2) ** 2)


def _peak(fn, *args) -> int:
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reverse_sweep_frees_dead_arrays():
    rng = np.random.default_rng(0)
    X, W1, W2 = rng.standard_normal((128, 300)), rng.standard_normal((300, 128)), \
        rng.standard_normal((128, 4))
    freed = ad.grad(mlp, wrt=(1, 2))
    kept = ad.grad(mlp, wrt=(1, 2), optimize=False)
    assert "del " in ad.source(freed)
    hidden = 128 * 128 * 8          # one (batch, hidden) array
    # h, its adjoint and the tanh input die before dW1 is allocated
    assert _peak(freed, X, W1, W2) <= _peak(kept, X, W1, W2) - 2 * hidden
    check_grad(mlp, (X[:8], W1, W2), wrt=(1, 2))
    check_grad(mlp, (X[:8], W1, W2), wrt=(1, 2), optimize=False)


def test_never_deletes_parameters_scalars_or_loop_variables():
    def f(x, w):
        s = np.sum(x)
        acc = x * w
        for i in range(3):
            acc = acc * w + s
        ys = [acc[0] * 2.0, acc]
        m = max(s, 0.5)                 # (its shape is not known: it may be deleted)
        return np.sum(ys[0] * ys[1]) + m * s

    text = ad.source(ad.grad(f, wrt=(0, 1)))
    deleted = {n.strip() for line in text.splitlines() if line.strip().startswith("del ")
               for n in line.strip()[4:].split(",")}
    assert deleted, text
    assert not deleted & {"x", "w", "s", "ds", "acc", "i", "_x1"}, text
    rng = np.random.default_rng(1)
    check_grad(f, (rng.standard_normal(4), rng.standard_normal(4)), wrt=(0, 1))


def chain(x):
    a = np.sin(x)
    b = np.cos(a) - x * 0.25        # `x * 0.25`'s temporary is inlined away
    c = b + a * x
    return np.sum(c * a)


def test_an_inlined_temporarys_adjoint_goes_where_no_array_lives_longer():
    """The adjoint of `x * 0.25` (a temporary inlined into its reader) goes
    into its own reader where what it reads is read again anyway; in `mlp`
    the adjoint of `X @ W1` reads `dh` and `h` for the last time, so it stays
    a statement of its own and `release` frees both before `dW1`."""
    text = ad.source(ad.grad(chain))
    assert "d_t" not in text, text
    check_grad(chain, (np.array([0.3, -1.2, 2.0]),))
    assert "d_t1 = dh * (1.0 - h * h)" in ad.source(ad.grad(mlp, wrt=(1, 2)))
