"""Comprehensions, generator expressions, and Python's `+` and `*` on lists
and tuples.

Each program is checked against central finite differences in random
directions (fdcheck: also the value against a plain call, the gradient's
structure, and the arguments left untouched).  The scoping tests pin what
Python does: a comprehension's variables are its own, a lambda made in one
reads the variable late.  Where lowering would change what the program does
(a generator kept or consumed in part, a lambda reading a comprehension's
variable, `np.array` of a generator) the error is located.
"""
import functools
import operator

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from s2s_ad.errors import NoRuleError, UnsupportedSyntaxError, UnsupportedValueError

rng = np.random.default_rng(7)
V3, V5, M43 = rng.standard_normal(3), rng.standard_normal(5), rng.standard_normal((4, 3))


# -- comprehensions and generators users write -----------------------------------
def weighted_sum(ws, xs):
    return sum(w * x for w, x in zip(ws, xs))


def even_rows(x):
    return sum(i * np.sum(r ** 2) for i, r in enumerate(x) if i % 2 == 0)


def pairs(x):
    return sum(a * b for a in x for b in x if a is not b)


def doubled_params(params):
    scaled = {k: v * 2 for k, v in params.items()}
    return sum(v ** 2 for v in scaled.values())


def layers(x):
    fns = [np.tanh, np.sin]
    hs = [fn(x) for fn in fns]
    return np.sum(np.stack(hs))


def nested(x, w):
    rows = [[x[i] * w[i, j] for j in range(3) if j != i] for i in range(3)]
    return np.sum(np.array(rows)) + max(r[0] for r in rows)


def from_array(x):
    return np.sum(np.array([np.sin(v) for v in x])) + min([v for v in x])


def in_a_branch(x, c):
    return sum([v * v for v in x]) if c > 0 else 0.0


def in_a_while_test(x):
    n = 0
    while sum([n * v for v in x]) < 5.0 and n < 10:
        n += 1
    return n * np.sum(x)


def kept_filter(x):
    return sum([x[i] for i in range(len(x)) if x[i] > 0.0])


def tuple_of_generator(x):
    t = tuple(v ** 3 for v in x)
    return t[0] + t[2] + np.prod(list(x))


def dict_by_index(x):
    d = {i: v for i, v in enumerate(x)}
    return sum(d[k] * k for k in d)


def set_of_inactive(x):
    return np.sum(x) * len({round(float(v)) for v in x})


def list_of_generator(x):
    return list(v * v for v in x)[-1] + len(sorted(int(v > 0) for v in x))


def joined_labels(x):
    label = ", ".join(f"{v:.3f}" for v in x)
    return np.sum(x) * len(label)


def lambda_in_comprehension(x):
    scale = [lambda t, k=k: t * k for k in range(3)]      # defaults: refused below
    return sum(f(x) for f in scale)


@pytest.mark.parametrize("f,args,wrt", [
    (weighted_sum, [[1.0, -2.0, 3.0], [4.0, 5.0, 6.0]], (0, 1)),
    (weighted_sum, [V3, V3 * 2], (0, 1)),
    (even_rows, [M43], 0),
    (pairs, [V3], 0),
    (doubled_params, [{"a": 1.5, "b": -2.0}], 0),
    (layers, [V3], 0),
    (nested, [V3, rng.standard_normal((3, 3))], (0, 1)),
    (from_array, [V5], 0),
    (in_a_branch, [V3, 1.0], 0),
    (in_a_branch, [V3, -1.0], 0),
    (in_a_while_test, [np.array([0.5, 0.3])], 0),
    (kept_filter, [V5], 0),
    (tuple_of_generator, [V3], 0),
    (dict_by_index, [V3], 0),
    (set_of_inactive, [V3], 0),
    (list_of_generator, [V3], 0),
    (joined_labels, [V3], 0),
], ids=lambda v: getattr(v, "__name__", None))
def test_comprehensions_match_finite_differences(f, args, wrt):
    check_grad(f, args, wrt)


def test_a_comprehension_variable_is_its_own():
    def f(x):
        v = 10.0
        ys = [v * 2 for v in x]
        return ys[0] * v + ys[-1]           # the v of the function: 10
    check_grad(f, [V3])
    assert ad.value_and_grad(f)(V3)[0] == f(V3)


