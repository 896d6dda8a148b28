"""Realistic user programs, written the way people write them, differentiated
with s2s_ad and compared against central finite differences.

Each case is a plain module-level function (or a lambda on its own line).
The oracle below handles structured arguments (dict / list / tuple of floats
and arrays) and deep-copies arguments for every primal evaluation.  float32
cases compare the float32 gradient with the float64 gradient of the same
function (finite differences are meaningless in float32).
"""
import copy
import functools
import math

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_vjp, checked_grad, checked_value_and_grad

HERE = __file__


# ---------------------------------------------------------------------------
# oracle
# ---------------------------------------------------------------------------

rng = np.random.default_rng(12345)


def randn(*shape):
    return rng.standard_normal(shape)


def spd(n, jitter=1.0):
    a = randn(n, n)
    return a @ a.T + jitter * n * np.eye(n)


# ---------------------------------------------------------------------------
# 1. Classic ML losses
# ---------------------------------------------------------------------------

def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def logistic_loss(w, b, X, y, lam=0.1):
    p = sigmoid(X @ w + b)
    eps = 1e-12
    nll = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
    return nll + 0.5 * lam * np.sum(w ** 2)


def softmax_regression_loss(W, X, labels, reg):
    n = X.shape[0]
    scores = X @ W
    scores = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
    loss = -np.sum(log_probs[np.arange(n), labels]) / n
    loss += reg * np.sum(W * W)
    return loss


def softmax_regression_onehot(W, b, X, Y):
    logits = X.dot(W) + b
    m = logits.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    return -(Y * (logits - lse)).sum() / len(X) + 1e-3 * (W ** 2).sum()


def relu(x):
    return np.maximum(x, 0.0)


def dense(x, W, b):
    return x @ W + b


def mlp_loss(params, X, y):
    h = relu(dense(X, params["W1"], params["b1"]))
    out = dense(h, params["W2"], params["b2"])
    err = out[:, 0] - y
    return 0.5 * np.mean(err ** 2)


def mlp_layers_loss(layers, X, Y):
    h = X
    for i, layer in enumerate(layers):
        h = h @ layer["W"] + layer["b"]
        if i < len(layers) - 1:
            h = np.tanh(h)
    return np.mean((h - Y) ** 2)


def huber_loss(pred, target, delta=1.0):
    r = pred - target
    quad = 0.5 * r ** 2
    lin = delta * (np.abs(r) - 0.5 * delta)
    return np.sum(np.where(np.abs(r) <= delta, quad, lin))


def hinge_svm(w, X, y, C=1.0):
    margins = 1 - y * (X @ w)
    return 0.5 * w @ w + C * np.sum(np.maximum(0, margins))


def layer_norm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + 1e-5)
    y = gamma * xhat + beta
    return np.sum(y ** 3)


def attention(Q, K, V):
    d = Q.shape[-1]
    s = Q @ K.T / np.sqrt(d)
    s = s - s.max(axis=-1, keepdims=True)
    a = np.exp(s)
    a = a / a.sum(axis=-1, keepdims=True)
    return np.sum((a @ V) ** 2)


def cosine_sim_loss(a, b):
    cos = np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))
    return 1.0 - cos


def mixture_nll(means, log_sig, logits, x):
    # 1-D Gaussian mixture, log-sum-exp over components
    w = logits - np.max(logits)
    logw = w - np.log(np.sum(np.exp(w)))
    sig = np.exp(log_sig)
    z = (x[:, None] - means[None, :]) / sig[None, :]
    comp = logw[None, :] - 0.5 * z ** 2 - log_sig[None, :] - 0.5 * np.log(2 * np.pi)
    m = ad.stop_gradient(comp.max(axis=1, keepdims=True))
    ll = m[:, 0] + np.log(np.exp(comp - m).sum(axis=1))
    return -ll.sum()


# ---------------------------------------------------------------------------
# 2. Recurrent nets
# ---------------------------------------------------------------------------

def rnn_step(h, x, Wh, Wx, b):
    return np.tanh(h @ Wh + x @ Wx + b)


def rnn_loss(Wh, Wx, b, xs, h0):
    h = h0
    states = []
    for t in range(len(xs)):
        h = rnn_step(h, xs[t], Wh, Wx, b)
        states.append(h)
    H = np.stack(states)
    return np.sum(H ** 2) / H.shape[0]


def lstm_cell(x, h, c, W, U, b):
    z = x @ W + h @ U + b
    n = h.shape[-1]
    i = sigmoid(z[:n])
    f = sigmoid(z[n:2 * n])
    o = sigmoid(z[2 * n:3 * n])
    g = np.tanh(z[3 * n:])
    c_new = f * c + i * g
    h_new = o * np.tanh(c_new)
    return h_new, c_new


def lstm_loss(W, U, b, xs):
    n = U.shape[0]
    h = np.zeros(n)
    c = np.zeros(n)
    outputs = []
    for x in xs:
        h, c = lstm_cell(x, h, c, W, U, b)
        outputs.append(h)
    return np.sum(np.array(outputs) ** 2)


# ---------------------------------------------------------------------------
# 3. Gaussians and GPs (linalg)
# ---------------------------------------------------------------------------

def gaussian_logpdf(x, mu, L):
    cov = L @ L.T + 0.5 * np.eye(len(mu))
    d = x - mu
    sign, logdet = np.linalg.slogdet(cov)
    k = len(mu)
    return -0.5 * (d @ np.linalg.solve(cov, d) + logdet + k * np.log(2 * np.pi))


def gaussian_logpdf_inv(X, mu, cov):
    prec = np.linalg.inv(cov)
    diff = X - mu
    quad = np.einsum("ni,ij,nj->n", diff, prec, diff)
    return -0.5 * np.sum(quad) - 0.5 * X.shape[0] * np.log(np.linalg.det(cov))


def rbf_kernel(x, lengthscale, variance):
    sq = (x[:, None] - x[None, :]) ** 2
    return variance * np.exp(-0.5 * sq / lengthscale ** 2)


def gp_nll(lengthscale, variance, noise, x, y):
    K = rbf_kernel(x, lengthscale, variance) + noise * np.eye(x.shape[0])
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(x) * np.log(2 * np.pi)


