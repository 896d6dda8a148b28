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
import sys
import textwrap
import weakref

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import assert_tree_equal, check_grad
from s2s_ad import api, cache, cli, optimize

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
    monkeypatch.setattr(api.analysis, "analyze", broken)
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
