"""Gradients on Dask arrays: the rule tables, the function corpus, and a real
cluster (`duckcheck` is the oracle: values and gradients equal NumPy's,
gradients lazy and of Dask's type, no computation the plain call does not
do).  Skipped where Dask is not installed (`pip install s2s_ad[dask]`).
"""
import importlib
import os
import re

import numpy as np
import pytest

import s2s_ad as ad
from duckcheck import check_on_dask, da, dask, to_dask
from rulecheck import case_id, floats, wsum
import test_forward_corpus as corpus
import test_rules_elementwise as elementwise

TABLES = ["test_rules_linalg", "test_rules_methods", "test_rules_reductions",
          "test_rules_shapes", "test_rules_signal", "test_rules_statistics",
          "test_rules_ufuncs"]
README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")


def _rule_rows():
    rows = []
    for name in TABLES:
        table = importlib.import_module(name)
        row_id = getattr(table, "row_id", case_id)
        rows += [pytest.param(f, args, id=f"{name[11:]}: {row_id((f, args))}")
                 for f, args in table.CASES]
    rng = np.random.default_rng(5)
    for fn, domain in elementwise.UNARY:
        x = elementwise.sample(domain, (3, 4), rng)
        rows.append(pytest.param(lambda x, fn=fn: wsum(fn(x)), (x,), id=fn.__name__))
    for fn, dom1, dom2 in elementwise.BINARY:
        args = (elementwise.sample(dom1, (3, 4), rng), elementwise.sample(dom2, (4,), rng))
        rows.append(pytest.param(lambda x, y, fn=fn: wsum(fn(x, y)), args, id=fn.__name__))
    return rows


def _numpy_only_list() -> str:
    with open(README) as fh:
        text = fh.read()
    return text[text.index("### NumPy-only derivatives"):]


@pytest.mark.parametrize("f,args", _rule_rows())
def test_rule_on_dask(f, args):
    """Each rule works on Dask arrays, or refuses them by a located error
    naming a function the README lists as NumPy-only."""
    try:
        outcome = check_on_dask(f, list(args), floats(args), lazy=True)
    except ad.S2SADError as e:
        pytest.fail(f"unexpected error: {e}")
    if outcome == "refused":
        with pytest.raises(ad.S2SADError) as info:
            ad.grad(f, wrt=floats(args))(*to_dask(list(args)))
        what = re.search(r"derivative of (.+?) is computed for NumPy arrays only",
                         str(info.value)).group(1)
        assert "dask.array" in str(info.value) and what in _numpy_only_list()


# programs whose plain call alone takes Dask minutes: 100 steps of in-place
# updates (Dask's graph for a setitem grows with every earlier one)
SLOW_ON_DASK = {"spring_chain_inplace"}


@pytest.mark.parametrize("name,f,make_args,wrt", corpus.CASES,
                         ids=[c[0] for c in corpus.CASES])
def test_corpus_on_dask(name, f, make_args, wrt):
    if name in SLOW_ON_DASK:
        pytest.skip("Dask takes minutes to build the plain call's graph")
    outcome = check_on_dask(f, make_args(), wrt)
    if outcome == "too slow on dask":
        pytest.skip("the plain call computes at every step, or its graph is deep")


def loss(w, X, y):
    """Logistic regression's mean loss, stably."""
    return np.mean(np.logaddexp(0.0, -y * (X @ w)))


def test_value_and_grad_is_one_lazy_graph():
    rng = np.random.default_rng(0)
    X, w = rng.standard_normal((1000, 5)), rng.standard_normal(5)
    y = np.sign(rng.standard_normal(1000))
    dX, dy = da.from_array(X, chunks=(250, 5)), da.from_array(y, chunks=250)
    value, grad = ad.value_and_grad(loss)(da.from_array(w, chunks=5), dX, dy)
    assert isinstance(value, da.Array) and isinstance(grad, da.Array)
    got_value, got_grad = dask.compute(value, grad, scheduler="sync")
    want_value, want_grad = ad.value_and_grad(loss)(w, X, y)
    np.testing.assert_allclose(got_value, want_value, rtol=1e-12)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-10)


def test_numpy_weights_with_dask_data():
    """A NumPy parameter on Dask data gets a lazy gradient of its shape."""
    rng = np.random.default_rng(1)
    X, w = rng.standard_normal((200, 3)), rng.standard_normal(3)
    y = np.sign(rng.standard_normal(200))
    grad = ad.grad(loss)(w, da.from_array(X, chunks=(50, 3)), da.from_array(y, chunks=50))
    assert isinstance(grad, da.Array) and grad.shape == w.shape and grad.dtype == w.dtype
    np.testing.assert_allclose(np.asarray(dask.compute(grad, scheduler="sync")[0]),
                               ad.grad(loss)(w, X, y), rtol=1e-10)


def test_local_cluster_with_two_worker_processes():
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(2)
    X, w = rng.standard_normal((4000, 4)), rng.standard_normal(4)
    y = np.sign(rng.standard_normal(4000))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        value, grad = ad.value_and_grad(loss)(
            da.from_array(w, chunks=4), da.from_array(X, chunks=(1000, 4)),
            da.from_array(y, chunks=1000))
        got_value, got_grad = client.compute([value, grad], sync=True)
    want_value, want_grad = ad.value_and_grad(loss)(w, X, y)
    np.testing.assert_allclose(got_value, want_value, rtol=1e-12)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-10)


def test_data_dependent_branch_computes_its_test_once():
    """`if` on a Dask scalar computes it (Python needs a bool), once: the
    reverse sweep reuses the decision."""
    def f(x):
        s = np.sum(x)
        if s > 0:
            return np.sum(x * x)
        return np.sum(np.sin(x))

    count = []

    def scheduler(graph, keys, **kwargs):
        count.append(1)
        return dask.get(graph, keys, **kwargs)
    x = np.linspace(-1.0, 2.0, 8)
    with dask.config.set(scheduler=scheduler):
        grad = ad.grad(f)(da.from_array(x, chunks=4))
        assert len(count) == 1
    np.testing.assert_allclose(grad.compute(scheduler="sync"), 2 * x)


def test_cupy_when_a_gpu_is_present():
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:
        pytest.skip("no GPU")
    x = np.linspace(-1.0, 1.0, 16)
    grad = ad.grad(lambda x: np.sum(np.tanh(x) ** 2))(cupy.asarray(x))
    assert isinstance(grad, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(grad), 2 * np.tanh(x) / np.cosh(x) ** 2,
                               rtol=1e-12)


def updates_through_a_slice(x):
    y = x * 1.0
    v = y[1:]
    v[0] = 5.0 * v[0]           # a view of y in NumPy, a copy in Dask
    return np.sum(y * y) + np.sum(v * v)


def updates_a_copy(x):
    y = x * 1.0
    v = y[1:].copy()
    v[0] = 5.0 * v[0]
    return np.sum(y * y) + np.sum(v * v)


def test_in_place_updates_follow_dasks_semantics():
    """Dask has no views: an update through a slice leaves the base as it
    was, in the plain call and in the gradient (views are checked at run
    time, so the gradient is that of the copying program)."""
    x = np.linspace(0.5, 2.0, 5)
    value, grad = ad.value_and_grad(updates_through_a_slice)(da.from_array(x, chunks=2))
    value, grad = dask.compute(value, grad, scheduler="sync")
    assert value == pytest.approx(updates_through_a_slice(da.from_array(x, chunks=2))
                                  .compute(scheduler="sync"))
    want_value, want_grad = ad.value_and_grad(updates_a_copy)(x)
    assert value == pytest.approx(want_value) != updates_through_a_slice(x)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)