def gp_nll_2d(log_ell, X, y):
    ell = np.exp(log_ell)
    Xs = X / ell
    d2 = np.sum(Xs ** 2, 1)[:, None] + np.sum(Xs ** 2, 1)[None, :] - 2 * Xs @ Xs.T
    K = np.exp(-0.5 * d2) + 0.1 * np.eye(len(y))
    sign, logdet = np.linalg.slogdet(K)
    return 0.5 * y.T @ np.linalg.inv(K) @ y + 0.5 * logdet


def kl_gauss(mu, log_var):
    return -0.5 * np.sum(1 + log_var - mu ** 2 - np.exp(log_var))


# ---------------------------------------------------------------------------
# 4. Physics / ODE integration
# ---------------------------------------------------------------------------

def spring_mass_energy(k, x0, v0, m=1.0, dt=0.01, steps=100):
    x = x0.copy()
    v = v0.copy()
    for _ in range(steps):
        a = -k / m * x
        x = x + dt * v
        v = v + dt * a
    return 0.5 * m * np.sum(v ** 2) + 0.5 * k * np.sum(x ** 2)


def spring_chain_inplace(x0, k):
    # positions of a chain of masses, updated in place
    x = x0.copy()
    v = np.zeros_like(x)
    dt = 0.02
    for step in range(100):
        f = np.zeros_like(x)
        f[1:] -= k * (x[1:] - x[:-1])
        f[:-1] += k * (x[1:] - x[:-1])
        v += dt * f
        x += dt * v
    return np.sum(x ** 2)


def pendulum(theta0, length, g=9.81):
    theta = theta0
    omega = 0.0
    dt = 0.01
    for i in range(200):
        alpha = -g / length * math.sin(theta)
        omega = omega + dt * alpha
        theta = theta + dt * omega
    return theta


def rk4_rhs(y, a):
    return np.array([y[1], -a * y[0] - 0.1 * y[1]])


def rk4_oscillator(y0, a):
    y = y0
    h = 0.05
    for n in range(40):
        k1 = rk4_rhs(y, a)
        k2 = rk4_rhs(y + 0.5 * h * k1, a)
        k3 = rk4_rhs(y + 0.5 * h * k2, a)
        k4 = rk4_rhs(y + h * k3, a)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[0] ** 2 + y[1]


def projectile_range(v0, angle):
    # Python floats and math.*, stop when the projectile hits the ground
    x, y = 0.0, 0.0
    vx = v0 * math.cos(angle)
    vy = v0 * math.sin(angle)
    dt = 0.001
    drag = 0.05
    while True:
        speed = math.sqrt(vx * vx + vy * vy)
        vx -= drag * speed * vx * dt
        vy -= (9.81 + drag * speed * vy) * dt
        x += vx * dt
        y += vy * dt
        if y < 0:
            break
    return x


# ---------------------------------------------------------------------------
# 5. Iterative solvers
# ---------------------------------------------------------------------------

def newton_sqrt(a, tol=1e-12):
    x = a
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


def fixed_point_cos(a):
    x = 0.0
    it = 0
    while it < 200:
        x_new = math.cos(a * x)
        if abs(x_new - x) < 1e-13:
            x = x_new
            break
        x = x_new
        it += 1
    return x


def gradient_descent_inner(w0, X, y, lr=0.1, n_iter=20):
    w = w0
    for _ in range(n_iter):
        r = X @ w - y
        g = X.T @ r / len(y)
        w = w - lr * g
    return np.sum(w ** 2)


def power_iteration(A):
    v = np.ones(A.shape[0]) / np.sqrt(A.shape[0])
    for _ in range(50):
        w = A @ v
        v = w / np.linalg.norm(w)
    return v @ A @ v


# ---------------------------------------------------------------------------
# 6. Control flow, Python floats, recursion
# ---------------------------------------------------------------------------

def piecewise(x):
    if x < 0:
        y = x ** 2
    elif x < 1:
        y = math.sin(x)
    elif x < 2:
        y = 2 * x - 1
    else:
        y = math.log(x)
    return y * x


def smooth_abs_sum(x):
    total = 0.0
    for xi in x:
        if xi > 0:
            total += xi ** 1.5
        else:
            total += -xi
    return total


def python_float_stats(a, b, c):
    r = math.sqrt(a * a + b * b)
    t = math.atan2(b, a)
    return math.exp(-r) * math.cos(t) + math.log1p(c * c) + max(a, c) * min(b, 2.0)


def horner(coeffs, x):
    if len(coeffs) == 1:
        return coeffs[0]
    return coeffs[0] + x * horner(coeffs[1:], x)


def recursive_poly(x):
    return horner([1.0, -2.0, 0.5, 3.0], x)


def factorial_like(x, n):
    if n == 0:
        return 1.0
    return x * factorial_like(x - 0.1, n - 1)


def tree_sum(x):
    if x.shape[0] == 1:
        return np.sin(x[0])
    mid = x.shape[0] // 2
    return tree_sum(x[:mid]) * tree_sum(x[mid:]) + 1.0


def early_return(x, thresh):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] ** 2
        if s > thresh:
            return s * 2.0
    return s


# ---------------------------------------------------------------------------
# 7. Shapes, indexing, in-place updates
# ---------------------------------------------------------------------------

def strided_sum(x):
    n = x.shape[0]
    acc = 0.0
    for i in range(1, n, 3):
        acc += x[i] * x[i - 1]
    for i in range(n - 1, 0, -2):
        acc -= 0.5 * x[i] ** 2
    return acc


def zip_layers(weights, biases, x):
    h = x
    for W, b in zip(weights, biases):
        h = np.tanh(W @ h + b)
    return np.sum(h)


def fill_loop(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i] * x[i - 1]
    return np.sum(out * np.arange(len(x)))


def mask_zero(x):
    y = x.copy()
    y[y < 0] = 0
    return np.sum(y ** 2)


def mask_zero_direct(x):
    x = x * 2.0
    x[x < 0.5] = 0.0
    return np.sum(np.sin(x))


def accumulate_inplace(a, b):
    out = a.copy()
    out += b
    out *= a
    out[0] += 3.0 * b[1]
    return np.sum(out ** 2)


def row_normalize(M):
    M = M.copy()
    for i in range(M.shape[0]):
        M[i] /= np.linalg.norm(M[i])
    return np.sum(M[:, 0] * M[:, 1])


def total_variation(img):
    dx = img[:, 1:] - img[:, :-1]
    dy = img[1:, :] - img[:-1, :]
    return np.sum(np.sqrt(dx[:-1, :] ** 2 + dy[:, :-1] ** 2 + 1e-3))


