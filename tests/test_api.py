"""The public API: transforms, options, gradient types, stop_gradient, source,
custom rules and the cache."""
import inspect
import linecache
import threading
import traceback

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import (assert_tree_close, check_grad, check_value, check_vjp, checked_grad,
                     checked_value_and_grad, plain_call)

CALLS = []


def loss(x, y=2.0):
    return np.sum(np.tanh(x) * y) + y * y


def two_args(a, b):
    return a * a * b + np.sin(b)


def with_aux(x):
    return np.sum(x ** 2), np.max(x)


def vector_out(x, w):
    return np.tanh(x) * w


def vector_out_with_default(x, w=3.0):
    return np.tanh(x) * w


def counted(x):
    ad.stop_gradient(CALLS.append(1))
    return x * x


# -- transforms and options ----------------------------------------------------
def test_grad_forms_agree():
    x = np.linspace(-1, 1, 4)
    bare = checked_grad(loss)(x)

    @ad.grad(wrt="x")
    def decorated(x, y=2.0):
        return np.sum(np.tanh(x) * y) + y * y

    assert np.allclose(bare, decorated(x))
    assert np.allclose(bare, checked_grad(loss, wrt=0)(x))
    assert np.allclose(bare, checked_grad(loss, wrt=-2)(x, 2.0))
    assert np.allclose(bare, checked_grad(loss)(x=x, y=2.0))


def test_wrt_tuple_returns_tuple():
    ga, gb = checked_grad(two_args, wrt=(0, "b"))(1.5, 0.5)
    assert ga == pytest.approx(2 * 1.5 * 0.5) and gb == pytest.approx(1.5 ** 2 + np.cos(0.5))
    (only,) = checked_grad(two_args, wrt=(1,))(1.5, 0.5)
    assert only == pytest.approx(gb)


def test_value_and_grad_runs_primal_once():
    CALLS.clear()
    value, g = ad.value_and_grad(counted)(3.0)
    assert (value, g) == (9.0, 6.0) and len(CALLS) == 1
    assert_tree_close(value, plain_call(counted, [3.0]), "value differs from a plain call")


def test_has_aux():
    x = np.array([0.5, -1.0, 2.0])
    g, aux = checked_grad(with_aux, has_aux=True)(x)
    assert np.allclose(g, 2 * x) and aux == 2.0
    (value, aux), g = checked_value_and_grad(with_aux, has_aux=True)(x)
    assert value == pytest.approx(np.sum(x ** 2)) and aux == 2.0 and np.allclose(g, 2 * x)


def test_vjp_non_scalar_output():
    x, w = np.array([0.1, 0.2, 0.3]), np.array([1.0, -2.0, 0.5])
    seed = np.array([1.0, 0.5, -1.0])
    gx, gw = ad.vjp(vector_out, wrt=(0, 1))(x, w, seed)
    assert np.allclose(gx, seed * w * (1 - np.tanh(x) ** 2))
    assert np.allclose(gw, seed * np.tanh(x))
    check_vjp(vector_out, [x, w], seed, wrt=(0, 1))
    g = ad.vjp(vector_out_with_default)(x, seed=seed)      # keyword-only seed
    assert np.allclose(g, seed * 3.0 * (1 - np.tanh(x) ** 2))
    check_vjp(vector_out_with_default, [x], seed)


def test_optimize_false_gives_same_gradient():
    x = np.linspace(-1, 1, 5)
    assert np.allclose(checked_grad(loss, optimize=False)(x), checked_grad(loss)(x))


# -- gradient types ------------------------------------------------------------
@pytest.mark.parametrize("x", [1.5, np.float64(1.5), np.float32(1.5), np.array(1.5),
                               np.array([1.5, 2.0]), np.ones((2, 3), np.float32)])
def test_gradient_has_argument_type(x):
    def f(x):
        return np.sum(x * x * 3.0)
    g = checked_grad(f)(x)
    assert type(g) is type(x) and np.shape(g) == np.shape(x)
    assert np.asarray(g).dtype == np.asarray(x).dtype
    assert np.allclose(g, 6.0 * np.asarray(x))


def test_int_argument_is_rejected():
    with pytest.raises(ad.InputTypeError, match="integer"):
        ad.grad(two_args)(3, 0.5)
    with pytest.raises(ad.InputTypeError):
        ad.grad(loss)(np.arange(3))


def test_gradient_of_unused_parameter_is_zero_of_its_type():
    def f(a, b):
        return a * 2.0
    assert checked_grad(f, wrt=1)(1.0, 5.0) == 0.0
    g = checked_grad(f, wrt=1)(1.0, np.ones((2, 2), np.float32))
    assert g.dtype == np.float32 and not g.any()


# -- stop_gradient --------------------------------------------------------------
def helper_without_rule(v):
    try:                                  # unsupported syntax: never differentiated
        return sorted(v.tolist())[-1]
    except AttributeError:
        return v


def stopped(x):
    m = ad.stop_gradient(np.max(x))
    k = ad.stop_gradient(int(np.argmax(x)) + len([v for v in x if v > 0]))
    s = ad.stop_gradient(sum(v * v for v in x) + helper_without_rule(x))
    return np.sum((x - m) ** 2) + k * np.sum(x) + s * x[0] * 0.0 + np.sum(x)


def partly_stopped(x):
    return x * ad.stop_gradient(x) + ad.stop_gradient(ad.stop_gradient(x) * 2.0)


def test_stop_gradient_is_identity_at_run_time():
    x = np.array([1.0, 2.0])
    assert ad.stop_gradient(x) is x


