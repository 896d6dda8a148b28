"""EM for a 1-D Gaussian mixture, with the M-step objective differentiated by s2s_ad.

The E-step's responsibilities r are *targets* for the M-step, not functions of
the parameters being optimized: Q(theta) = sum r * log(pi_k N(x | mu_k, sigma_k))
wraps r in `stop_gradient`, so s2s_ad emits no adjoint code for the E-step.
With r held fixed, grad Q at the current theta equals the gradient of the
marginal log-likelihood (Fisher's identity); without `stop_gradient` it does not.
The EM update itself is then read off grad Q in closed form.

    python examples/em.py
    s2s-ad dump examples/em.py:expected_loglik --wrt logits,mu,log_sigma
"""
import math

import numpy as np

import s2s_ad as ad

LOG_2PI = math.log(2.0 * math.pi)
PARAMS = ("logits", "mu", "log_sigma")


def posterior(logits, mu, log_sigma, x):
    """E-step: responsibilities r[n, k] = p(z_n = k | x_n) under the current parameters."""
    sigma = np.exp(log_sigma)
    log_joint = (logits - np.log(np.sum(np.exp(logits)))
                 - 0.5 * LOG_2PI - log_sigma - 0.5 * ((x[:, None] - mu) / sigma) ** 2)
    log_joint -= log_joint.max(axis=1, keepdims=True)
    r = np.exp(log_joint)
    return r / r.sum(axis=1, keepdims=True)


def expected_loglik(logits, mu, log_sigma, x):
    """M-step objective Q: the E-step output r is a constant for differentiation."""
    r = ad.stop_gradient(posterior(logits, mu, log_sigma, x))
    log_pi = logits - np.log(np.sum(np.exp(logits)))
    z = (x[:, None] - mu) / np.exp(log_sigma)
    log_joint = log_pi - 0.5 * LOG_2PI - log_sigma - 0.5 * z ** 2
    return np.sum(r * log_joint)


def expected_loglik_no_stop(logits, mu, log_sigma, x):
    """The same Q, but r is recomputed differentiably: the gradient now flows into r."""
    log_pi = logits - np.log(np.sum(np.exp(logits)))
    z = (x[:, None] - mu) / np.exp(log_sigma)
    log_joint = log_pi - 0.5 * LOG_2PI - log_sigma - 0.5 * z ** 2
    joint = np.exp(log_joint)
    r = joint / np.sum(joint, axis=1, keepdims=True)
    return np.sum(r * log_joint)


def loglik(logits, mu, log_sigma, x):
    """Marginal log-likelihood sum_n log sum_k pi_k N(x_n | mu_k, sigma_k)."""
    log_pi = logits - np.log(np.sum(np.exp(logits)))
    z = (x[:, None] - mu) / np.exp(log_sigma)
    log_joint = log_pi - 0.5 * LOG_2PI - log_sigma - 0.5 * z ** 2
    return np.sum(np.log(np.sum(np.exp(log_joint), axis=1)))


grad_q = ad.grad(expected_loglik, wrt=PARAMS)
grad_q_no_stop = ad.grad(expected_loglik_no_stop, wrt=PARAMS)
value_and_grad_loglik = ad.value_and_grad(loglik, wrt=PARAMS)


def em_step(logits, mu, log_sigma, x):
    """One exact EM step, computed from grad Q alone.

    With counts N_k = sum_n r_nk and weighted scatter S_k = sum_n r_nk (x_n - mu_k)^2:
      dQ/dlogits_k   = N_k - N pi_k
      dQ/dmu_k       = (sum_n r_nk x_n - N_k mu_k) / sigma_k^2
      dQ/dlog_sigma_k = S_k / sigma_k^2 - N_k
    so the closed-form maximizer of Q is an explicit function of the gradient.
    """
    g_logits, g_mu, g_log_sigma = grad_q(logits, mu, log_sigma, x)
    pi = np.exp(logits) / np.sum(np.exp(logits))
    var = np.exp(2.0 * log_sigma)
    counts = len(x) * pi + g_logits                      # N_k
    new_mu = mu + var * g_mu / counts                    # weighted mean
    scatter = var * (g_log_sigma + counts)               # S_k around the old mu
    new_var = scatter / counts - (new_mu - mu) ** 2      # ... around the new mu
    return np.log(counts / len(x)), new_mu, 0.5 * np.log(new_var)


def textbook_em_step(logits, mu, log_sigma, x):
    """The usual closed-form M-step, for comparison."""
    r = posterior(logits, mu, log_sigma, x)
    counts = r.sum(axis=0)
    new_mu = (r * x[:, None]).sum(axis=0) / counts
    new_var = (r * (x[:, None] - new_mu) ** 2).sum(axis=0) / counts
    return np.log(counts / len(x)), new_mu, 0.5 * np.log(new_var)


def make_data(rng):
    return np.concatenate([rng.normal(-4.0, 1.0, 150),
                           rng.normal(0.5, 0.6, 100),
                           rng.normal(4.0, 1.5, 250)])


def fmt(v):
    return np.array2string(np.asarray(v), precision=4, suppress_small=True)


def main():
    rng = np.random.default_rng(0)
    x = make_data(rng)
    theta = (np.zeros(3), np.array([-1.0, 0.0, 1.0]), np.zeros(3))

    print("Fisher's identity at the initial parameters:")
    _, g_ll = value_and_grad_loglik(*theta, x)
    g_q = grad_q(*theta, x)
    g_bad = grad_q_no_stop(*theta, x)
    for name, a, b, c in zip(PARAMS, g_ll, g_q, g_bad):
        print(f"  d/d{name:<9} log p(x)           : {fmt(a)}")
        print(f"  d/d{name:<9} Q, stop_gradient(r): {fmt(b)}")
        print(f"  d/d{name:<9} Q, r differentiated: {fmt(c)}")
    fisher_err = max(np.max(np.abs(a - b)) for a, b in zip(g_ll, g_q))
    no_stop_err = max(np.max(np.abs(a - c)) for a, c in zip(g_ll, g_bad))
    print(f"  max |grad log p(x) - grad Q|: with stop_gradient {fisher_err:.2e}, "
          f"without {no_stop_err:.2e}")
    assert fisher_err < 1e-8 and no_stop_err > 1.0
    print("OK: Fisher's identity holds with stop_gradient and fails without it")
    print()

    print("EM, the M-step read off grad Q:")
    history = []
    for it in range(15):
        ll = loglik(*theta, x)
        history.append(ll)
        if it % 2 == 0:
            print(f"  iter {it:2d}  log p(x) = {ll:10.4f}")
        new_theta = em_step(*theta, x)
        reference = textbook_em_step(*theta, x)
        assert all(np.allclose(a, b) for a, b in zip(new_theta, reference))
        theta = new_theta
    pi = np.exp(theta[0]) / np.sum(np.exp(theta[0]))
    print(f"  fitted pi    = {fmt(pi)}   (true [0.3 0.2 0.5])")
    print(f"  fitted mu    = {fmt(theta[1])}   (true [-4.  0.5  4. ])")
    print(f"  fitted sigma = {fmt(np.exp(theta[2]))}   (true [1.  0.6  1.5])")
    assert np.all(np.diff(history) > -1e-9) and history[-1] > history[0] + 100.0
    print("OK: every gradient-derived M-step equals the textbook M-step, "
          "and the log-likelihood never decreases")


if __name__ == "__main__":
    main()
