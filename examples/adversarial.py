"""Adversarial training of logistic regression with FGSM examples.

The attack x_adv = x + eps * sign(grad_x loss) is itself computed with a derived
gradient (`ad.grad(..., wrt="x")`).  Training minimizes the loss at x_adv, and
x_adv is wrapped in `stop_gradient`: the attack is a constant for the weight
update, so s2s_ad generates no adjoint code for it (no second-order terms, and
np.sign has no useful derivative anyway).  By Danskin's theorem that gradient is
the gradient of the worst-case loss, which for a linear model has a closed form.

    python examples/adversarial.py
    s2s-ad dump examples/adversarial.py:adversarial_loss --wrt w,b
"""
import numpy as np

import s2s_ad as ad

EPS = 0.6                      # L-infinity budget of the attacker


def logistic_loss(w, b, x, y):
    """Mean logistic loss for labels y in {-1, +1}."""
    margin = y * (x @ w + b)
    return np.mean(np.logaddexp(0.0, -margin))


loss_grad_x = ad.grad(logistic_loss, wrt="x")
loss_grad_wb = ad.grad(logistic_loss, wrt=("w", "b"))


def fgsm(w, b, x, y, eps):
    """Fast gradient sign method: one signed step up the loss, per input."""
    return x + eps * np.sign(loss_grad_x(w, b, x, y))


def adversarial_loss(w, b, x, y, eps):
    """Logistic loss on FGSM examples; the attack itself is not differentiated."""
    x_adv = ad.stop_gradient(fgsm(w, b, x, y, eps))
    margin = y * (x_adv @ w + b)
    return np.mean(np.logaddexp(0.0, -margin))


adversarial_grad = ad.grad(adversarial_loss, wrt=("w", "b"))


def worst_case_loss(w, b, x, y, eps):
    """max over |delta|_inf <= eps of the loss: the margin shrinks by eps * |w|_1."""
    margin = y * (x @ w + b) - eps * np.sum(np.abs(w))
    return np.mean(np.logaddexp(0.0, -margin))


worst_case_grad = ad.grad(worst_case_loss, wrt=("w", "b"))


def make_data(rng, n, dim=20):
    """Feature 0 is strongly predictive (mean +-2); the other 19 only weakly (+-0.4)."""
    y = rng.choice([-1.0, 1.0], n)
    x = rng.standard_normal((n, dim))
    x[:, 0] += 2.0 * y
    x[:, 1:] += 0.4 * y[:, None]
    return x, y


def train(grad_fn, w, b, *data, steps=300, lr=0.5):
    """Plain gradient descent on (w, b); `data` are grad_fn's remaining arguments."""
    for _ in range(steps):
        gw, gb = grad_fn(w, b, *data)
        w, b = w - lr * gw, b - lr * gb
    return w, b


def accuracy(w, b, x, y):
    return np.mean(np.sign(x @ w + b) == y)


def report(label, w, b, x, y):
    clean = accuracy(w, b, x, y)
    adv = accuracy(w, b, fgsm(w, b, x, y, EPS), y)
    print(f"  {label:<20} clean {clean:6.1%}   adversarial {adv:6.1%}   "
          f"|w_0| = {abs(w[0]):.2f}, mean |w_1..| = {np.mean(np.abs(w[1:])):.2f}")
    return clean, adv


def main():
    rng = np.random.default_rng(0)
    x, y = make_data(rng, 400)
    x_test, y_test = make_data(rng, 2000)
    w, b = np.zeros(x.shape[1]), 0.0

    print(f"test accuracy (FGSM with eps = {EPS}):")
    w, b = train(loss_grad_wb, w, b, x, y)
    clean0, adv0 = report("standard training", w, b, x_test, y_test)

    # The derived gradient treats x_adv as data, and equals the worst-case gradient.
    x_adv = fgsm(w, b, x, y, EPS)
    g_adv = adversarial_grad(w, b, x, y, EPS)
    g_data = loss_grad_wb(w, b, x_adv, y)
    g_worst = worst_case_grad(w, b, x, y, EPS)
    err_data = max(np.max(np.abs(p - q)) for p, q in zip(g_adv, g_data))
    err_worst = max(np.max(np.abs(p - q)) for p, q in zip(g_adv, g_worst))
    print(f"  gradient vs. loss at fixed x_adv: {err_data:.1e}, "
          f"vs. closed-form worst case: {err_worst:.1e}")
    assert err_data < 1e-12 and err_worst < 1e-10

    w, b = train(adversarial_grad, w, b, x, y, EPS)
    clean1, adv1 = report("adversarial training", w, b, x_test, y_test)
    assert adv1 > adv0 + 0.15 and clean1 > 0.95
    print(f"OK: adversarial accuracy {adv0:.1%} -> {adv1:.1%} "
          f"(clean {clean0:.1%} -> {clean1:.1%}): the model now relies on the robust feature")


if __name__ == "__main__":
    main()