def test_a_comprehension_over_a_name_it_rebinds():
    def f(x):
        x = [x * k for k in range(3)]       # the iterable is read before binding
        return sum(np.sum(v) for v in [x[0] + t for t in x])
    check_grad(f, [V3])


def test_names_bound_by_comprehensions_are_not_the_functions_locals():
    def f(x):
        return sum(np for np in [x, x])     # `np` in the generator only
    check_grad(f, [2.0])


def test_generated_code_names_the_comprehension():
    text = ad.source(ad.grad(weighted_sum, wrt=(0, 1)))
    assert "# grad of: return sum((w * x for w, x in zip(ws, xs)))" in text \
        or "# grad of: return sum(w * x for w, x in zip(ws, xs))" in text
    assert text.count("# grad of:") == 1    # one comment for its block, loop included


# -- refused, with the place and the reason ---------------------------------------
def kept_generator(x):
    g = (v for v in x)
    return sum(g)


def next_of_generator(x):
    return next(v for v in x)


def array_of_generator(x):
    return np.array(v * 2 for v in x).sum()


def late_binding_lambdas(x):
    fs = [lambda t: t * k for k in range(3)]   # Python: every lambda reads k = 2
    return sum(f(x) for f in fs)


@pytest.mark.parametrize("f,what", [
    (kept_generator, "not consumed whole"),
    (next_of_generator, "not consumed whole"),
    (array_of_generator, "passed to `np.array`"),
    (late_binding_lambdas, "reads `k`"),
    (lambda_in_comprehension, "default arguments"),
], ids=lambda v: getattr(v, "__name__", None))
def test_lowering_that_would_change_the_program_is_refused(f, what):
    with pytest.raises(UnsupportedSyntaxError, match=what) as info:
        ad.grad(f)(V3)
    assert info.value.location.filename == __file__
    assert info.value.location.line > f.__code__.co_firstlineno


def test_a_set_of_values_with_a_gradient_is_refused():
    def f(x):
        return sum({v * 2 for v in x})
    with pytest.raises(NoRuleError, match="set") as info:
        ad.grad(f)(V3)
    assert "instead, use a list" in info.value.hint


# -- `+` and `*` on lists and tuples -----------------------------------------------
def grow_by_concat(x):
    acc = []
    for i in range(3):
        acc = acc + [x * i]
    return sum(np.sum(v) for v in acc)


def grow_in_place(x):
    acc = []
    for i in range(3):
        acc += [x * i, x]
    return sum(np.sum(v ** 2) for v in acc)


def repeated(x):
    items = [x, 2 * x] * 3
    return np.sum(items[1] * items[4])


def tuples_joined(x):
    t = (x,)
    t = t + (x ** 2,) + t
    return np.sum(t[0] * t[1] * t[2])


def copy_then_join(xs):
    ys = list(xs)
    zs = ys + ys
    return zs[1] * zs[2]


def list_plus_array(x):
    return np.sum([x] + np.array([1.0, 2.0]))    # NumPy adds item by item


@pytest.mark.parametrize("f,args", [
    (grow_by_concat, [V3]), (grow_in_place, [V3]), (repeated, [V3]),
    (tuples_joined, [V3]), (copy_then_join, [[1.0, 2.0]]), (list_plus_array, [1.5]),
], ids=lambda v: getattr(v, "__name__", None))
def test_sequences_joined_and_repeated_match_finite_differences(f, args):
    check_grad(f, args)


# -- an array a joined or repeated list holds, updated in place --------------------
def updated_after_a_repetition(w):
    tmp = w * np.ones(3)
    err = [tmp] * 2
    tmp[0] = w * 3.0
    return np.mean(err) + np.sum(tmp)


def updated_through_a_view_after_a_repetition(w):
    tmp = w * np.ones(3)
    err = [np.sin(tmp), tmp] * 2
    t = tmp[:2]
    t[0] = w * 3.0
    return np.mean(err) + np.sum(tmp)