def test_stop_gradient_masks_and_emits_no_adjoint():
    x = np.array([0.3, -1.2, 2.0, 0.7])
    g = checked_grad(stopped)(x)
    k = int(np.argmax(x)) + 3
    assert np.allclose(g, 2 * (x - np.max(x)) + k + 1)
    reverse = ad.source(ad.grad(stopped)).split("# grad of:", 1)[1]
    for name in ("argmax", "helper_without_rule", "np.max", "dm", "dk ", "sorted"):
        assert name not in reverse


def test_stop_gradient_on_one_use_only():
    assert checked_grad(partly_stopped)(3.0) == 3.0      # d/dx x*c at c = x


def test_nested_stop_gradient_and_grad_inside():
    inner = ad.grad(loss)

    def outer(x):
        direction = ad.stop_gradient(inner(x))
        return np.sum(x * direction)
    x = np.array([0.2, 0.4])
    assert np.allclose(checked_grad(outer)(x), inner(x))


# -- generated source ----------------------------------------------------------
def test_source_matches_inspect_and_is_deterministic():
    derived = ad.grad(loss)
    assert ad.source(derived) == inspect.getsource(derived)
    assert ad.source(derived).startswith("def dloss(x, y=2.0):")
    with pytest.raises(ad.S2SADError):
        ad.source(loss)


def test_source_survives_a_cleared_linecache():
    derived = ad.grad(loss)
    text = ad.source(derived)
    linecache.clearcache()          # as IPython and some test runners do
    assert ad.source(derived) == text


def test_tracebacks_show_generated_lines():
    def bad(x):
        return np.sum(np.log(x) @ np.ones(3))
    derived = ad.grad(bad)
    with pytest.raises(ValueError) as info:
        derived(np.ones(2))
    frames = traceback.extract_tb(info.tb)
    generated = [f for f in frames if f.filename.startswith("<s2s_ad")]
    assert generated and "@" in generated[-1].line
    code = derived.__code__
    assert linecache.getline(code.co_filename, code.co_firstlineno).startswith("def dbad")


# -- custom rules -----------------------------------------------------------------
def softplus(x):
    return np.log1p(np.exp(x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def uses_softplus(x):
    return np.sum(softplus(x) * 2.0)


def test_custom_adjoint_rule():
    @ad.adjoint(softplus)
    def softplus_rule(z, x):
        d[x] += d[z] * sigmoid(x)  # noqa: F821  (templates are never called)

    check_grad(uses_softplus, [np.array([0.5, -1.0, 2.0])])
    assert "sigmoid(" in ad.source(ad.grad(uses_softplus))


def test_rule_with_wrong_signature_is_rejected():
    def target(a, b):
        return a + b
    with pytest.raises(ad.RuleError, match="do not match"):
        @ad.adjoint(target)
        def rule(z, a, c):
            d[a] += d[z]  # noqa: F821


def test_nondifferentiable_declaration():
    def bucket(x):
        return np.floor(x * 4.0) / 4.0

    def f(x):
        return np.sum(x * bucket(x))
    x = np.array([0.3, 0.9])
    assert "bucket_fwd" in ad.source(ad.grad(f))        # differentiated through
    ad.nondifferentiable(bucket)
    assert "bucket_fwd" not in ad.source(ad.grad(f))    # now an opaque call
    assert np.allclose(checked_grad(f)(x), bucket(x))


def test_callee_without_source_needs_a_rule():
    namespace = {}
    exec("def opaque(x):\n    return x * 2.0\n", namespace)
    opaque = namespace["opaque"]

    def f(x):
        return opaque(x) * x
    with pytest.raises(ad.NoRuleError, match="opaque") as info:
        ad.grad(f)
    assert "stop_gradient" in info.value.hint and info.value.location.line > 1


# -- cache -----------------------------------------------------------------------
def test_cache_returns_the_same_function():
    assert ad.grad(loss) is ad.grad(loss)
    assert ad.grad(loss, wrt=1) is not ad.grad(loss)


def test_new_code_object_recompiles():
    def f(x):
        return x * 2.0
    first = ad.grad(f)

    def g(x):
        return x * 3.0
    f.__code__ = g.__code__
    assert ad.grad(f) is not first and checked_grad(f)(1.0) == 3.0


def test_cache_is_weak():
    import gc
    import weakref

    def f(x):
        return x * 2.0
    derived = ad.grad(f)
    alive = weakref.ref(f)
    del f
    gc.collect()
    assert alive() is None and derived(1.0) == 2.0


def test_threads_share_one_compilation():
    def f(x):
        return np.sum(np.sin(x) * x)
    results, errors = [], []

    def work():
        try:
            results.append(ad.grad(f))
        except Exception as exc:       # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len({id(r) for r in results}) == 1
    x = np.linspace(0, 1, 3)
    outs = []
    threads = [threading.Thread(target=lambda: outs.append(results[0](x))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(o, outs[0]) for o in outs)
    check_value(f, [x], grads=[outs[0]])


def test_public_api_is_typed():
    # PEP 561: the package says it carries hints, and every public function
    # annotates each parameter and its result (resolvable on every Python)
    import pathlib
    import typing
    assert (pathlib.Path(ad.__file__).parent / "py.typed").is_file()
    for fn in (ad.grad, ad.value_and_grad, ad.vjp, ad.source, ad.check_grads,
               ad.adjoint, ad.nondifferentiable, ad.stop_gradient):
        hints = typing.get_type_hints(fn)
        params = [p for p in inspect.signature(fn).parameters.values()]
        assert "return" in hints, fn.__name__
        assert all(p.name in hints for p in params), (fn.__name__, hints)