def conv1d(x, kernel):
    k = len(kernel)
    n = len(x) - k + 1
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.dot(x[i:i + k], kernel)
    return np.sum(out ** 2)


def methods_mix(X):
    Z = X.T.reshape(-1, 2)
    s = Z.sum(axis=1)
    return s.mean() * X.std() + (X.T @ X).trace() + X.ravel()[::-1][0]


def einsum_bilinear(A, x, y):
    return np.einsum("i,ij,j->", x, A, y) + np.einsum("ij,ij->", A, A)


def tensordot_contract(T, M):
    r = np.tensordot(T, M, axes=([1, 2], [0, 1]))
    return np.sum(r ** 2)


def outer_cumsum(u, v):
    P = np.outer(u, v)
    c = np.cumsum(P, axis=0)
    return np.sum(np.clip(c, -1.0, 1.0) ** 2) + np.sum(np.cumsum(u) * v[: len(u)])


def topk_sum(x, k=3):
    s = np.sort(x)
    return np.sum(s[-k:]) - np.sum(s[:k] ** 2)


def concat_stack(a, b):
    c = np.concatenate([a, b * 2.0])
    S = np.stack([a, b], axis=1)
    V = np.vstack((a, b))
    return np.sum(c ** 2) + np.sum(S[:, 0] * S[:, 1]) + np.sum(V @ V.T)


def swap_and_tuple(a, b):
    def stats(v):
        return v.mean(), v.var()
    m1, v1 = stats(a)
    m2, v2 = stats(b)
    a, b = b, a
    return (m1 - m2) ** 2 + v1 * v2 + np.sum(a * b)


# ---------------------------------------------------------------------------
# 8. Closures, nested defs, lambdas
# ---------------------------------------------------------------------------

def make_loss(scale, target):
    def loss(x):
        return scale * np.sum((x - target) ** 2)
    return loss


closure_loss = make_loss(3.0, np.array([1.0, -1.0, 0.5]))


def nested_defs(x, w):
    def activation(z):
        return np.tanh(z) * w

    def layer(h):
        return activation(h @ np.ones((3, 3)) * 0.3 + w)
    h = layer(x)
    h = layer(h)
    return np.sum(h ** 2)


def inner_lambda(x, a):
    sq = lambda v: a * v * v  # noqa: E731
    return np.sum(sq(x)) + sq(a)


softplus_sum = lambda x: np.sum(np.logaddexp(0.0, x))  # noqa: E731


def apply_fns(x):
    fns = [np.sin, np.cos, np.tanh]
    total = 0.0
    for fn in fns:
        total = total + np.sum(fn(x))
    return total


def with_default_kw(x, reg=0.5, power=2):
    return np.sum(np.abs(x) ** power) + reg * np.sum(x) ** 2


def kw_caller(x):
    return with_default_kw(x, power=3, reg=0.1) + with_default_kw(reg=1.0, x=x * 2)


# ---------------------------------------------------------------------------
# 9. float32
# ---------------------------------------------------------------------------

def mlp32(W1, W2, X):
    h = np.maximum(X @ W1, 0)
    out = h @ W2
    return np.mean((out - 1.0) ** 2)


# ---------------------------------------------------------------------------
# 10. More everyday code
# ---------------------------------------------------------------------------

EPS = 1e-8


def l2_over_dict(params, X, y):
    """Linear model with an L2 penalty over every parameter."""
    pred = X @ params["w"] + params["b"]
    loss = np.mean((pred - y) ** 2)
    reg = 0.0
    for name in params:
        reg += np.sum(params[name] ** 2)
    return loss + 1e-2 * reg


def l2_over_dict_values(params, X, y):
    pred = X @ params["w"] + params["b"]
    reg = 0.0
    for v in params.values():
        reg = reg + np.sum(v ** 2)
    return np.mean((pred - y) ** 2) + 1e-2 * reg


def l2_over_dict_items(params, X, y):
    pred = X @ params["w"] + params["b"]
    reg = 0.0
    for k, v in params.items():
        if k.startswith("w"):
            reg = reg + np.sum(v ** 2)
    return np.mean((pred - y) ** 2) + 1e-2 * reg


def tuple_params(params, x):
    W, b = params
    return np.sum(np.tanh(W @ x + b) ** 2)


def annotated(x: np.ndarray, scale: float = 2.0) -> float:
    """Docstring, type hints, an assert and a module constant."""
    assert x.ndim == 1, "expects a vector"
    n: int = x.shape[0]
    return scale * np.sum(np.log(x ** 2 + EPS)) / n


def with_print(w, X, y):
    loss = np.mean((X @ w - y) ** 2)
    print(f"loss = {loss:.4f}")
    return loss


def config_dict_literal(w, X, y):
    cfg = {"lr": 0.1, "steps": 5}
    for _ in range(cfg["steps"]):
        w = w - cfg["lr"] * X.T @ (X @ w - y) / len(y)
    return np.sum((X @ w - y) ** 2)


def embedding_lookup(E, tokens, target):
    vecs = E[tokens]                      # repeated indices
    h = vecs.mean(axis=0)
    return np.sum((h - target) ** 2) + 0.1 * np.sum(E[tokens[0]] * E[tokens[-1]])


def leaky_relu_net(W, x):
    z = W @ x
    a = np.where(z > 0, z, 0.01 * z)
    return a.max() + a.sum()


def rows_loop(X, w):
    total = 0.0
    for row in X:
        total += np.dot(row, w) ** 2
    return total / X.shape[0]


def while_index_loop(x):
    i = 0
    acc = 1.0
    n = len(x)
    while i < n:
        acc = acc * (1.0 + x[i] ** 2)
        i += 1
    return np.log(acc)


def gd_while_tolerance(a, b):
    # minimise (x - a)^2 + b x^2 by gradient descent until the step is small
    x = 0.0
    step = 1.0
    while abs(step) > 1e-10:
        g = 2 * (x - a) + 2 * b * x
        step = 0.1 * g
        x = x - step
    return x


def conv2d_valid(img, K):
    k = K.shape[0]
    H, W = img.shape
    out = np.zeros((H - k + 1, W - k + 1))
    for i in range(H - k + 1):
        for j in range(W - k + 1):
            out[i, j] = np.sum(img[i:i + k, j:j + k] * K)
    return np.sum(np.tanh(out))


