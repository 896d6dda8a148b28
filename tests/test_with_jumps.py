"""`return`, `break` and `continue` out of a `with` block, or out of a
`try` body with no `finally`: the block's manager exits on the way out, as
Python's does, and what the jump skips (the rest of the block, a `try`'s
`else`, the code after) is skipped in the derived function too.  The idiom
is NumPy's `with np.errstate(...): return np.log(x)`.  Each program is
checked against finite differences (gradient, value, jvp, hvp) at inputs
taking each path, and for its managers entered and exited in pairs."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from rulecheck import check_hvp


class Counted:
    """A user's manager that counts its entries and exits (a jump that
    skipped the exit would leave them apart)."""
    entered = exited = 0

    def __enter__(self):
        Counted.entered += 1
        return self

    def __exit__(self, *exc):
        Counted.exited += 1
        return None


def safe_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(np.log(x) * x)


def returns_on_a_branch(x):
    with np.errstate(over="ignore"):
        y = np.exp(x)
        if y[0] > 2.0:
            return np.sum(y * x)
        y = y * 3.0
    return np.sum(np.sin(y))


def breaks_out_of_a_loop(x):
    s = x * 1.0
    for i in range(5):
        with Counted():
            s = s * 1.3
            if np.sum(s) > 4.0:
                break
            s = s + np.cos(s)
    return np.sum(s ** 2)


def continues_past_the_rest(x):
    total = 0.0
    for i in range(4):
        with Counted(), np.errstate(all="ignore"):
            if i % 2 == 1:
                continue
            total = total + np.sum(x ** (i + 1))
        total = total * 0.5
    return total


def returns_from_nested_withs(x):
    s = np.sum(x)
    with Counted():
        t = s * 2.0
        with np.errstate(divide="ignore"):
            if t > 1.0:
                return np.log(t) * s
            t = t + 1.0
        s = s * t
    return s ** 2


def returns_in_a_loop_in_a_with(x):
    with Counted():
        for i in range(4):
            x = np.tanh(x) + x
            if np.sum(x) > 3.0:
                return np.sum(x * x)
    return np.sum(x)


def try_returns_and_skips_else(x):
    try:
        y = np.sqrt(x)
        if y[0] > 0.8:
            return np.sum(y)
    except FloatingPointError:
        y = x
    else:
        y = y * 3.0
    return np.sum(y * x)


def try_continues(x):
    s = 0.0
    for i in range(4):
        try:
            if i == 2:
                continue
            s = s + np.sum(x ** i)
        except ValueError:
            pass
        else:
            s = s * 1.5
    return s


PROGRAMS = [safe_log, returns_on_a_branch, breaks_out_of_a_loop, continues_past_the_rest,
            returns_from_nested_withs, returns_in_a_loop_in_a_with,
            try_returns_and_skips_else, try_continues]
# inputs taking each path (the early jump, and the way to the end)
INPUTS = [np.array([0.2, 0.45]), np.array([0.9, 1.7]), np.array([-0.3, 0.6])]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("i", range(len(INPUTS)))
def test_gradient_value_jvp_and_hvp_of_a_jump_out_of_a_block(f, i):
    x = np.abs(INPUTS[i]) if f in (safe_log, try_returns_and_skips_else) else INPUTS[i]
    before = Counted.entered
    check_grad(f, [x])
    check_jvp(f, [x])
    check_hvp(f, [x], (0,))
    assert Counted.entered == Counted.exited
    assert f not in (breaks_out_of_a_loop, continues_past_the_rest,
                     returns_from_nested_withs, returns_in_a_loop_in_a_with) \
        or Counted.entered > before


def test_each_path_is_taken():
    """(The inputs above reach both the jump and the end: else the tests
    would check one path only.)"""
    for f, early in [(returns_on_a_branch, lambda x: np.exp(x[0]) > 2.0),
                     (returns_from_nested_withs, lambda x: 2.0 * np.sum(x) > 1.0),
                     (try_returns_and_skips_else, lambda x: np.sqrt(x[0]) > 0.8)]:
        taken = {bool(early(np.abs(x) if f is try_returns_and_skips_else else x))
                 for x in INPUTS}
        assert taken == {True, False}, f.__name__


def test_the_manager_exits_before_the_derived_function_returns():
    Counted.entered = Counted.exited = 0
    ad.grad(returns_from_nested_withs)(np.array([0.9, 1.7]))
    assert Counted.entered == Counted.exited > 0


def test_the_generated_code_keeps_the_with_and_exits_it_unguarded():
    text = ad.source(ad.grad(returns_on_a_branch))
    assert text.count("with np.errstate(over='ignore'):") == 2      # forward and reverse
    assert "if not returned:" in text
