"""`with` statements whose context manager carries no gradient: the body is
differentiated, and its reverse runs under the same kind of manager
(evaluated again: `np.errstate` cannot be entered twice).  `try`
statements: the path on which the body raises nothing is differentiated,
and an exception in the body is a located error naming it.  Checked
against finite differences, for the values a plain call returns, and for
what the generated code says; what cannot be followed is a located error."""
import contextlib
import warnings

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad
from s2s_ad.errors import UnsupportedSyntaxError, UnsupportedValueError

rng = np.random.default_rng(3)
POS = rng.uniform(0.5, 2.0, 4)


def log_loss(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x) * x
    return np.sum(np.where(np.isfinite(y), y, 0.0))


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = s + np.sum(np.sin(x * i))
    return s


def bound_name(x):
    with np.errstate(over="ignore") as state:
        y = np.exp(x) * 2.0
    return np.sum(y) + 0.0 * len(state or {})


def nested_managers(x):
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        with np.errstate(invalid="ignore"):
            y = x ** 2
        z = y * x
    return np.sum(z)


class Timer:
    """A user's manager: counts how often it is entered."""
    entered = 0

    def __enter__(self):
        Timer.entered += 1
        return self

    def __exit__(self, *exc):
        return None


def timed(x):
    with Timer():
        y = np.tanh(x)
    return np.sum(y * y)


@pytest.mark.parametrize("f", [log_loss, in_a_loop, bound_name, nested_managers, timed],
                         ids=lambda f: f.__name__)
def test_with_blocks_match_finite_differences(f):
    check_grad(f, [POS.copy()])


def test_the_reverse_runs_under_the_manager_evaluated_again():
    text = ad.source(ad.grad(log_loss))
    assert text.count("with np.errstate(divide='ignore', invalid='ignore'):") == 2
    assert "rt.enter" not in text and "rt.exit" not in text
    # (under the manager: the reverse of log at 0 warns nothing)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ad.grad(log_loss)(np.array([0.0, 1.0]))


def test_a_users_manager_is_entered_once_by_the_primal_code_and_watched():
    # not known to only set state: entering it again (a timer, a file opened
    # for writing) could have effects, so the reverse sweep runs without it
    Timer.entered = 0
    ad.grad(timed)(POS)
    assert Timer.entered == 1
    assert ad.source(ad.grad(timed)).count("with rt.managed(Timer()):") == 1


def reads_a_file(x):
    with open(__file__) as fh:
        y = x * len(fh.readline())
    return np.sum(y * y)


def test_a_file_read_in_a_with_block():
    check_grad(reads_a_file, [POS])


class Swallow:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return True         # swallows any exception


def swallowed(x):
    with Swallow():
        y = x * 2.0
        y = y * [1.0][len(x)]       # IndexError, which the manager swallows
    return np.sum(y)


def test_a_manager_that_swallows_an_exception_is_refused_at_run_time():
    with pytest.raises(UnsupportedValueError, match="suppressed a IndexError") as info:
        ad.grad(swallowed)(POS)
    assert info.value.location.filename == __file__


def suppressed(x):
    with contextlib.suppress(ZeroDivisionError):
        y = x * 2.0
    return np.sum(y)


def reads_a_local(x):
    level = "ignore"
    with np.errstate(divide=level):
        y = np.log(x)
    return np.sum(y)


@pytest.mark.parametrize("f,what", [
    (suppressed, "suppresses exceptions"),
    (reads_a_local, "reads `level`"),
], ids=lambda v: getattr(v, "__name__", None))
def test_with_blocks_that_cannot_be_followed_are_located_errors(f, what):
    with pytest.raises(UnsupportedSyntaxError, match=what) as info:
        ad.grad(f)(POS)
    assert info.value.location.filename == __file__
    assert info.value.location.line > f.__code__.co_firstlineno


# -- try statements ------------------------------------------------------------------
def scaled_log(x, opts):
    try:
        y = np.log(x) * opts["scale"]
    except KeyError:
        y = np.log(x)
    else:
        y = y + 1.0
    finally:
        z = 2.0
    return np.sum(y) * z


def try_in_a_loop(x):
    total = 0.0
    for i in range(3):
        try:
            total = total + np.sum(np.sqrt(x + i))
        except FloatingPointError:
            total = total - 1.0
    return total


def test_try_follows_the_path_without_exceptions():
    check_grad(scaled_log, [POS, {"scale": 3.0}])
    check_grad(try_in_a_loop, [POS])


def test_an_exception_in_a_try_body_is_a_located_error_naming_it():
    with pytest.raises(UnsupportedSyntaxError, match="raised KeyError: 'scale'") as info:
        ad.grad(scaled_log)(POS, {})
    assert info.value.location.filename == __file__
    assert info.value.location.line == scaled_log.__code__.co_firstlineno + 1
    assert isinstance(info.value.__cause__, KeyError)
    assert scaled_log(POS, {}) == pytest.approx(2 * np.sum(np.log(POS)))   # (Python's path)


def returns_past_finally(x):
    try:
        return np.sum(np.log(x))
    finally:
        print("done")       # runs on the way out: not followed


def test_a_return_out_of_a_try_body_past_finally_is_a_located_error():
    with pytest.raises(UnsupportedSyntaxError, match="past its `finally` block") as info:
        ad.grad(returns_past_finally)(POS)
    assert info.value.location.line == returns_past_finally.__code__.co_firstlineno + 2


def returns_from_finally(x, theta):
    # fuzz seed 7337: the `else` block's return was taken, but Python runs
    # the `finally` block after it and returns theta (a wrong value and
    # gradient)
    try:
        y = np.sum(x)
    except ValueError:
        y = 0.0
    else:
        return y
    finally:
        return theta


def returns_from_else_before_finally(x):
    s = 0.0
    try:
        s = np.sum(x)
    except ValueError:
        pass
    else:
        return s
    finally:
        s = s * 2.0             # runs after the return, on a value already returned


def returns_from_else_without_finally(x):
    try:
        s = np.sum(np.log(x))
    except FloatingPointError:
        return 0.0
    else:
        return s * 2.0


@pytest.mark.parametrize("f, line", [(returns_from_finally, 11),
                                     (returns_from_else_before_finally, 7)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_a_return_that_a_finally_block_follows_is_a_located_error(f, line):
    with pytest.raises(UnsupportedSyntaxError, match="`finally` block") as info:
        ad.grad(f)(POS, 0.5) if f is returns_from_finally else ad.grad(f)(POS)
    assert info.value.location.line == f.__code__.co_firstlineno + line


def test_a_return_from_else_without_finally_differentiates():
    check_grad(returns_from_else_without_finally, [POS])
