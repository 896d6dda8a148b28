"""Issue 10, items 10, 17 and 18: no empty blocks (and `InternalError` as the
safety net), a cache that notices what was rebound since it compiled, and
invalid input refused with a located error.

Every gradient is checked against central finite differences (fdcheck), every
value against a plain call of the function, and every argument for mutation;
every error for its type, file, line and hint.
"""
import copy
import functools
import gc
import importlib
import inspect
import linecache
import sys
import textwrap
import weakref

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import assert_tree_equal, check_grad
from s2s_ad import cache, cli, driver, optimize, pipeline

HERE = __file__


def line_of(fn, text):
    """The file line (1-based) of the first line of `fn` containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def value_checked(transform, f, *args, **options):
    """`transform(f)(*args)`, checking the value against a plain call of `f`
    and that the arguments are left untouched; returns the gradients."""
    before = copy.deepcopy(args)
    value, grads = ad.value_and_grad(f, **options)(*args)
    assert_tree_equal(before, args)
    np.testing.assert_allclose(value, f(*copy.deepcopy(args)), rtol=1e-12)
    out = transform(f, **options)(*args)
    assert_tree_equal(before, args)
    return out


def assert_located(err, fn, text):
    """`err` is an S2SADError naming `fn`'s file, the line holding `text`,
    and saying what to do."""
    assert isinstance(err, ad.S2SADError)
    assert err.location is not None and err.location.filename == inspect.getsourcefile(fn)
    assert err.location.line == line_of(fn, text), str(err)
    assert err.hint and f"{err.location.filename}:{err.location.line}:" in str(err)


# ---------------------------------------------------------------------------
# item 10: no block is ever empty
# ---------------------------------------------------------------------------

def if_body_dies(x, y):
    if y > 0:
        z = 1.0
    else:
        z = 2.0
        w = x * 3.0
        x = x * 1.5
    return x * x


def pass_branch(x, y):
    if y > 0:
        pass
    else:
        x = x * 2.0
    return x * x


def nested_conditional(x, y):
    u = np.sin(x) if y > 0 else (np.cos(x) if y < -1 else x)
    return u


def elif_chain(x, y):
    if y > 1:
        z = 1.0
    elif y > 0:
        z = x * 4.0
    else:
        x = x * 3.0
    return x * x


def loop_variable_after_empty_loop(x, y):
    for i in range(3):
        pass
    return x * i


def dead_loop(x, n):
    s = x * 1.0
    for i in range(n):
        t = s * 2.0
    return s * x


EMPTY_BLOCKS = [(if_body_dies, (1.3, -1.0)), (if_body_dies, (1.3, 1.0)),
                (pass_branch, (0.7, -1.0)), (pass_branch, (0.7, 1.0)),
                (nested_conditional, (0.4, 1.0)), (nested_conditional, (0.4, -2.0)),
                (nested_conditional, (0.4, -0.5)), (elif_chain, (0.8, 2.0)),
                (elif_chain, (0.8, 0.5)), (elif_chain, (0.8, -1.0)),
                (loop_variable_after_empty_loop, (1.1, 0.0)), (dead_loop, (0.9, 3))]


@pytest.mark.parametrize("optimize_", [True, False])
@pytest.mark.parametrize("f,args", EMPTY_BLOCKS)
def test_dead_code_leaves_no_empty_block(f, args, optimize_):
    value_checked(ad.grad, f, *args, optimize=optimize_)
    check_grad(f, args, optimize=optimize_)
    text = ad.source(ad.grad(f, optimize=optimize_))
    compile(text, "<generated>", "exec")


def test_an_if_whose_body_died_is_inverted():
    text = ad.source(ad.grad(if_body_dies))
    assert "if not _t1:\n        x_old = x" in text, text


def test_code_that_does_not_compile_is_an_internal_error(monkeypatch):
    cache.clear()
    monkeypatch.setattr(optimize, "tidy_blocks", lambda *args: None)
    with pytest.raises(ad.InternalError) as info:
        ad.grad(if_body_dies)
    err = info.value
    assert_located(err, if_body_dies, "def if_body_dies")
    assert "bug in s2s_ad" in err.hint and "does not compile" in err.message
    assert "def dif_body_dies" in err.generated and "generated code:" in str(err)


def test_unexpected_exception_in_the_stages_is_an_internal_error(monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("boom")
    cache.clear()
    monkeypatch.setattr(pipeline.analysis, "analyze", broken)
    with pytest.raises(ad.InternalError) as info:
        ad.grad(dead_loop)
    assert_located(info.value, dead_loop, "def dead_loop")
    assert "KeyError" in info.value.message and isinstance(info.value.__cause__, KeyError)


def test_cli_reports_internal_error_and_exits_nonzero(monkeypatch, capsys, tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(inspect.getsource(if_body_dies)))
    monkeypatch.setattr(optimize, "tidy_blocks", lambda *args: None)
    status = cli.main(["dump", f"{path}:if_body_dies"])
    out, err = capsys.readouterr()
    assert status == 3 and out == ""
    assert "bug in s2s_ad" in err and "generated code:" in err and f"{path}:1:" in err


def test_cli_dump_of_dead_branch_compiles(capsys, tmp_path):
    path = tmp_path / "prog.py"
    path.write_text("import numpy as np\n\n\n" +
                    textwrap.dedent(inspect.getsource(nested_conditional)))
    assert cli.main(["dump", f"{path}:nested_conditional"]) == 0
    compile(capsys.readouterr().out, "<dump>", "exec")


def global_lambda_callee(x):
    return np.sum(scale_by_two(x) * x)


scale_by_two = lambda v: v * 2.0  # noqa: E731


def test_a_lambda_callee_gets_a_pair_with_valid_names():
    x = np.array([0.3, 0.6])
    value_checked(ad.grad, global_lambda_callee, x)
    check_grad(global_lambda_callee, (x,))
    assert "lambda_fwd(x)" in ad.source(ad.grad(global_lambda_callee))


# ---------------------------------------------------------------------------
# item 17: the cache and the derived functions notice what was rebound
# ---------------------------------------------------------------------------

act = np.tanh


def uses_global(x):
    return np.sum(act(x) * 2.0)


def calls_helper_using_global(x):
    return uses_global(x) + np.sum(x)


def resolves_nothing(x):
    return 3.0 * x ** 3 + 2.0 * x


@pytest.fixture
def restore_act():
    yield
    globals()["act"] = np.tanh


def test_rebound_global_recompiles_grad_and_returned_function(restore_act):
    x = np.array([0.3, -0.5, 1.2])
    derived = ad.grad(uses_global)
    np.testing.assert_allclose(derived(x), 2.0 * (1.0 - np.tanh(x) ** 2), rtol=1e-12)
    globals()["act"] = np.sin
    expected = 2.0 * np.cos(x)
    np.testing.assert_allclose(derived(x), expected, rtol=1e-12)      # returned before
    np.testing.assert_allclose(ad.grad(uses_global)(x), expected, rtol=1e-12)
    assert ad.grad(uses_global) is not derived and ad.grad(uses_global) is ad.grad(uses_global)
    value_checked(ad.grad, uses_global, x)
    check_grad(uses_global, (x,))


def test_rebinding_reaches_through_a_callee_pair(restore_act):
    x = np.array([0.2, 0.9])
    derived = ad.grad(calls_helper_using_global)
    check_grad(calls_helper_using_global, (x,))
    globals()["act"] = np.cos
    np.testing.assert_allclose(derived(x), -2.0 * np.sin(x) + 1.0, rtol=1e-12)
    value_checked(ad.grad, calls_helper_using_global, x)
    check_grad(calls_helper_using_global, (x,))


def test_the_guard_reads_the_names_and_the_function_itself():
    text = ad.source(ad.grad(uses_global))
    assert "if act is not was_act or (uses_global_ref() is not None and " \
           "uses_global_ref().__code__ is not was_uses_global):\n" \
           "        return rederive(x)" in text, text
    text = ad.source(ad.grad(resolves_nothing))
    assert "if resolves_nothing_ref() is not None and " \
           "resolves_nothing_ref().__code__ is not was_resolves_nothing:\n" \
           "        return rederive(x)" in text, text


def squares_summed(x):
    return np.sum(x * x)


def cubes_summed(x):
    return np.sum(x * x * x)


def test_the_function_itself_edited_in_place_is_derived_again():
    # IPython's autoreload gives the old function object the new code: a
    # derived function made before must not go on computing the old code's
    # gradient (or tangent)
    x = np.array([0.3, -0.8])
    code = squares_summed.__code__
    held, held_jvp = ad.grad(squares_summed), ad.jvp(squares_summed)
    np.testing.assert_allclose(held(x), 2.0 * x, rtol=1e-12)
    try:
        squares_summed.__code__ = cubes_summed.__code__
        np.testing.assert_allclose(held(x), 3.0 * x * x, rtol=1e-12)
        value, tangent = held_jvp(x, np.ones(2))
        assert value == pytest.approx(np.sum(x ** 3))
        assert tangent == pytest.approx(np.sum(3.0 * x * x))
        value_checked(ad.grad, squares_summed, x)
        check_grad(squares_summed, (x,))
    finally:
        squares_summed.__code__ = code


def test_value_and_grad_vjp_and_has_aux_forward_every_argument(restore_act):
    def f(x, *rest, scale=2.0):
        return np.sum(act(x)) * scale + sum(rest), x
    x = np.array([0.1, 0.4])
    vg = ad.value_and_grad(f, has_aux=True)
    vjp = ad.vjp(lambda x, scale=1.0: act(x) * scale)
    vg(x, 1.0, scale=3.0)
    vjp(x, seed=np.ones(2))
    globals()["act"] = np.sin
    (value, aux), g = vg(x, 1.0, scale=3.0)
    assert value == pytest.approx(np.sum(np.sin(x)) * 3.0 + 1.0) and aux is x
    np.testing.assert_allclose(g, 3.0 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(vjp(x, 2.0, seed=np.ones(2)), 2.0 * np.cos(x), rtol=1e-12)


def test_closure_cell_reassigned():
    def make():
        fn = np.sin

        def loss(x):
            return fn(x) * 3.0

        def use(new):
            nonlocal fn
            fn = new
        return loss, use
    loss, use = make()
    derived = ad.grad(loss)
    assert derived(0.4) == pytest.approx(3.0 * np.cos(0.4))
    use(np.exp)
    assert derived(0.4) == pytest.approx(3.0 * np.exp(0.4))
    value_checked(ad.grad, loss, 0.4)
    check_grad(loss, (0.4,))


def test_partial_and_lambda_follow_a_rebinding(restore_act):
    def scaled(x, k):
        return np.sum(act(x)) * k
    x = np.array([0.5, -0.2])
    g_partial = ad.grad(functools.partial(scaled, k=2.0))
    g_lambda = ad.grad(lambda x: np.sum(act(x)))        # nothing keeps the lambda
    gc.collect()
    g_partial(x), g_lambda(x)
    globals()["act"] = np.sin
    np.testing.assert_allclose(g_partial(x), 2.0 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(g_lambda(x), np.cos(x), rtol=1e-12)


HELPERS_V1 = """
import numpy as np