def updated_through_a_view_after_a_join(w):
    tmp = w * np.ones(3)
    err = [tmp] + [tmp * 2.0]
    t = tmp[:2]
    t[0] = w * 3.0
    return np.mean(err)


def updated_in_a_loop_after_a_repetition(w):         # fuzz seed 429 (minimized)
    tmp = w * np.ones(4)
    c = [np.sin(tmp), tmp]
    err = c * 2
    t = tmp[:2]
    for p in range(2):
        t *= 1.04
    return np.mean(err) + np.sum(tmp)


@pytest.mark.parametrize("f, line", [
    (updated_after_a_repetition, "tmp[0] = w * 3.0"),
    (updated_through_a_view_after_a_repetition, "t[0] = w * 3.0"),
    (updated_through_a_view_after_a_join, "t[0] = w * 3.0"),
    (updated_in_a_loop_after_a_repetition, "t *= 1.04"),
], ids=lambda v: getattr(v, "__name__", None))
def test_an_array_a_joined_list_holds_updated_in_place_is_refused(f, line):
    # silently wrong gradients before: the list made by `*` or `+` holds
    # the array, and nothing related it to the update
    with pytest.raises(UnsupportedSyntaxError, match="a list made by `\\+`, `\\*` or a copy") \
            as info:
        ad.grad(f)(0.77)
    assert info.value.location.filename == __file__
    assert line in info.value.location.source_line


def updated_while_a_display_holds_it_twice(w):
    tmp = w * np.ones(3)
    err = [tmp, tmp]
    t = tmp[:2]
    t[0] = w * 3.0
    return np.mean(err) + np.sum(tmp)


def test_an_array_a_display_holds_twice_updated_in_place_is_differentiated():
    check_grad(updated_while_a_display_holds_it_twice, [0.77])
    check_jvp(updated_while_a_display_holds_it_twice, [0.77])


def join_parameters(xs, ys):
    return np.sum(xs + ys)


def join_twice(xs):
    return (xs + xs)[1] * 2.0


def repeat_parameter(xs):
    return (xs * 2)[1]


@pytest.mark.parametrize("f,args", [
    (join_parameters, [[1.0, 2.0], [3.0]]),
    (join_parameters, [[1.0], [3.0]]),
    (join_twice, [[1.0, 2.0]]),
    (repeat_parameter, [[1.0, 2.0]]),
], ids=lambda v: getattr(v, "__name__", None))
def test_lists_of_unknown_type_joined_are_refused_at_run_time(f, args):
    # nothing in the function says these are lists: the adjoint of NumPy's
    # item-by-item `+` runs, sees it, and refuses (it used to be silently wrong)
    with pytest.raises(UnsupportedValueError, match="joined with `\\+` or repeated") as info:
        ad.grad(f)(*args)
    assert info.value.location.filename == __file__


def test_the_same_functions_on_arrays_are_differentiated():
    for f, args in [(join_parameters, [V3, V3 * 2]), (join_twice, [V3]),
                    (repeat_parameter, [V3])]:
        check_grad(f, [np.asarray(a) for a in args])


# -- a dict's views given to a consumer: the values it yields -----------------
def sums_a_dicts_values(x):
    d = {f"k{i}": x[i] * i for i in range(len(x))}
    return float(sum(d.values()))


def walks_sorted_items(x):
    params = {"b": x[1], "a": x[0], "c": x[2]}
    out = 0.0
    for name, val in sorted(params.items()):    # a, b, c: the order matters
        out = out * 2.0 + val * val
    return out


def lists_array_values(x):
    d = {"p": x * 1.0, "q": np.sin(x)}
    vs = list(d.values())
    return np.sum(vs[0] * vs[1])


def takes_extremes_of_values(x):
    d = {"p": x[0] * 2.0, "q": np.sin(x[1])}
    return max(d.values()) + min(d.values())


def weighs_by_keys(x):
    d = {"p": x[0], "qq": x[1]}
    return sum(len(k) * d[k] for k in d.keys())


def indexes_a_tuple_of_items(x):
    d = {"p": x * 1.0, "q": x * 2.0}
    items = tuple(d.items())
    return np.sum(items[1][1] * x)


