"""Benchmark workloads: each primal function and its hand-written gradient.

The primal functions are what `s2s_ad.grad` differentiates; they live in this
file so s2s_ad can read their source.  Each hand-written gradient is plain
NumPy, written the way an expert would write it for speed: it takes the same
arguments as the primal and returns what `ad.grad(primal, wrt=...)` returns
(one gradient, or a tuple in `wrt` order).  The loop workloads (B2, B3, B6)
use real reverse mode: the forward sweep stores its intermediates in a list,
the backward sweep walks that list in reverse.

Nothing here imports NumPy before `run.py` has pinned the BLAS thread count;
`run.py` imports this module only after setting the environment.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

import s2s_ad as ad


@dataclass(frozen=True)
class Workload:
    key: str                       # "B1", ...
    title: str                     # one line for the table
    primal: Callable
    hand: Callable                 # hand-written gradient, same signature
    wrt: object                    # as passed to ad.grad
    make_args: Callable            # rng -> tuple of positional arguments
    target: float                  # quotient target (ratio_s2s / ratio_hand)


# --------------------------------------------------------------------------
# B1: a cubic polynomial on a Python float

def b1_poly(x):
    return 3.0*x**3 + 2.0*x**2 - x + 1.0


def b1_hand(x):
    return (9.0*x + 4.0)*x - 1.0


def b1_args(rng):
    return (0.7,)


# --------------------------------------------------------------------------
# B2: 100 iterations of a scalar map (needs `for` loops)

def b2_iterate(x):
    for i in range(100):
        x = math.sin(x) * 0.9 + 0.1 * x * x
    return x


def b2_hand(x):
    xs = []
    for i in range(100):
        xs.append(x)
        x = math.sin(x) * 0.9 + 0.1 * x * x
    g = 1.0
    for x in reversed(xs):
        g *= 0.9 * math.cos(x) + 0.2 * x
    return g


def b2_args(rng):
    return (0.5,)


# --------------------------------------------------------------------------
# B3: Newton's square root (needs `while` loops); d/da of y*y*a

def b3_newton(a):
    y = a
    while abs(y*y - a) > 1e-12:
        y = 0.5*(y + a/y)
    return y*y*a


def b3_hand(a):
    ys = []
    y = a
    while abs(y*y - a) > 1e-12:
        ys.append(y)
        y = 0.5*(y + a/y)
    ga = y*y                        # out = y*y*a
    gy = 2.0*y*a
    for y in reversed(ys):          # y_next = 0.5*(y + a/y)
        ga += gy*0.5/y
        gy *= 0.5*(1.0 - a/(y*y))
    return ga + gy                  # y_0 = a


def b3_args(rng):
    return (2.0,)


# --------------------------------------------------------------------------
# B4: stable softmax cross-entropy, 1000 logits, one-hot target

def b4_softmax_xent(x, t):
    z = x - ad.stop_gradient(np.max(x))
    logp = z - np.log(np.sum(np.exp(z)))
    return -np.sum(t*logp)


def b4_hand(x, t):
    p = np.exp(x - np.max(x))
    p *= np.sum(t) / np.sum(p)      # softmax, scaled by sum(t)
    p -= t
    return p


def b4_args(rng):
    x = rng.standard_normal(1000)
    t = np.zeros(1000)
    t[rng.integers(1000)] = 1.0
    return (x, t)


# --------------------------------------------------------------------------
# B5: MLP 784-256-10, batch 256, tanh, logsumexp cross-entropy

def b5_mlp(X, Y, W1, b1, W2, b2):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    m = ad.stop_gradient(np.max(logits, axis=1, keepdims=True))
    lse = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return np.mean(lse - np.sum(Y * logits, axis=1, keepdims=True))


def b5_hand(X, Y, W1, b1, W2, b2):
    h = X @ W1
    h += b1
    np.tanh(h, out=h)
    logits = h @ W2
    logits += b2
    logits -= np.max(logits, axis=1, keepdims=True)
    p = np.exp(logits, out=logits)
    p /= np.sum(p, axis=1, keepdims=True)
    p -= Y                          # d loss / d logits, times batch size
    p /= X.shape[0]
    dW2 = h.T @ p
    db2 = np.sum(p, axis=0)
    dh = p @ W2.T
    h *= h
    np.subtract(1.0, h, out=h)
    dh *= h                         # d loss / d (X @ W1 + b1)
    dW1 = X.T @ dh
    db1 = np.sum(dh, axis=0)
    return dW1, db1, dW2, db2


def b5_args(rng, batch=256, n_in=784, n_hidden=256, n_out=10):
    X = rng.standard_normal((batch, n_in))
    Y = np.zeros((batch, n_out))
    Y[np.arange(batch), rng.integers(n_out, size=batch)] = 1.0
    W1 = rng.standard_normal((n_in, n_hidden)) / math.sqrt(n_in)
    b1 = 0.1 * rng.standard_normal(n_hidden)
    W2 = rng.standard_normal((n_hidden, n_out)) / math.sqrt(n_hidden)
    b2 = 0.1 * rng.standard_normal(n_out)
    return (X, Y, W1, b1, W2, b2)


# --------------------------------------------------------------------------
# B6: vanilla RNN, 50 steps, hidden 64, input 32 (needs loops + indexing)

def b6_rnn(W, U, b, xs):
    h = np.zeros(b.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h*h)


def b6_hand(W, U, b, xs):
    h = np.zeros(b.shape[0])
    hs = [h]
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
        hs.append(h)
    dW = np.zeros_like(W)
    dU = np.zeros_like(U)
    db = np.zeros_like(b)
    dh = 2.0 * h
    for t in range(xs.shape[0] - 1, -1, -1):
        h = hs[t + 1]
        da = dh * (1.0 - h*h)       # through tanh
        dW += np.outer(da, hs[t])
        dU += np.outer(da, xs[t])
        db += da
        dh = W.T @ da
    return dW, dU, db


def b6_args(rng, steps=50, hidden=64, n_in=32):
    W = 0.9 * rng.standard_normal((hidden, hidden)) / math.sqrt(hidden)
    U = rng.standard_normal((hidden, n_in)) / math.sqrt(n_in)
    b = 0.1 * rng.standard_normal(hidden)
    xs = rng.standard_normal((steps, n_in))
    return (W, U, b, xs)


WORKLOADS = [
    Workload("B1", "cubic polynomial, float", b1_poly, b1_hand, 0, b1_args, 2.0),
    Workload("B2", "100-step scalar map, for loop", b2_iterate, b2_hand, 0, b2_args, 2.0),
    Workload("B3", "Newton sqrt, while loop", b3_newton, b3_hand, 0, b3_args, 2.0),
    Workload("B4", "softmax cross-entropy, n=1000", b4_softmax_xent, b4_hand, 0,
             b4_args, 1.25),
    Workload("B5", "MLP 784-256-10, batch 256", b5_mlp, b5_hand,
             ("W1", "b1", "W2", "b2"), b5_args, 1.25),
    Workload("B6", "RNN 50 steps, hidden 64, input 32", b6_rnn, b6_hand,
             ("W", "U", "b"), b6_args, 1.25),
]