SCALE = 2.0

def inner(x):
    return x * SCALE

def helper(x):
    return np.sin(inner(x))

def act(x):
    return x * x
"""

HELPERS_V2 = """
import numpy as np

SCALE = 2.0

def inner(x):
    return x * SCALE * 1.5

def helper(x):
    return np.cos(inner(x))

def act(x):
    return x * x * x
"""

CALLERS = """
import numpy as np
import s2s_helpers_mod
from s2s_helpers_mod import helper
from s2s_helpers_mod import act as power


def via_power(x):
    return np.sum(power(x))


def via_module(x):
    return np.sum(s2s_helpers_mod.helper(x)) + np.sum(x)


def via_name(x):
    return np.sum(helper(x))


def via_local_import(x):
    from s2s_helpers_mod import act
    return np.sum(act(x))
"""


@pytest.fixture
def modules(tmp_path, monkeypatch):
    (tmp_path / "s2s_helpers_mod.py").write_text(HELPERS_V1)
    (tmp_path / "s2s_callers_mod.py").write_text(CALLERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("s2s_helpers_mod", "s2s_callers_mod"):
        sys.modules.pop(name, None)
    import s2s_callers_mod
    import s2s_helpers_mod
    yield tmp_path, s2s_helpers_mod, s2s_callers_mod
    for name in ("s2s_helpers_mod", "s2s_callers_mod"):
        sys.modules.pop(name, None)


def _reload_v2(path, helpers):
    (path / "s2s_helpers_mod.py").write_text(HELPERS_V2)
    importlib.invalidate_caches()
    return importlib.reload(helpers)


def test_reloaded_module_and_local_import(modules):
    path, helpers, callers = modules
    x = np.array([0.3, 0.8])
    by_module, by_import = ad.grad(callers.via_module), ad.grad(callers.via_local_import)
    np.testing.assert_allclose(by_module(x), 2.0 * np.cos(2.0 * x) + 1.0, rtol=1e-12)
    np.testing.assert_allclose(by_import(x), 2.0 * x, rtol=1e-12)
    _reload_v2(path, helpers)
    np.testing.assert_allclose(by_module(x), -3.0 * np.sin(3.0 * x) + 1.0, rtol=1e-12)
    np.testing.assert_allclose(by_import(x), 3.0 * x * x, rtol=1e-12)
    for f in (callers.via_module, callers.via_local_import):
        value_checked(ad.grad, f, x)
        check_grad(f, (x,))


def test_from_import_keeps_the_old_helper_until_rebound(modules):
    path, helpers, callers = modules
    x = np.array([0.3, 0.8])
    derived = ad.grad(callers.via_name)
    assert "rt.bound(s2s_helpers_mod_globals, 'inner') != was_s2s_helpers_mod_globals" \
        in ad.source(derived)       # the callee's global, read in its module
    helpers.SCALE = 5.0             # a number: read at run time, no recompile
    np.testing.assert_allclose(derived(x), 5.0 * np.cos(5.0 * x), rtol=1e-12)
    helpers.SCALE = 2.0
    helpers.inner = lambda v: v * 3.0       # the callee's callee rebound
    np.testing.assert_allclose(derived(x), 3.0 * np.cos(3.0 * x), rtol=1e-12)
    value_checked(ad.grad, callers.via_name, x)
    new = _reload_v2(path, helpers)
    # the old helper is still called, but its file now holds other text:
    # refused, at the call, rather than differentiated from the new text
    with pytest.raises(ad.NoRuleError, match="changed since it was defined") as info:
        derived(x)
    assert_located(info.value, callers.via_name, "np.sum(helper(x))")
    callers.helper = new.helper     # a re-executed `def helper`: a new object
    np.testing.assert_allclose(derived(x), -3.0 * np.sin(3.0 * x), rtol=1e-12)
    value_checked(ad.grad, callers.via_name, x)
    check_grad(callers.via_name, (x,))


def _autoreload(old_functions, module):
    """What IPython's autoreload does to the functions of a module it
    reloads: the old function objects get the new code and defaults, so
    every name bound to one (`from m import helper`) now runs the new."""
    for old in old_functions:
        fresh = getattr(module, old.__name__)
        old.__code__, old.__defaults__ = fresh.__code__, fresh.__defaults__


def test_a_helper_edited_in_place_is_derived_again(modules):
    path, helpers, callers = modules
    x = np.array([0.3, 0.8])
    held, old_power = ad.grad(callers.via_power), callers.power
    np.testing.assert_allclose(held(x), 2.0 * x, rtol=1e-12)
    _autoreload([old_power], _reload_v2(path, helpers))
    assert callers.power is old_power           # the name still denotes it
    np.testing.assert_allclose(held(x), 3.0 * x * x, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(callers.via_power)(x), 3.0 * x * x, rtol=1e-12)
    value_checked(ad.grad, callers.via_power, x)
    check_grad(callers.via_power, (x,))


def scaled_sine(x, k=2.0):
    return np.sum(np.sin(x)) * k


def scaled_cosine(x, k=1.0):
    return np.sum(np.cos(x)) * k


def calls_scaled_sine(x):
    return scaled_sine(x) + 0.5


def test_derivatives_of_derivatives_follow_what_the_function_depends_on(restore_act):
    # the inner derivative's guard is not differentiated (third order
    # through one was refused): the outer one checks what it checked
    x = 0.3
    second, third = ad.grad(ad.grad(uses_global)), ad.grad(ad.grad(ad.grad(uses_global)))
    t = np.tanh(x)
    assert second(x) == pytest.approx(2.0 * -2.0 * t * (1.0 - t * t), rel=1e-12)
    assert third(x) == pytest.approx(2.0 * (-2.0 + 8.0 * t * t - 6.0 * t ** 4), rel=1e-12)
    globals()["act"] = np.sin
    assert second(x) == pytest.approx(-2.0 * np.sin(x), rel=1e-12)
    assert third(x) == pytest.approx(-2.0 * np.cos(x), rel=1e-12)
    code = resolves_nothing.__code__
    second, third = ad.grad(ad.grad(resolves_nothing)), ad.grad(ad.grad(ad.grad(resolves_nothing)))
    assert (second(x), third(x)) == pytest.approx((18.0 * x, 18.0), rel=1e-12)
    try:
        resolves_nothing.__code__ = uses_global.__code__    # (now 2 sin(x))
        assert (second(x), third(x)) == pytest.approx((-2.0 * np.sin(x), -2.0 * np.cos(x)),
                                                      rel=1e-12)
    finally:
        resolves_nothing.__code__ = code


def scales_by_a_nested_helper(x, a):
    def inner(v):
        return np.sin(v) * a
    return np.sum(x * inner(x[0]))


def test_a_nested_helper_is_no_dependency_of_its_own():
    # a nested function is lifted into a function object made anew per
    # compile: its forward-mode pair must not depend on that object (each
    # call derived again, forever: an InternalError)
    x, a = np.array([0.3, -0.5, 0.8]), 1.2
    check_grad(scales_by_a_nested_helper, (x, a))
    value, tangent = ad.jvp(scales_by_a_nested_helper)(x, a, np.ones(3))
    assert value == pytest.approx(scales_by_a_nested_helper(x, a))
    assert tangent == pytest.approx(ad.grad(scales_by_a_nested_helper)(x, a) @ np.ones(3))


def test_a_primal_nobody_holds_is_no_change():
    # `grad(lambda x: ...)` keeps no reference to its lambda: once it is
    # collected, the guard's weak reference to it reads None, which is no
    # edit (deriving again would need the lambda, and a second-order
    # derivative of it found no source to read)
    import gc
    derived = ad.grad(lambda x: np.sum(np.tanh(x) ** 2))
    hvp = ad.hvp(lambda x: np.sum(np.tanh(x) ** 2))
    gc.collect()
    x = np.array([0.5, -0.3])
    t = np.tanh(x)
    np.testing.assert_allclose(derived(x), 2.0 * t * (1.0 - t * t), rtol=1e-12)
    np.testing.assert_allclose(hvp(x, np.ones(2)), 2.0 * (1.0 - t * t) * (1.0 - 3.0 * t * t),
                               rtol=1e-10)


def test_code_or_defaults_replaced_in_place_are_derived_again():
    x = np.array([0.2, -0.7])
    code, defaults = scaled_sine.__code__, scaled_sine.__defaults__
    held = ad.grad(calls_scaled_sine)
    try:
        np.testing.assert_allclose(held(x), 2.0 * np.cos(x), rtol=1e-12)
        scaled_sine.__defaults__ = (3.0,)           # a helper's defaults
        np.testing.assert_allclose(held(x), 3.0 * np.cos(x), rtol=1e-12)
        scaled_sine.__code__ = scaled_cosine.__code__
        np.testing.assert_allclose(held(x), -3.0 * np.sin(x), rtol=1e-12)
        # the function's own defaults: `grad` again derives afresh; a
        # derived function already handed out keeps its own while the code
        # is the same (checked at each call: the code, not the defaults)
        own = ad.grad(scaled_sine)
        scaled_sine.__defaults__ = (5.0,)
        assert ad.grad(scaled_sine) is not own
        np.testing.assert_allclose(ad.grad(scaled_sine)(x), -5.0 * np.sin(x), rtol=1e-12)
        np.testing.assert_allclose(own(x), -3.0 * np.sin(x), rtol=1e-12)
        # code and defaults replaced (an autoreload): derived again, taking
        # what it is given, and refusing a call passing the old default
        # (given, or filled in by its own signature: it cannot tell)
        scaled_sine.__code__ = code
        np.testing.assert_allclose(own(x, 4.0), 4.0 * np.cos(x), rtol=1e-12)
        with pytest.raises(ad.S2SADError, match="defaults of 'scaled_sine' were replaced") \
                as info:
            own(x)
        assert_located(info.value, scaled_sine, "def scaled_sine(x, k=2.0):")
        check_grad(calls_scaled_sine, (x,))
        check_grad(scaled_sine, (x,))
    finally:
        scaled_sine.__code__, scaled_sine.__defaults__ = code, defaults


class Documented:
    scale = 2.0

    def loss(self, x):
        """The loss.

        Its docstring is indented deeper in the file than in the method's
        dedented text: the check for an edited file must not mind.
        """
        return np.sum(self.scale * np.sin(x))


DOCUMENTED = Documented()


def calls_a_documented_method(x):
    return DOCUMENTED.loss(x) * 0.5


def test_a_method_with_a_docstring_is_not_taken_for_an_edited_one():
    x = np.array([0.3, -0.2])
    np.testing.assert_allclose(ad.grad(calls_a_documented_method)(x), np.cos(x), rtol=1e-12)
    check_grad(calls_a_documented_method, (x,))
    value_checked(ad.grad, calls_a_documented_method, x)


def test_edited_source_file_is_refused(tmp_path, monkeypatch):
    (tmp_path / "s2s_edited_mod.py").write_text("import numpy as np\n\n\n"
                                                "def f(x):\n    return np.sin(x) * 2.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("s2s_edited_mod", None)
    import s2s_edited_mod
    (tmp_path / "s2s_edited_mod.py").write_text("import numpy as np\n\n\n"
                                                "def f(x):\n    return np.cos(x) * 3.0\n")
    with pytest.raises(ad.SourceUnavailableError, match="changed since") as info:
        ad.grad(s2s_edited_mod.f)
    assert_located(info.value, s2s_edited_mod.f, "def f")
    sys.modules.pop("s2s_edited_mod", None)


def test_rule_registered_later_is_used():
    def bump(x):
        return x * 3.0

    def f(x):
        return bump(x) * x
    derived = ad.grad(f)
    assert derived(2.0) == pytest.approx(12.0)
    ad.nondifferentiable(bump)          # from now on: no gradient through bump
    assert derived(2.0) == pytest.approx(6.0)
    assert ad.grad(f)(2.0) == pytest.approx(6.0)


class _Model:
    @property
    def act(self):              # a new function object at every read
        return lambda v: v * 2.0

    def weight(self, v):        # a new bound method at every read, all equal
        return np.cos(v)


model = _Model()


def uses_unstable_name(x):
    return np.sum(model.act(x)) + np.sum(np.sin(x))


def uses_bound_method(x):
    return np.sum(ad.stop_gradient(model.weight(x)) * x)


def test_bound_method_is_compared_by_equality(monkeypatch):
    x = np.array([0.1, 0.7])
    builds = []
    real = driver._build
    monkeypatch.setattr(driver, "_build", lambda f, o, *rest: builds.append(o.mode) or real(f, o, *rest))
    derived = ad.grad(uses_bound_method)
    assert "model.weight != was_model_weight" in ad.source(derived)
    for _ in range(3):
        np.testing.assert_allclose(derived(x), np.cos(x), rtol=1e-12)
        assert ad.grad(uses_bound_method) is derived
    assert builds == ["grad"]
    value_checked(ad.grad, uses_bound_method, x)


def test_unguardable_name_does_not_recompile_every_call(monkeypatch):
    x = np.array([0.1, 0.2])
    builds = []
    real = driver._build
    monkeypatch.setattr(driver, "_build", lambda f, o, *rest: builds.append(o.mode) or real(f, o, *rest))
    derived = ad.grad(uses_unstable_name)
    for _ in range(3):
        np.testing.assert_allclose(derived(x), 2.0 + np.cos(x), rtol=1e-12)
        assert ad.grad(uses_unstable_name) is derived
    assert builds.count("grad") == 1
    value_checked(ad.grad, uses_unstable_name, x)
    check_grad(uses_unstable_name, (x,))


def test_cache_does_not_keep_the_function_alive(restore_act):
    def make(k):
        def loss(x):
            return np.sum(act(x)) * k
        return loss

    def recursive(x, n):
        if n == 0:
            return x
        return np.sin(recursive(x, n - 1))
    loss = make(2.0)
    derived, alive = ad.grad(loss), weakref.ref(loss)
    x = np.array([0.2, 0.3])
    derived(x)
    globals()["recursive_fn"] = recursive
    deriv_rec, alive_rec = ad.grad(recursive), weakref.ref(recursive)
    deriv_rec(0.3, 2)
    del loss, recursive
    globals().pop("recursive_fn")
    gc.collect()
    assert alive() is None and alive_rec() is None
    globals()["act"] = np.sin        # the dead primal is rebuilt from its parts
    np.testing.assert_allclose(derived(x), 2.0 * np.cos(x), rtol=1e-12)


def test_grad_of_unchanged_function_is_one_cached_object():
    assert ad.grad(uses_global) is ad.grad(uses_global)
    cache.clear()
    assert ad.grad(uses_global) is ad.grad(uses_global)


# ---------------------------------------------------------------------------
# item 18: invalid input refused
# ---------------------------------------------------------------------------

def complex_literal(x):
    y = x * 2.0
    return np.abs(y + 1j * y)


def complex_call(x):
    return np.sum(np.abs(np.fft.fft(x)))


def complex_argument_intermediate(x, c):
    return np.sum(np.abs(x * c))


def complex_inactive(x, n):
    z = complex(n, 2.0)
    return x * z.imag + np.abs(z) * x


def returns_none(x):
    y = x * 2.0


def returns_string(x):
    return "loss"


def returns_none_on_a_path(x):
    if x > 0:
        return x * x


def returns_string_variable(x):
    s = "nothing"
    if x > 100.0:
        s = x * 2.0
    return s


async def is_async(x):
    return x * x


def is_generator(x):
    yield x * x


def test_complex_literal_on_the_gradient_path_is_refused():
    with pytest.raises(ad.UnsupportedValueError) as info:
        ad.grad(complex_literal)
    assert_located(info.value, complex_literal, "np.abs(y + 1j * y)")
    assert "1j" in info.value.message and "complex" in info.value.message


def test_complex_making_call_is_refused():
    with pytest.raises(ad.UnsupportedValueError) as info:
        ad.grad(complex_call)
    assert_located(info.value, complex_call, "np.fft.fft")
    assert "np.fft.fft" in info.value.message


def test_complex_gradient_at_run_time_is_refused():
    x, c = np.array([0.5, 1.0]), np.array([1.0 + 2.0j, 0.5j])
    before = copy.deepcopy((x, c))
    with pytest.raises(ad.UnsupportedValueError) as info:
        ad.grad(complex_argument_intermediate)(x, c)
    assert_tree_equal(before, (x, c))
    assert_located(info.value, complex_argument_intermediate, "def complex_argument")
    with pytest.raises(ad.UnsupportedValueError):
        ad.grad(complex_argument_intermediate)(0.5, 1.0 + 2.0j)
    with pytest.raises(ad.InputTypeError, match="complex") as info:
        ad.grad(complex_argument_intermediate)(np.array([1j, 2.0]), 2.0)
    assert info.value.location.line == line_of(complex_argument_intermediate, "def ")


def test_complex_values_off_the_gradient_path_are_fine():
    value_checked(ad.grad, complex_inactive, 0.7, 3.0)
    check_grad(complex_inactive, (0.7, 3.0))
    check_grad(complex_argument_intermediate, (np.array([0.5, -1.0]), np.array([2.0, 3.0])))


@pytest.mark.parametrize("f,text,what", [(returns_none, "def returns_none", "None"),
                                         (returns_string, 'return "loss"', "str")])
def test_literal_non_number_output_is_refused(f, text, what):
    for transform in (ad.grad, ad.value_and_grad, ad.vjp):
        with pytest.raises(ad.NonScalarOutputError) as info:
            transform(f)
        assert_located(info.value, f, text)
        assert what in info.value.message


@pytest.mark.parametrize("f,arg,what", [(returns_none_on_a_path, -1.0, "None"),
                                        (returns_string_variable, 1.0, "str")])
def test_non_number_output_at_run_time_is_refused(f, arg, what):
    value_checked(ad.grad, f, 200.0 if f is returns_string_variable else 1.5)
    for transform in (ad.grad, ad.value_and_grad):
        with pytest.raises(ad.NonScalarOutputError) as info:
            transform(f)(arg)
        assert_located(info.value, f, "def ")
        assert "returned" in info.value.message and what in info.value.message


def test_numbers_of_every_kind_are_scalar_outputs():
    for value in (np.float32(1.5), np.array(2.0), 3, np.int64(2)):
        def f(x, value=value):
            return x * 0.0 + value
        assert ad.grad(f)(1.0) == 0.0


@pytest.mark.parametrize("f,text,kind", [(is_async, "async def", "async function"),
                                         (is_generator, "yield", "yield")])
def test_async_and_generator_functions_are_refused(f, text, kind):
    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.grad(f)
    assert_located(info.value, f, text)
    assert kind in info.value.message


def _cell_function(i: int):
    """A function from an IPython-like cell: its source is only in linecache,
    its globals a fresh namespace that references it."""
    name = f"<s2s_ad test cell {i}>"
    text = f"def f(x):\n    return np.sin(x) * {i}.0\n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {"np": np}
    exec(compile(text, name, "exec"), ns)
    return ns["f"], name


def test_cache_lets_functions_from_cells_go_and_their_lines_with_them():
    refs, names = [], []
    held = len(linecache.cache)
    for i in range(50):
        f, name = _cell_function(i)
        assert ad.grad(f)(0.0) == pytest.approx(float(i))
        assert ad.grad(f) is ad.grad(f)         # still cached while it lives
        refs.append(weakref.ref(f))
        names.append(name)
        del f
    for name in names:
        linecache.cache.pop(name, None)         # what IPython would keep
    gc.collect()
    assert [r for r in refs if r() is not None] == []
    assert len(linecache.cache) <= held        # the generated text left too


def test_a_wrapper_copying_the_dict_gets_its_own_cache_entry():
    f, _ = _cell_function(3)
    df = ad.grad(f)

    @functools.wraps(f)
    def wrapped(x):
        return 2.0 * f(x)
    assert ad.grad(wrapped)(0.0) == pytest.approx(6.0)
    assert ad.grad(f) is df and ad.grad(f)(0.0) == pytest.approx(3.0)


def test_an_analysis_without_fixpoint_is_a_located_internal_error(monkeypatch):
    def loop_sum(x):
        s = 0.0
        for i in range(3):
            s = s + x * i
        return s
    rounds = iter(range(10**6))

    class Growing(frozenset):           # a join that never settles
        def union(self, other):
            return Growing(frozenset(self) | other | {f"n{next(rounds)}"})
    monkeypatch.setattr(pipeline.analysis, "State", Growing)
    with pytest.raises(ad.InternalError) as info:
        ad.grad(loop_sum)
    assert "no fixpoint" in info.value.message
    assert_located(info.value, loop_sum, "def loop_sum")
