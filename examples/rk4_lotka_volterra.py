"""Fitting an ODE's parameters through an RK4 integrator whose vector field is an argument.

The Lotka-Volterra predator-prey model (SciPy's `solve_ivp` example),

    dx/dt = a x - b x y,        dy/dt = -c y + d x y,

is integrated by a textbook fourth-order Runge-Kutta stepper written once, for
any vector field `f(t, z, theta)`: `rk4_step(f, t, z, dt, theta)`.  The field
reaches the stepper as a value, and s2s_ad differentiates through the call
`f(...)` inside it (it compiles one adjoint of `lotka_volterra` and calls it at
run time).  The loss compares the trajectory with noisy observations; its
gradient with respect to the field's parameters `theta` drives plain gradient
descent (Adam) from a wrong guess back to the parameters that made the data.

    python examples/rk4_lotka_volterra.py
    s2s-ad dump examples/rk4_lotka_volterra.py:loss
"""
import numpy as np

import s2s_ad as ad

TRUE_THETA = np.array([1.5, 1.0, 3.0, 1.0])     # a, b, c, d
Z0 = np.array([10.0, 5.0])
DT, STEPS = 0.02, 150


def lotka_volterra(t, z, theta):
    x, y = z[0], z[1]
    return np.array([theta[0] * x - theta[1] * x * y,
                     -theta[2] * y + theta[3] * x * y])


def rk4_step(f, t, z, dt, theta):
    k1 = f(t, z, theta)
    k2 = f(t + dt / 2, z + dt / 2 * k1, theta)
    k3 = f(t + dt / 2, z + dt / 2 * k2, theta)
    k4 = f(t + dt, z + dt * k3, theta)
    return z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def trajectory(f, z0, theta, dt, steps):
    zs = [z0]
    t = 0.0
    for _ in range(steps):
        zs.append(rk4_step(f, t, zs[-1], dt, theta))
        t = t + dt
    return np.stack(zs)


def loss(theta, observed):
    predicted = trajectory(lotka_volterra, Z0, theta, DT, STEPS)
    return np.mean((np.log(predicted) - np.log(observed)) ** 2)


def fit(theta, observed, iterations=300, lr=0.05):
    """Adam on the loss, with s2s_ad's gradient."""
    value_and_grad = ad.value_and_grad(loss)
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    for i in range(1, iterations + 1):
        value, g = value_and_grad(theta, observed)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        theta = theta - lr * (m / (1 - 0.9 ** i)) / (np.sqrt(v / (1 - 0.999 ** i)) + 1e-8)
        if i == 1 or i % 100 == 0:
            print(f"  step {i:4d}: loss {value:.6f}  theta {np.round(theta, 3)}")
    return theta


def main():
    rng = np.random.default_rng(0)
    observed = trajectory(lotka_volterra, Z0, TRUE_THETA, DT, STEPS)
    observed = observed * np.exp(0.01 * rng.standard_normal(observed.shape))
    guess = TRUE_THETA * np.array([0.8, 1.2, 0.85, 1.1])

    ad.check_grads(loss, (guess, observed))
    print("OK: the gradient through rk4_step(f, ...) matches finite differences")

    theta = fit(guess, observed)
    error = np.max(np.abs(theta - TRUE_THETA) / TRUE_THETA)
    print(f"fitted theta {np.round(theta, 3)}, true {TRUE_THETA}, "
          f"largest relative error {error:.1%}")
    assert error < 0.05, error
    print("OK: gradient descent recovers the vector field's parameters")


if __name__ == "__main__":
    main()