@pytest.mark.parametrize("f", [sums_a_dicts_values, walks_sorted_items, lists_array_values,
                               takes_extremes_of_values, weighs_by_keys,
                               indexes_a_tuple_of_items], ids=lambda f: f.__name__)
def test_a_dicts_view_given_to_a_consumer_is_differentiated(f):
    x = np.array([0.3, -0.7, 1.1, 0.4])
    check_grad(f, [x])
    check_jvp(f, [x])


# -- functools.reduce: the loop it runs -----------------------------------------
def folds_a_product(x):
    return functools.reduce(lambda a, b: a * b, [x[0], x[1], x[2]])


def composes_functions(x):
    return np.sum(functools.reduce(lambda acc, f: f(acc), [np.sin, np.tanh, np.exp], x))


def adds_from_a_start(x):
    return np.sum(functools.reduce(operator.add, [x * 2.0, np.cos(x)], x))


def chains_matrix_products(x):
    a = np.outer(x, x) * 0.1
    return np.sum(functools.reduce(np.matmul, [a, a + np.eye(4), a.T]))


def _blend(a, b):
    return a * 0.5 + np.sin(b)


def folds_with_a_helper(x):
    return np.sum(functools.reduce(_blend, list(x)))


def folds_with_a_captured_weight(x):
    k = x[0]
    return functools.reduce(lambda a, b: a + k * b, [x[1], x[2], x[3]])


@pytest.mark.parametrize("f", [folds_a_product, composes_functions, adds_from_a_start,
                               chains_matrix_products, folds_with_a_helper,
                               folds_with_a_captured_weight], ids=lambda f: f.__name__)
def test_functools_reduce_is_the_loop_it_runs(f):
    x = np.array([0.3, -0.7, 1.1, 0.4])
    check_grad(f, [x])
    check_jvp(f, [x])


def test_reduce_of_nothing_without_a_start_raises_pythons_error():
    def f(x):
        return functools.reduce(lambda a, b: a * b, []) + x
    with pytest.raises(TypeError, match="empty iterable with no initial value"):
        ad.grad(f)(1.0)


# -- map and filter given to a consumer: the list comprehension they equal ---------
def _squared_cosine(v):
    return v * v + np.cos(v)


def sums_a_map(x):
    return sum(map(np.sin, x))


def lists_a_map_of_a_lambda(x):
    c = x[0]
    return np.sum(np.array(list(map(lambda v: v * c, x))) * np.arange(4.0))


def maps_over_two_sequences(x):
    return sum(map(lambda a, b: a * b, x, x[::-1]))


def takes_the_max_of_a_helper_map(x):
    return max(map(_squared_cosine, x))


def maps_the_rows_of_a_matrix(x):
    return sum(map(np.sum, np.outer(x, x)))


def sums_a_filter(x):
    return sum(filter(lambda v: v > 0.0, x))


def sums_a_filter_of_none(x):
    return sum(filter(None, x * (x > 0.0)))


def builds_a_dict_from_a_map(x):
    d = dict(map(lambda i: (i, x[i] * 2.0), range(4)))
    return d[0] * d[3]


@pytest.mark.parametrize("f", [sums_a_map, lists_a_map_of_a_lambda, maps_over_two_sequences,
                               takes_the_max_of_a_helper_map, maps_the_rows_of_a_matrix,
                               sums_a_filter, sums_a_filter_of_none, builds_a_dict_from_a_map],
                         ids=lambda f: f.__name__)
def test_map_and_filter_given_to_a_consumer_are_differentiated(f):
    # a NoRuleError for map / filter before
    x = np.array([0.3, -0.7, 1.1, 0.4])
    check_grad(f, [x])
    check_jvp(f, [x])


def test_a_map_kept_or_nested_is_refused_located():
    def kept(x):
        m = map(np.sin, x)
        return sum(m)

    def nested(x):
        return sum(map(np.exp, filter(lambda v: v < 1.0, x)))
    for f, line in ((kept, "m = map(np.sin, x)"), (nested, "filter(lambda v: v < 1.0, x)")):
        with pytest.raises(ad.S2SADError) as info:
            ad.grad(f)(V3)
        assert info.value.location.filename == __file__
        assert line in info.value.location.source_line
