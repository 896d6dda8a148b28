"""Logistic regression on a dataset larger than a worker's memory, with Dask.

s2s_ad's gradient code is plain `np.*` calls, and Dask arrays implement
NumPy's dispatch protocols, so the same `value_and_grad(loss)` that runs on
NumPy arrays builds a lazy, chunked graph when the data is a Dask array.
This example trains a logistic regression by gradient descent on
2 x 10^7 samples x 10 features (1.6 GB of float64) on a
`dask.distributed.LocalCluster` of 2 workers with 600 MB of memory each:
the data never exists in one place.  Each chunk of features is generated
lazily from a seed when a task needs it, and the labels come from a known
weight vector, so the loss visibly falls towards the true model's.

Each step hands `value_and_grad`'s results to one `dask.compute` call.
`w` is a small NumPy array and `b` a float; `X` and `y` are Dask arrays, so
the loss and both gradients come back lazy, as Dask arrays (0-d for the loss
and for `b`), and one graph computes them all.  At the
end the gradient is checked against central finite differences of the NumPy
loss on the first 10^4 rows; the script exits 1 if they disagree.

    python examples/dask_logistic_regression.py            # 2e7 samples, 10 steps
    python examples/dask_logistic_regression.py --quick    # 1e6 samples, 3 steps
    s2s-ad dump examples/dask_logistic_regression.py:loss --wrt w,b
"""
import argparse
import sys
import time

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

import s2s_ad as ad

FEATURES = 10
CHUNK_ROWS = 250_000            # 20 MB of float64 features per chunk
CHECK_ROWS = 10_000             # the slice the finite-difference check uses
TOLERANCE = 1e-6                # largest accepted relative error of the check
TRUE_B = 0.5


def loss(w, b, X, y):
    """Mean logistic loss log(1 + exp(-y (X w + b))), labels y in {-1, +1}.

    `np.logaddexp(0, m)` is log(1 + exp(m)) without overflow for a large
    margin m, and its derivative exp(m - logaddexp(0, m)) stays in [0, 1].
    """
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, -y * z))


def true_weights(features=FEATURES):
    """The weights the labels are drawn from: what training should approach."""
    return np.linspace(-2.0, 2.0, features)


def make_data(samples, features=FEATURES, chunk_rows=CHUNK_ROWS, seed=0):
    """Lazy features X ~ N(0, 1) and labels y = +-1 with P(y = 1) = sigmoid(X w* + b*).

    Nothing is computed here: every chunk is generated from its own seed by
    the task that needs it, again each time a computation reads it.
    """
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((samples, features), chunks=(chunk_rows, features))
    u = rng.random(samples, chunks=chunk_rows)
    p = 1.0 / (1.0 + np.exp(-(X @ true_weights(features) + TRUE_B)))
    y = np.where(u < p, 1.0, -1.0)
    return X, y


def progress(step, steps, width=30):
    """A text progress bar, e.g. [##########--------------------]."""
    done = round(width * step / steps)
    return "[" + "#" * done + "-" * (width - done) + "]"


def train(X, y, steps, lr):
    """Gradient descent from zero; prints the loss and a progress bar per step."""
    step_fn = ad.value_and_grad(loss, wrt=("w", "b"))
    w, b = np.zeros(X.shape[1]), 0.0
    for step in range(1, steps + 1):
        t0 = time.perf_counter()
        value, (gw, gb) = dask.compute(*step_fn(w, b, X, y))
        w, b = w - lr * gw, b - lr * float(gb)
        print(f"step {step:3d}/{steps} {progress(step, steps)} loss {float(value):.6f}"
              f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    return w, b


def finite_differences(f, w, b, eps=1e-6):
    """Central differences of the scalar f(w, b) for every entry of w, then b."""
    grads = []
    for i in range(w.size):
        e = np.zeros_like(w)
        e[i] = eps
        grads.append((f(w + e, b) - f(w - e, b)) / (2 * eps))
    grads.append((f(w, b + eps) - f(w, b - eps)) / (2 * eps))
    return np.array(grads)


def check_gradient(X, y, w, b):
    """The Dask gradient on the first CHECK_ROWS rows against central differences
    of the NumPy loss on the same rows; returns the relative error."""
    rows = min(CHECK_ROWS, X.shape[0])
    Xd, yd = X[:rows], y[:rows]
    gw, gb = dask.compute(*ad.grad(loss, wrt=("w", "b"))(w, b, Xd, yd))
    Xs, ys = dask.compute(Xd, yd)                    # the same rows, as NumPy
    fd = finite_differences(lambda w_, b_: loss(w_, b_, Xs, ys), w, b)
    got = np.append(gw, gb)
    return float(np.linalg.norm(got - fd) / np.linalg.norm(fd))


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=float, default=2e7,
                        help="number of samples (default 2e7: 1.6 GB of features)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--lr", type=float, default=2.0, help="step size")
    parser.add_argument("--memory-limit", default="600MB",
                        help="memory limit of each of the 2 workers (default 600MB)")
    parser.add_argument("--quick", action="store_true",
                        help="1e6 samples and 3 steps, for tests and CI")
    opts = parser.parse_args(argv)
    if opts.quick:
        opts.samples, opts.steps = 1e6, 3
    opts.samples = int(opts.samples)
    return opts


def main(argv=None):
    """Train on a LocalCluster, then check the gradient; 0 when the check passes."""
    opts = parse(argv)
    X, y = make_data(opts.samples)
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=opts.memory_limit,
                      dashboard_address=None) as cluster, Client(cluster):
        print(f"{opts.samples:,} samples x {FEATURES} features = {X.nbytes / 1e9:.2f} GB "
              f"of float64 in {X.numblocks[0]} chunks; 2 workers, "
              f"memory limit {opts.memory_limit} each")
        w, b = train(X, y, opts.steps, opts.lr)
        print("learned w:", np.round(w, 2), " b:", round(b, 2))
        print("true    w:", np.round(true_weights(), 2), " b:", TRUE_B)
        error = check_gradient(X, y, w, b)
    if error > TOLERANCE:
        print(f"FAILED: gradient vs central finite differences on {CHECK_ROWS} rows: "
              f"relative error {error:.2e} > {TOLERANCE:g}")
        return 1
    print(f"OK: gradient matches central finite differences on {CHECK_ROWS} rows "
          f"(relative error {error:.2e} <= {TOLERANCE:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