def batch_norm(x, gamma, beta):
    mu = np.mean(x, axis=0)
    var = np.var(x, axis=0)
    xn = (x - mu) / np.sqrt(var + 1e-5)
    out = gamma * xn + beta
    return np.sum(out[:, 0] * out[:, 1])


def kernel_ridge(lam, X, y):
    K = np.exp(-np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1))
    alpha = np.linalg.solve(K + lam * np.eye(len(y)), y)
    return float(y @ alpha)


def poisson_regression(w, X, counts):
    eta = X @ w
    return np.sum(np.exp(eta) - counts * eta)


def logistic_map(r, x0):
    x = x0
    for _ in range(30):
        x = r * x * (1 - x)
    return x


def list_sum_builtin(xs):
    terms = []
    for i, x in enumerate(xs):
        terms.append((i + 1) * np.sum(x ** 2))
    return sum(terms)


def list_of_floats_to_array(a, b):
    vals = [a, a * b, b ** 2, math.exp(a)]
    v = np.array(vals)
    return float(np.sum(v * np.arange(1, 5)))


def eigh_top(A):
    S = A + A.T
    w, V = np.linalg.eigh(S)
    return w[-1] + np.sum(V[:, -1] ** 4)


def alias_update(x):
    y = x.copy()
    z = y
    z[0] = 5.0 * y[1]
    return np.sum(y ** 2)


def numpy_scalar_input(x, s):
    return np.sum(np.exp(-s * x ** 2)) * s


def prod_norms(A, x):
    return np.prod(np.linalg.norm(A, axis=1)) + np.linalg.norm(A @ x) + np.linalg.norm(A, "fro")


def item_and_float(w):
    loss = np.sum(w ** 2)
    scale = float(np.max(np.abs(w)))
    return loss * scale + w.sum().item()


def cumulative_discounted(rewards, gamma):
    G = 0.0
    returns = np.zeros_like(rewards)
    for t in reversed(range(len(rewards))):
        G = rewards[t] + gamma * G
        returns[t] = G
    return np.sum(returns ** 2)


def enumerate_zip_nested(xs, ys, w):
    loss = 0.0
    for i, (x, y) in enumerate(zip(xs, ys)):
        loss = loss + (i + 1) * (np.dot(w, x) - y) ** 2
    return loss


class LinearModel:
    def __init__(self, W):
        self.W = W

    def loss(self, x, y):
        return np.sum((self.W @ x - y) ** 2)


MODEL = LinearModel(np.array([[1.0, 2.0], [0.5, -1.0]]))


def local_import(x):
    from numpy.linalg import norm
    return norm(x) ** 2


# ---------------------------------------------------------------------------
# 11. Loops nested in loops, in-place NumPy idioms
# ---------------------------------------------------------------------------

def cube_roots_newton(cs):
    # Newton's method per element, stopping at a tolerance
    roots = []
    for c in cs:
        x = 1.0
        for it in range(50):
            dx = (x ** 3 - c) / (3 * x ** 2)
            x = x - dx
            if abs(dx) < 1e-12:
                break
        roots.append(x)
    return sum(roots)


def halve_until_small(a):
    total = 0.0
    for k in range(3):
        x = a + k
        while x > 0.5:
            x = x / 2.0
        total += x ** 2
    return total


def first_large_per_row(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] > 1.0:
                break
            s += X[i, j] ** 2
    return s


def skip_negative_2d(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] < 0:
                continue
            s += X[i, j] ** 2
    return s


def sorted_inplace(x):
    y = x.copy()
    y.sort()
    return y[-1] * 2 + y[0] ** 2


def scatter_iadd(x, v):
    out = x.copy()
    idx = np.array([0, 2, 0, 1])
    out[idx] += v
    return np.sum(out ** 2 * np.arange(1, 5))


def exp_out_kwarg(x):
    y = np.empty_like(x)
    np.exp(x, out=y)
    return np.sum(y * x)


def fill_diagonal_cov(A):
    C = A @ A.T
    np.fill_diagonal(C, 1.0)
    return np.sum(C ** 2)


def recurrence_inplace(x, a):
    y = x.copy()
    for i in range(1, len(y)):
        y[i] = a * np.sin(y[i - 1]) + y[i]
    return np.sum(y ** 2)


def naive_matmul(A):
    n = A.shape[0]
    C = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            for k in range(n):
                C[i, j] += A[i, k] * A[k, j]
    return np.sum(C)


def take_along_ce(logits, labels):
    lp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -np.take_along_axis(lp, labels[:, None], axis=1).mean()


def svd_qr_pinv(A):
    s = np.linalg.svd(A, compute_uv=False)
    Q, R = np.linalg.qr(A)
    return np.sum(s) + np.sum(np.abs(np.diag(R))) + np.sum(np.linalg.pinv(A) ** 2)


