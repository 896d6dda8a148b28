"""Control flow: branches, loops, jumps, checked against finite differences.

Each function runs with inputs on both sides of its branches and with trip
counts of zero, one and several.
"""
import math

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, checked_grad

rng = np.random.default_rng(7)
V = rng.standard_normal(6)


def branch(x):
    if x > 0:
        y = x * x
    else:
        y = -x * 3.0
    return y * 2.0


def elif_chain(x):
    if x < -1.0:
        y = x ** 3
    elif x < 0.5:
        y = math.sin(x)
    elif x < 2.0 and x != 1.0:
        y = math.exp(x)
    else:
        y = x
    return y + x


def nested_if(x, y):
    if x > 0:
        if y > 0:
            z = x * y
        else:
            z = x - y
    else:
        z = x + y * y
    return z * x


def assigned_in_one_branch(x):
    y = x
    if x > 1.0:
        y = y * 4.0
    return y * x


def overwrite_in_branch(x):
    y = x * 2.0
    if x > 0.0:
        y = math.sin(y)
        y = y * y
    return y + x


def ternary(x):
    y = x * x if x > 0 else -x
    z = (y if y > 1.0 else 1.0) * x
    return z + (math.exp(x) if not x < -3 or x > 5 else 0.0)


def for_range(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
        x = math.sin(x)
    return s + x


def for_range_steps(x, n):
    s = x
    for i in range(n, 0, -2):
        s = s * 0.5 + x / i
    for j in range(1, n + 1, 3):
        s = s + j * s * 0.1
    return s


def for_array_rows(w, xs):
    total = 0.0
    for row in xs:
        total = total + np.sum(np.tanh(row * w))
    return total


def for_lists_tuples(x):
    acc = x
    for c in [1.0, 2.0, 3.0]:
        acc = acc * c + x
    for c in (0.5, 0.25):
        acc = acc - c * x * x
    return acc


def enumerate_zip_reversed(a, b):
    s = 0.0
    for i, v in enumerate(a):
        s = s + i * v * v
    for u, v in zip(a, b):
        s = s + u * v
    for v in reversed(b):
        s = s * 0.5 + v
    for i, v in enumerate(b, 1):
        s = s + v / i
    return s


def enumerate_from_a_keyword_start(a):
    s = 0.0
    for i, v in enumerate(a, start=1):          # (a NoRuleError before)
        s = s + v / i
    pairs = dict(enumerate(a, start=2))
    return s + sum([i * v for i, v in enumerate(a, start=3)]) + pairs[2] * pairs[3]


def nested_loops(x, n):
    s = 0.0
    for i in range(n):
        for j in range(i):
            s = s + x ** (j + 1) / (i + 1)
    return s


def loop_carried_array(w, x):
    h = x
    for _ in range(4):
        h = np.tanh(w @ h)
    return np.sum(h * h)


def accumulate_augmented(x):
    s = 0.0
    p = 1.0
    for i in range(5):
        s += x * i
        p *= 1.0 + x / (i + 1)
    return s + p


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y * y * a


def while_counter(x):
    i = 0
    while i < 5:
        x = x * 1.1 + 0.2
        i += 1
    return x


def while_data_dependent_trips(x):
    s = x
    while s < 10.0:
        s = s * 1.7 + 0.1
    return s


def break_in_for(x):
    s = 0.0
    for v in x:
        if v > 0.8:
            break
        s = s + v * v
    return s


def continue_in_for(x):
    s = 0.0
    for v in x:
        if v < 0.0:
            continue
        s = s + math.exp(v) if isinstance(v, float) else s + np.exp(v)
    return s


def break_continue_while(x):
    s = 0.0
    i = 0
    while True:
        i += 1
        if i > 20:
            break
        if i % 3 == 0:
            continue
        s = s + x ** 2 / i
        if s > 40.0:
            break
    return s


def early_returns(x):
    if x > 2.0:
        return x * x
    if x < -2.0:
        return -x
    y = math.sin(x)
    for i in range(10):
        y = y * 1.3
        if y > 3.0:
            return y * x
    return y + x


def for_else(x):
    s = x
    for i in range(3):
        s = s * 2.0
        if s > 100.0:
            break
    else:
        s = s + x * x
    return s


def while_else(x):
    s = x
    while s < 5.0:
        s = s + x * x + 0.5
    else:
        s = s * 3.0
    return s


def dead_loop(x):
    junk = 0.0
    for i in range(50):
        junk = junk + i * 2.0
    return x * x + junk


CASES = [
    (branch, [1.3]), (branch, [-0.7]),
    (elif_chain, [-1.6]), (elif_chain, [0.2]), (elif_chain, [1.4]), (elif_chain, [2.5]),
    (nested_if, [0.9, 1.2], (0, 1)), (nested_if, [0.9, -1.2], (0, 1)),
    (nested_if, [-0.9, 1.2], (0, 1)),
    (assigned_in_one_branch, [0.5]), (assigned_in_one_branch, [1.5]),
    (overwrite_in_branch, [0.7]), (overwrite_in_branch, [-0.7]),
    (ternary, [1.4]), (ternary, [0.5]), (ternary, [-0.6]),
    (for_range, [0.4, 0]), (for_range, [0.4, 1]), (for_range, [0.4, 7]),
    (for_range_steps, [0.8, 0]), (for_range_steps, [0.8, 1]), (for_range_steps, [0.8, 9]),
    (for_array_rows, [V[:3], rng.standard_normal((4, 3))], (0, 1)),
    (for_array_rows, [V[:3], np.zeros((0, 3))], 0),
    (for_lists_tuples, [0.6]),
    (enumerate_zip_reversed, [V[:4], V[2:]], (0, 1)),
    (enumerate_from_a_keyword_start, [V[:4]]),
    (nested_loops, [0.7, 0]), (nested_loops, [0.7, 1]), (nested_loops, [0.7, 5]),
    (loop_carried_array, [rng.standard_normal((3, 3)), V[:3]], (0, 1)),
    (accumulate_augmented, [0.3]),
    (newton_sqrt, [2.0]), (newton_sqrt, [0.3]),
    (while_counter, [0.5]),
    (while_data_dependent_trips, [0.5]), (while_data_dependent_trips, [3.0]),
    (while_data_dependent_trips, [12.0]),
    (break_in_for, [np.array([0.1, 0.5, 0.9, 0.3])]), (break_in_for, [np.array([0.1, 0.2])]),
    (break_in_for, [np.array([0.95, 0.2])]),
    (continue_in_for, [np.array([0.3, -0.5, 0.9, -0.1])]),
    (break_continue_while, [0.9]), (break_continue_while, [3.0]),
    (early_returns, [2.5]), (early_returns, [-2.5]), (early_returns, [0.4]),
    (early_returns, [-0.3]),
    (for_else, [0.5]), (for_else, [20.0]),
    (while_else, [0.45]), (while_else, [7.0]),
    (dead_loop, [0.8]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].__name__}{c[1]}"[:60])
def test_matches_finite_differences(case):
    f, args, *wrt = case
    check_grad(f, args, wrt[0] if wrt else 0)


def test_loop_not_reaching_output_emits_no_reverse_loop():
    text = ad.source(ad.grad(dead_loop))
    reverse_sweep = text.split("# grad of:", 1)[1]
    assert "for " not in reverse_sweep and "tape" not in text


def test_only_needed_values_are_taped():
    """Scalar loop: x is overwritten and read by the adjoint; sin(x)'s value
    is not needed (its rule reads x), so it is not recorded."""
    text = ad.source(ad.grad(for_range))
    assert "tape.append(x)" in text
    assert "tape.append(_sin" not in text


def test_not_overwritten_values_are_not_recorded():
    def f(x, y):
        a = x * y
        b = np.sin(a)
        return b * x
    text = ad.source(ad.grad(f))
    assert "tape" not in text and "_old" not in text


def test_reverse_mirrors_structure():
    text = ad.source(ad.grad(branch))
    assert text.count("if ") >= 2             # one in each sweep
    text = ad.source(ad.grad(newton_sqrt))
    assert "for _ in range(trips):" in text   # a while loop reverses by trip count


def test_derived_functions_are_reentrant():
    g = checked_grad(nested_loops)
    first = g(0.7, 5)
    inner = [g(0.3, 4) for _ in range(3)]
    assert g(0.7, 5) == first and len(set(inner)) == 1


def test_augmented_assignment_keeps_its_initial_value():
    def f(x):
        s = 5.0
        s = 0.0
        for i in range(3):
            s += x * i
        return s
    assert checked_grad(f)(2.0) == 3.0 and "s = 0.0" in ad.source(ad.grad(f))


def swaps_in_a_loop_then_updates(a, n):
    a = a * 1.0
    c = a * 2.0
    for _ in range(int(n)):
        a, c = c, a
    a *= 2.0
    return np.sum(a * c)


@pytest.mark.parametrize("n", [0.0, 1.0, 3.0])
def test_an_adjoint_folded_to_a_value_restored_in_place_is_kept_fresh(n):
    """`dc = rt.expand(1.0 * a, ...)` was folded to `rt.expand(a, ...)`,
    which returns `a` itself, so the adjoint changed when the reverse sweep
    restored `a` in place (a silently wrong gradient; found by probing)."""
    x = np.array([0.5, -0.3, 1.2])
    check_grad(swaps_in_a_loop_then_updates, [x, n])
    assert "rt.expand(a," not in ad.source(ad.grad(swaps_in_a_loop_then_updates))
