"""The examples: each runs, tells its story, and its gradients are right.

Every examples/*.py but those with a test file of their own (OWN_TEST) is
run as a script and must exit 0 (and print its key lines, for the examples
listed in EXPECTED).  Each stop_gradient example is also imported: one of its
gradients is checked against finite differences, and the generated source is
checked structurally: the reverse sweep holds no adjoint of the stopped value
and no call to what computed it.
"""
import ast
import importlib.util
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_value, checked_grad

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"

EXPECTED = {
    "stable_softmax": ["OK: gradient = softmax(x) - t", "def dstable_softmax(x, t):"],
    "em": ["OK: Fisher's identity holds with stop_gradient and fails without it",
           "OK: every gradient-derived M-step equals the textbook M-step"],
    "contrastive_divergence": ["OK: the s2s_ad gradient equals the textbook CD update",
                               "reconstruction error:"],
    "adversarial": ["OK: adversarial accuracy", "adversarial training"],
    "rk4_lotka_volterra": ["OK: the gradient through rk4_step(f, ...) matches finite differences",
                           "OK: gradient descent recovers the vector field's parameters"],
}


def load(name):
    """Import examples/<name>.py as a module (examples/ is not a package)."""
    modname = f"s2s_ad_example_{name}"
    if modname in sys.modules:
        return sys.modules[modname]
    spec = importlib.util.spec_from_file_location(modname, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return module


# Examples with a test of their own: the Dask one needs dask and distributed,
# and its defaults train on 2e7 samples (tests/test_dask_example.py runs --quick).
OWN_TEST = {"dask_logistic_regression"}


@pytest.mark.parametrize("path", sorted(p for p in EXAMPLES.glob("*.py")
                                        if p.stem not in OWN_TEST), ids=lambda p: p.stem)
def test_example_runs(path):
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=60, cwd=EXAMPLES.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for line in EXPECTED.get(path.stem, []):
        assert line in proc.stdout, f"{line!r} missing from the output:\n{proc.stdout}"


def test_every_expected_example_exists():
    assert all((EXAMPLES / f"{name}.py").exists() for name in EXPECTED)


# -- structure of the generated code ----------------------------------------

def _stopped(tree):
    """Names assigned from stop_gradient(...) and the callees inside the call."""
    targets, callees = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_stop(node.value):
            targets |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            callees |= {ast.unparse(c.func) for c in ast.walk(node.value.args[0])
                        if isinstance(c, ast.Call)}
    return targets, callees


def _is_stop(node):
    return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("stop_gradient")


def _reverse_sweep(text):
    """The code after the first `# grad of:` comment, without comment lines."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("# grad of:"))
    body = "\n".join(line for line in lines[start:] if not line.strip().startswith("#"))
    return textwrap.dedent(body)


def _identifiers(code):
    return {node.id for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Name)}


STRUCTURE = [
    ("stable_softmax", "stable_softmax", 0, {"np.max"}),
    ("em", "expected_loglik", ("logits", "mu", "log_sigma"), {"posterior"}),
    ("contrastive_divergence", "cd_loss", ("W", "b", "c"), {"gibbs_chain"}),
    ("adversarial", "adversarial_loss", ("w", "b"), {"fgsm"}),
]


@pytest.mark.parametrize("name, func, wrt, callees", STRUCTURE, ids=[s[0] for s in STRUCTURE])
def test_no_adjoint_for_stopped_value(name, func, wrt, callees):
    text = ad.source(ad.grad(getattr(load(name), func), wrt=wrt))
    tree = ast.parse(text)
    targets, found = _stopped(tree)
    assert targets, f"no stop_gradient assignment in:\n{text}"
    assert callees <= found, f"expected {callees} inside stop_gradient, found {found}"
    assert sum(_is_stop(n) for n in ast.walk(tree)) == 1, text
    reverse = _reverse_sweep(text)
    names = _identifiers(reverse)
    for target in targets:
        assert "d" + target not in names, f"adjoint of stopped {target!r} generated:\n{text}"
    for callee in found:
        assert callee not in reverse, f"{callee} is called in the reverse sweep:\n{text}"
    assert "stop_gradient" not in reverse


# -- one gradient per example against finite differences ---------------------

def test_stable_softmax_fd():
    m = load("stable_softmax")
    rng = np.random.default_rng(0)
    x, t = 3.0 * rng.standard_normal(5), rng.dirichlet(np.ones(5))
    check_grad(m.stable_softmax, (x, t), wrt=0)


def _em_point(m):
    rng = np.random.default_rng(1)
    return (rng.standard_normal(3), np.array([-2.0, 0.0, 2.0]) + rng.standard_normal(3),
            0.3 * rng.standard_normal(3), m.make_data(rng)[::10])


def test_em_fd_and_fisher():
    m = load("em")
    point = _em_point(m)
    g_ll = check_grad(m.loglik, point, wrt=(0, 1, 2))
    g_bad = check_grad(m.expected_loglik_no_stop, point, wrt=(0, 1, 2))
    g_q = m.grad_q(*point)
    check_value(m.expected_loglik, point, wrt=(0, 1, 2), grads=g_q)
    for a, b, c in zip(g_ll, g_q, g_bad):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)   # Fisher's identity
    assert max(np.max(np.abs(a - c)) for a, c in zip(g_ll, g_bad)) > 1e-2


def test_em_step_is_textbook_m_step():
    m = load("em")
    point = _em_point(m)
    for a, b in zip(m.em_step(*point), m.textbook_em_step(*point)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_contrastive_divergence_fd():
    m = load("contrastive_divergence")
    rng = np.random.default_rng(2)
    v = m.noisy_patterns(rng, n=20)
    W, b, c = 0.3 * rng.standard_normal((16, 5)), rng.standard_normal(16), rng.standard_normal(5)
    # The samples are piecewise constant in the parameters: finite differences
    # see them as constants, as stop_gradient does.
    check_grad(m.cd_loss, (W, b, c, v, 7), wrt=("W", "b", "c"))
    grads = checked_grad(m.cd_loss, wrt=("W", "b", "c"))(W, b, c, v, 7)
    for g, ref in zip(grads, m.textbook_cd_update(W, b, c, v, 7)):
        np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-12)


def test_adversarial_fd():
    m = load("adversarial")
    rng = np.random.default_rng(3)
    x, y = m.make_data(rng, 50)
    w, b = 0.5 * rng.standard_normal(x.shape[1]), 0.2
    check_grad(m.adversarial_loss, (w, b, x, y, m.EPS), wrt=("w", "b"))
    check_grad(m.logistic_loss, (w, b, x, y), wrt="x")
    for g, ref in zip(m.adversarial_grad(w, b, x, y, m.EPS),
                      m.worst_case_grad(w, b, x, y, m.EPS)):
        np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-12)
    check_value(m.worst_case_loss, (w, b, x, y, m.EPS), wrt=("w", "b"),
                grads=m.worst_case_grad(w, b, x, y, m.EPS))