def varargs_helper(*xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(x ** 2)
    return total


def calls_varargs(a, b):
    return varargs_helper(a, b, a * b)


SUM_OPTS = {"axis": 0, "keepdims": True}


def sums_with_options(x):
    """`**options` of keys not known where the function is compiled."""
    return np.sum(np.sum(x ** 2, **SUM_OPTS) * x)


def partial_target(w, X, y):
    return np.sum((X @ w - y) ** 2)


partial_loss = functools.partial(partial_target, X=randn(5, 3), y=randn(5))


# ---------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------

X20 = randn(20, 3)
Y20 = (rng.random(20) > 0.5).astype(float)
LAB = rng.integers(0, 4, size=15)
Xs15 = randn(15, 5)
ONEHOT = np.eye(4)[LAB]


def params_mlp():
    return {"W1": randn(4, 6) * 0.5, "b1": randn(6) * 0.1 + 0.05,
            "W2": randn(6, 1) * 0.5, "b2": np.array([0.1])}


def jacobi_energy(b, A, iters=8):
    """Jacobi iteration for A x = b (Golub & Van Loan 10.1), through a full slice."""
    D = np.diag(A)
    R = A - np.diag(D)
    x = np.zeros_like(b)
    for _ in range(iters):
        x_new = (b - R @ x) / D
        x[:] = x_new
    r = A @ x - b
    return 0.5 * x @ (A @ x) - b @ x + 1e-3 * (r @ r)


def _apply_bc(u, left, right):
    # ghost cells, filled in place by a helper (PDE codes' way)
    u[0] = 2.0 * left - u[1]
    u[-1] = 2.0 * right - u[-2]


def heat_with_ghost_cells(kappa, u0):
    n = u0.shape[0]
    dx = 1.0 / (n - 1)
    dt = 0.2 * dx ** 2
    u = np.empty(n + 2)
    u[1:-1] = u0
    for _ in range(15):
        _apply_bc(u, 0.0, 1.0)
        interior = u[1:-1]
        interior += dt * kappa * (u[:-2] - 2.0 * u[1:-1] + u[2:]) / dx ** 2
    _apply_bc(u, 0.0, 1.0)
    with np.errstate(over="ignore"):
        return np.sum((u[1:-1] - np.linspace(0.0, 1.0, n)) ** 2)


def _logsumexp(a, axis=None):
    # scipy.special.logsumexp's shape: a guard, then the stable form
    a_max = np.max(a, axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        if not np.all(np.isfinite(a_max)):
            return np.log(np.sum(np.exp(a), axis=axis))
        s = np.sum(np.exp(a - a_max), axis=axis, keepdims=True)
        out = np.log(s) + a_max
    return np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def softmax_nll(W, X, y):
    logits = X @ W
    return np.mean(_logsumexp(logits, axis=1) - logits[np.arange(len(y)), y])


def wave_leapfrog(c, u0, steps=20, dt=0.05, dx=0.2):
    """Leapfrog for the 1-d wave equation, written through a view of the
    next state and swapping the two state arrays."""
    u_prev = u0.copy()
    u = u0.copy()
    lam = (c * dt / dx) ** 2
    for _ in range(steps):
        nxt = np.empty_like(u)
        inner = nxt[1:-1]
        inner[:] = 2 * u[1:-1] - u_prev[1:-1] + lam * (u[2:] - 2 * u[1:-1] + u[:-2])
        nxt[0] = 0.0
        nxt[-1] = 0.0
        u_prev, u = u, nxt
    return np.sum(u ** 2)


def _spd(n):
    m = randn(n, n)
    return m @ m.T + (n + 1.0) * np.eye(n)


# autograd's examples/fixed_points.py, with `fixed_point` written out as
# autograd's forward pass runs it: the iteration function is a lambda a
# factory makes from `a`, the value differentiated (its gradient reaches `a`
# through what the lambda captured)
def _fixed_point(f, a, x0, distance, tol):
    _f = f(a)
    x, x_prev = _f(x0), x0
    while distance(x, x_prev) > tol:
        x, x_prev = _f(x), x
    return x


def _newton_sqrt_iter(a):
    return lambda x: 0.5 * (x + a / x)


def _grad_descent_sqrt_iter(a):
    return lambda x: x - 0.05 * (x**2 - a)


def _distance(x, y):
    return np.abs(x - y)


def fixed_point_sqrt(a, guess=10.0):
    return _fixed_point(_grad_descent_sqrt_iter, a, guess, _distance, 1e-4)


def fixed_point_newton_sqrt(a, guess=10.0):
    return _fixed_point(_newton_sqrt_iter, a, guess, _distance, 1e-4)


CASES = [
    ("logistic_w_b", logistic_loss, lambda: [randn(3), 0.2, X20, Y20], (0, 1)),
    ("logistic_lam_kw", logistic_loss, lambda: [randn(3), 0.2, X20, Y20, 0.3], ("w", "lam")),
    ("softmax_regression", softmax_regression_loss, lambda: [randn(5, 4) * 0.3, Xs15, LAB, 0.01], 0),
    ("softmax_regression_onehot", softmax_regression_onehot, lambda: [randn(5, 4) * 0.3, randn(4), Xs15, ONEHOT], (0, 1)),
    ("mlp_dict", mlp_loss, lambda: [params_mlp(), randn(8, 4), randn(8)], 0),
    ("mlp_list_of_dicts", mlp_layers_loss,
     lambda: [[{"W": randn(3, 5) * 0.5, "b": randn(5) * 0.1}, {"W": randn(5, 2) * 0.5, "b": randn(2) * 0.1}],
              randn(6, 3), randn(6, 2)], 0),
    ("huber_where", huber_loss, lambda: [np.array([0.3, -2.5, 1.7, 0.1, -0.6]), np.zeros(5)], 0),
    ("hinge_svm", hinge_svm, lambda: [np.array([0.5, -0.3, 0.2]), X20, 2 * Y20 - 1], 0),
    ("layer_norm", layer_norm, lambda: [randn(4, 6), randn(6), randn(6)], (0, 1, 2)),
    ("attention", attention, lambda: [randn(3, 4), randn(5, 4), randn(5, 2)], (0, 1, 2)),
    ("cosine_sim", cosine_sim_loss, lambda: [randn(6), randn(6)], (0, 1)),
    ("mixture_nll", mixture_nll, lambda: [np.array([-1.0, 0.5, 2.0]), randn(3) * 0.2, randn(3), randn(12)], (0, 1, 2)),
    ("rnn_loop_append", rnn_loss, lambda: [randn(4, 4) * 0.4, randn(3, 4) * 0.4, randn(4) * 0.1, randn(6, 3), np.zeros(4)], (0, 1, 2)),
    ("lstm_loop", lstm_loss, lambda: [randn(3, 12) * 0.4, randn(3, 12) * 0.4, randn(12) * 0.1, list(randn(5, 3))], (0, 1, 2)),
    ("gaussian_slogdet_solve", gaussian_logpdf, lambda: [randn(4), randn(4), randn(4, 4) * 0.5], (0, 1, 2)),
    ("gaussian_inv_det_einsum", gaussian_logpdf_inv, lambda: [randn(7, 3), randn(3), spd(3)], (0, 1, 2)),
    ("gp_cholesky", gp_nll, lambda: [0.8, 1.3, 0.1, np.linspace(0, 3, 8), np.sin(np.linspace(0, 3, 8))], (0, 1, 2)),
    ("gp_2d_slogdet_inv", gp_nll_2d, lambda: [np.array([0.1, -0.2]), randn(6, 2), randn(6)], 0),
    ("kl_gauss", kl_gauss, lambda: [randn(5), randn(5) * 0.3], (0, 1)),
    ("spring_mass_euler", spring_mass_energy, lambda: [2.0, randn(3), randn(3)], (0, 1, 2)),
    ("spring_chain_inplace", spring_chain_inplace, lambda: [randn(5), 1.5], (0, 1)),
    ("pendulum_math_sin", pendulum, lambda: [0.6, 1.2], (0, 1)),
    ("rk4_helper", rk4_oscillator, lambda: [np.array([1.0, 0.0]), 2.0], (0, 1)),
    ("projectile_while_true_break", projectile_range, lambda: [10.0, 0.7], (0, 1)),
    ("newton_sqrt_while", newton_sqrt, lambda: [2.5], 0),
    ("fixed_point_break", fixed_point_cos, lambda: [0.7], 0),
    ("gd_inner_loop", gradient_descent_inner, lambda: [randn(3), X20, randn(20)], (0, 2)),
    ("power_iteration", power_iteration, lambda: [spd(4) + np.diag([10.0, 0, 0, 0])], 0),
    ("piecewise_elif_a", piecewise, lambda: [-0.7], 0),
    ("piecewise_elif_b", piecewise, lambda: [0.4], 0),
    ("piecewise_elif_c", piecewise, lambda: [1.5], 0),
    ("piecewise_elif_d", piecewise, lambda: [3.5], 0),
    ("for_over_array_if", smooth_abs_sum, lambda: [np.array([0.5, -1.2, 2.0, -0.3])], 0),
    ("python_floats_math", python_float_stats, lambda: [1.2, -0.7, 0.4], (0, 1, 2)),
    ("recursion_horner", recursive_poly, lambda: [0.7], 0),
    ("recursion_factorial", factorial_like, lambda: [1.3, 4], 0),
    ("recursion_array_split", tree_sum, lambda: [randn(6)], 0),
    ("early_return_in_loop", early_return, lambda: [np.array([0.5, 1.0, 1.5, 2.0]), 3.0], 0),
    ("range_steps", strided_sum, lambda: [randn(10)], 0),
    ("zip_lists_of_arrays", zip_layers, lambda: [[randn(3, 3), randn(3, 3)], [randn(3), randn(3)], randn(3)], (0, 1, 2)),
    ("fill_zeros_like_loop", fill_loop, lambda: [randn(6)], 0),
    ("mask_assign_copy", mask_zero, lambda: [np.array([0.5, -1.0, 2.0, -0.3, 0.8])], 0),
    ("mask_assign_rebound", mask_zero_direct, lambda: [np.array([0.5, -1.0, 2.0, -0.3, 0.8])], 0),
    ("augassign_arrays", accumulate_inplace, lambda: [randn(4), randn(4)], (0, 1)),
    ("row_normalize_inplace_div", row_normalize, lambda: [randn(4, 3)], 0),
    ("total_variation", total_variation, lambda: [randn(5, 6)], 0),
    ("conv1d_slices", conv1d, lambda: [randn(10), randn(3)], (0, 1)),
    ("methods_T_reshape_sum_mean", methods_mix, lambda: [randn(4, 3)], 0),
    ("einsum_bilinear", einsum_bilinear, lambda: [randn(3, 4), randn(3), randn(4)], (0, 1, 2)),
    ("tensordot", tensordot_contract, lambda: [randn(2, 3, 4), randn(3, 4, 2)], (0, 1)),
    ("outer_cumsum_clip", outer_cumsum, lambda: [randn(3) * 0.3, randn(4) * 0.3], (0, 1)),
    ("sort_topk", topk_sum, lambda: [np.array([0.3, -1.2, 2.2, 0.9, -0.1, 1.4, -2.0])], 0),
    ("concat_stack_vstack", concat_stack, lambda: [randn(3), randn(3)], (0, 1)),
    ("helper_tuple_unpack_swap", swap_and_tuple, lambda: [randn(4), randn(4)], (0, 1)),
    ("closure_factory", closure_loss, lambda: [randn(3)], 0),
    ("nested_defs_closure_over_param", nested_defs, lambda: [randn(2, 3), randn(3)], (0, 1)),
    ("inner_lambda", inner_lambda, lambda: [randn(4), 0.7], (0, 1)),
    ("module_lambda_logaddexp", softplus_sum, lambda: [randn(5)], 0),
    ("list_of_np_functions", apply_fns, lambda: [randn(4)], 0),
    ("kwargs_defaults_callee", kw_caller, lambda: [np.array([0.5, -1.0, 2.0])], 0),
    ("l2_loop_over_dict_keys", l2_over_dict, lambda: [{"w": randn(3), "b": 0.3}, X20, randn(20)], 0),
    ("l2_loop_over_dict_values", l2_over_dict_values, lambda: [{"w": randn(3), "b": 0.3}, X20, randn(20)], 0),
    ("l2_loop_over_dict_items", l2_over_dict_items, lambda: [{"w": randn(3), "b": 0.3}, X20, randn(20)], 0),
    ("tuple_params_unpack", tuple_params, lambda: [(randn(3, 3), randn(3)), randn(3)], 0),
    ("docstring_annotations_assert", annotated, lambda: [randn(5), 2.0], (0, 1)),
    ("print_fstring_debug", with_print, lambda: [randn(3), X20, randn(20)], 0),
    ("config_dict_literal", config_dict_literal, lambda: [randn(3), X20, randn(20)], 0),
    ("embedding_repeated_indices", embedding_lookup, lambda: [randn(5, 3), np.array([1, 3, 1, 4, 1]), randn(3)], 0),
    ("leaky_relu_where_max", leaky_relu_net, lambda: [randn(4, 3), randn(3)], 0),
    ("for_rows_of_matrix", rows_loop, lambda: [randn(5, 3), randn(3)], (0, 1)),
    ("while_index_loop", while_index_loop, lambda: [randn(5)], 0),
    ("gd_while_tolerance", gd_while_tolerance, lambda: [1.5, 0.3], (0, 1)),
    ("conv2d_nested_loops", conv2d_valid, lambda: [randn(6, 6), randn(3, 3) * 0.3], (0, 1)),
    ("batch_norm", batch_norm, lambda: [randn(8, 3), randn(3), randn(3)], (0, 1, 2)),
    ("kernel_ridge_solve_float", kernel_ridge, lambda: [0.3, randn(6, 2), randn(6)], (0, 1)),
    ("poisson_regression", poisson_regression, lambda: [randn(3) * 0.3, X20, rng.poisson(2.0, 20).astype(float)], 0),
    ("logistic_map", logistic_map, lambda: [2.8, 0.3], (0, 1)),
    ("list_append_builtin_sum", list_sum_builtin, lambda: [[randn(3), randn(2, 2), randn(4)]], 0),
    ("list_of_floats_np_array", list_of_floats_to_array, lambda: [0.4, -1.1], (0, 1)),
    ("eigh_top", eigh_top, lambda: [randn(4, 4)], 0),
    ("alias_inplace", alias_update, lambda: [randn(4)], 0),
    ("numpy_scalar_arg", numpy_scalar_input, lambda: [randn(4), np.float64(0.8)], (0, 1)),
    ("norm_axis_fro_prod", prod_norms, lambda: [randn(3, 4), randn(4)], (0, 1)),
    ("item_and_float", item_and_float, lambda: [np.array([0.3, -1.7, 0.9])], 0),
    ("reversed_range_returns", cumulative_discounted, lambda: [randn(8), 0.9], (0, 1)),
    ("enumerate_zip_tuple_target", enumerate_zip_nested, lambda: [list(randn(4, 3)), [0.1, 0.2, -0.3, 0.4], randn(3)], (0, 1, 2)),
    ("bound_method", MODEL.loss, lambda: [np.array([0.3, -0.2]), np.array([1.0, 0.0])], 0),
    ("local_import", local_import, lambda: [randn(5)], 0),
    ("newton_per_element_break", cube_roots_newton, lambda: [np.array([2.0, 5.0, 0.5])], 0),
    ("while_inside_for", halve_until_small, lambda: [1.3], 0),
    ("nested_for_inner_break", first_large_per_row, lambda: [np.array([[0.5, 0.6, 0.3], [0.1, 2.0, 0.3]])], 0),
    ("nested_for_inner_break_crash", first_large_per_row, lambda: [np.array([[0.5, 2.0, 0.3], [0.1, 0.2, 0.3]])], 0),
    ("nested_for_inner_continue", skip_negative_2d, lambda: [randn(3, 3)], 0),
    ("ndarray_sort_inplace", sorted_inplace, lambda: [np.array([0.3, -1.2, 2.2, 0.9])], 0),
    ("fancy_index_iadd_duplicates", scatter_iadd, lambda: [randn(4), randn(4)], (0, 1)),
    ("ufunc_out_kwarg", exp_out_kwarg, lambda: [randn(3)], 0),
    ("np_fill_diagonal", fill_diagonal_cov, lambda: [randn(3, 3)], 0),
    ("recurrence_inplace", recurrence_inplace, lambda: [randn(5), 0.7], (0, 1)),
    ("naive_matmul_triple_loop", naive_matmul, lambda: [randn(3, 3)], 0),
    ("take_along_axis_ce", take_along_ce, lambda: [randn(5, 3), np.array([0, 2, 1, 1, 0])], 0),
    ("svd_qr_pinv", svd_qr_pinv, lambda: [randn(4, 3)], 0),
    ("varargs_callee", calls_varargs, lambda: [randn(3), randn(3)], (0, 1)),
    ("kwargs_into_numpy", sums_with_options, lambda: [randn(2, 3)], 0),
    ("functools_partial", partial_loss, lambda: [randn(3)], 0),
    ("jacobi_full_slice_update", jacobi_energy, lambda: [randn(5), _spd(5)], (0, 1)),
    ("wave_leapfrog_views_and_swap", wave_leapfrog,
     lambda: [0.9, np.sin(np.linspace(0.0, np.pi, 12))], (0, 1)),
    ("heat_ghost_cells_helper_in_place", heat_with_ghost_cells,
     lambda: [0.8, np.sin(np.linspace(0.0, np.pi, 10))], (0, 1)),
    ("logsumexp_return_in_errstate", softmax_nll,
     lambda: [randn(4, 3), randn(6, 4), np.array([0, 1, 2, 0, 1, 2])], 0),
    ("fixed_point_closure_factory", fixed_point_sqrt, lambda: [2.0], 0),
    ("fixed_point_newton_closure_factory", fixed_point_newton_sqrt, lambda: [2.0], 0),
]


@pytest.mark.parametrize("name,f,make_args,wrt", CASES, ids=[c[0] for c in CASES])
def test_user_program(name, f, make_args, wrt):
    args = make_args()
    f(*copy.deepcopy(args))            # primal runs
    check_grad(f, args, wrt)


# ---------------------------------------------------------------------------
# float32, has_aux, value_and_grad, vjp
# ---------------------------------------------------------------------------

def test_float32_mlp_matches_float64():
    W1, W2, X = randn(4, 8) * 0.5, randn(8, 2) * 0.5, randn(10, 4)
    g32 = checked_grad(mlp32, wrt=(0, 1))(W1.astype(np.float32), W2.astype(np.float32),
                                          X.astype(np.float32))
    g64 = check_grad(mlp32, [W1, W2, X], (0, 1))
    for a, b in zip(g32, g64):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


def test_float32_layer_norm_matches_float64():
    x, g, b = randn(3, 5), randn(5), randn(5)
    g32 = checked_grad(layer_norm, wrt=(0, 1))(x.astype(np.float32), g.astype(np.float32),
                                               b.astype(np.float32))
    g64 = checked_grad(layer_norm, wrt=(0, 1))(x, g, b)
    for a, b_ in zip(g32, g64):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b_, rtol=2e-3, atol=1e-3)


def loss_with_aux(w, X, y):
    pred = X @ w
    err = pred - y
    loss = np.mean(err ** 2)
    return loss, {"pred": pred, "mae": np.mean(np.abs(err))}


def test_has_aux_grad_and_value_and_grad():
    w, X, y = randn(3), X20, randn(20)
    g, aux = checked_grad(loss_with_aux, has_aux=True)(w, X, y)
    np.testing.assert_allclose(aux["pred"], X @ w)
    check_grad(loss_with_aux, [w, X, y], 0, has_aux=True)
    (val, aux2), g2 = checked_value_and_grad(loss_with_aux, has_aux=True)(w, X, y)
    np.testing.assert_allclose(val, loss_with_aux(w, X, y)[0])
    np.testing.assert_allclose(g2, g)
    assert aux2["mae"] == pytest.approx(aux["mae"])


def test_value_and_grad_tuple_wrt():
    args = [params_mlp(), randn(8, 4), randn(8)]
    val, g = checked_value_and_grad(mlp_loss, wrt=0)(*args)
    assert val == pytest.approx(mlp_loss(*args))
    g2 = checked_grad(mlp_loss)(*args)
    for k in g:
        np.testing.assert_allclose(g[k], g2[k])
    val, (gw, gb) = checked_value_and_grad(logistic_loss, wrt=("w", "b"))(
        randn(3), 0.1, X20, Y20)
    assert isinstance(gb, float) and gw.shape == (3,)


def normalize_vec(x):
    return x / np.sqrt(np.sum(x ** 2))


def rollout(theta, x0):
    xs = [x0]
    x = x0
    for t in range(5):
        x = np.tanh(theta @ x)
        xs.append(x)
    return np.stack(xs)


def jacobian_fd(f, args, i, h=1e-6):
    x = args[i]
    out0 = f(*args)
    J = np.zeros(out0.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        ap, am = list(args), list(args)
        ap[i], am[i] = x + e, x - e
        J[(...,) + idx] = (f(*ap) - f(*am)) / (2 * h)
    return J


@pytest.mark.parametrize("f,make_args,wrt", [
    (normalize_vec, lambda: [randn(4)], 0),
    (rollout, lambda: [randn(3, 3) * 0.6, randn(3)], 0),
    (rollout, lambda: [randn(3, 3) * 0.6, randn(3)], 1),
])
def test_vjp_vector_output(f, make_args, wrt):
    args = make_args()
    out = f(*args)
    seed = np.random.default_rng(1).standard_normal(out.shape)
    g = ad.vjp(f, wrt=wrt)(*args, seed)
    J = jacobian_fd(f, args, wrt)
    expected = np.tensordot(seed, J, axes=out.ndim)
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-7)
    check_vjp(f, args, seed, wrt)


# ---------------------------------------------------------------------------
# Error cases: each must be an S2SADError naming the file, the line and the
# construct, with a hint saying what to do.
# ---------------------------------------------------------------------------

def err_try_in_helper(x):
    try:
        return np.log(x)
    finally:
        print("logged")


def err_calls_helper_with_try(x):
    return np.sum(err_try_in_helper(x) ** 2)


def with_errstate(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return np.sum(y)


def generator_sum(xs):
    return sum(x ** 2 for x in xs)


def list_comprehension(x):
    parts = [np.sin(x * k) for k in range(3)]
    return np.sum(np.stack(parts))


def dict_comprehension(params):
    sq = {k: np.sum(v ** 2) for k, v in params.items()}
    return sq["a"] + sq["b"]


@pytest.mark.parametrize("f,args", [
    (generator_sum, [[1.0, 2.0]]),
    (list_comprehension, [randn(3)]),
    (dict_comprehension, [{"a": randn(2), "b": randn(2)}]),
    (with_errstate, [np.abs(randn(3)) + 0.5]),
], ids=["generator_sum", "list_comprehension", "dict_comprehension", "with_errstate"])
def test_constructs_once_refused_are_differentiated(f, args):
    check_grad(f, args)


_ns = {"np": np}
exec("def exec_made(x):\n    return np.sum(x * x)\n", _ns)
exec_made = _ns["exec_made"]


def err_calls_exec_made(x):
    return exec_made(x) + 1.0


def err_nonlocal(x):
    total = 0.0

    def add(v):
        nonlocal total
        total += v
    add(np.sum(x))
    return total


def err_del(x):
    parts = {"y": x * 2, "z": x}
    del parts["y"]
    return np.sum(parts["z"])




class Model:
    def __init__(self):
        self.w = np.ones(3)


def err_attr_assign(x):
    m = Model()
    m.w[0] = x
    return np.sum(m.w)


def err_no_rule_unknown_numpy(x):
    return np.sum(np.polyfit(x, x * x, 1))


def line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


ERROR_CASES = [
    # (id, callable that triggers the error, expected class, function holding the line, anchor text, construct words)
    ("try_in_callee", lambda: ad.grad(err_calls_helper_with_try)(np.ones(3)),
     ad.UnsupportedSyntaxError, err_try_in_helper, "return np.log(x)", "try"),
    ("exec_made_callee", lambda: ad.grad(err_calls_exec_made)(np.ones(3)),
     ad.S2SADError, err_calls_exec_made, "return exec_made(x)", "exec_made"),
    ("nonlocal", lambda: ad.grad(err_nonlocal)(np.ones(3)),
     ad.UnsupportedSyntaxError, err_nonlocal, "nonlocal total", "nonlocal"),
    ("del", lambda: ad.grad(err_del)(np.ones(3)),
     ad.UnsupportedSyntaxError, err_del, 'del parts["y"]', "del"),
    ("attr_assign", lambda: ad.grad(err_attr_assign)(1.0),
     ad.S2SADError, err_attr_assign, "m.w[0] = x", "attribute"),
    ("no_rule_polyfit", lambda: ad.grad(err_no_rule_unknown_numpy)(np.arange(3.0)),
     ad.NoRuleError, err_no_rule_unknown_numpy, "np.polyfit", "polyfit"),
    ("wrong_wrt_name", lambda: ad.grad(logistic_loss, wrt="weights")(randn(3), 0.0, X20, Y20),
     ad.WrtError, logistic_loss, "def logistic_loss", "weights"),
    ("wrt_int_arg", lambda: ad.grad(factorial_like, wrt=1)(1.3, 4),
     ad.InputTypeError, None, None, "int"),
]


@pytest.mark.parametrize("name,trigger,cls,where,anchor,words", ERROR_CASES,
                         ids=[c[0] for c in ERROR_CASES])
def test_user_errors(name, trigger, cls, where, anchor, words):
    with pytest.raises(ad.S2SADError) as info:
        trigger()
    err = info.value
    text = str(err)
    assert isinstance(err, cls), f"expected {cls.__name__}, got {type(err).__name__}: {text}"
    assert words.lower() in text.lower(), f"construct {words!r} not named in: {text}"
    assert err.hint, f"no hint saying what to do: {text}"
    if where is not None:
        assert err.location is not None, f"no location: {text}"
        assert err.location.filename == HERE, f"wrong file {err.location.filename}: {text}"
        assert err.location.line == line_of(where, anchor), \
            f"wrong line {err.location.line}, expected {line_of(where, anchor)}: {text}"


def test_library_callee_errors_point_at_the_call_site():
    """A library function s2s_ad cannot differentiate: the error names it and
    points at the user's line, not into site-packages."""
    special = pytest.importorskip("scipy.special")

    def lse(x):
        return special.logsumexp(x) * 2.0
    with pytest.raises(ad.S2SADError) as info:
        ad.grad(lse)
    assert info.value.location.filename == __file__
    assert "logsumexp" in str(info.value) and "stop_gradient" in info.value.hint
