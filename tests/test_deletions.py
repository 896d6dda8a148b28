"""`del name` in a differentiated function: dropped where the name is never
read while it may be unbound, refused (located) where it may be; `del` of
an item or attribute is refused.

Gradients are checked against central finite differences (fdcheck), and
value_and_grad's value against a plain call.
"""
import inspect
import re

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad

V = np.array([0.3, -1.1, 2.0])


def freed(x):
    y = np.sin(x)
    z = y * x
    del y
    return np.sum(z * x)


def freed_in_loop(x):
    s = 0.0
    for i in range(3):
        y = x * (i + 1.0)
        s = s + np.sum(np.tanh(y) * x)
        del y
    return s


def rebound(x):
    y = x * 2.0
    del y
    y = np.cos(x)
    return np.sum(y * x)


def two_names(x):
    a = np.exp(x)
    b = a * x
    del a, x
    return np.sum(b)


def deleted_in_branch_then_rebound(x, c):
    y = x * 2.0
    if c:
        del y
        y = x * x
    return np.sum(y * x)


def deleted_in_try(x):
    y = x * 3.0
    try:
        z = y * x
        del y
    except ValueError:
        z = x
    return np.sum(z)


@pytest.mark.parametrize("f,args", [
    (freed, (V,)), (freed_in_loop, (V,)), (rebound, (V,)), (two_names, (V,)),
    (deleted_in_branch_then_rebound, (V, True)), (deleted_in_branch_then_rebound, (V, False)),
    (deleted_in_try, (V,)),
])
def test_del_of_a_name_differentiates(f, args):
    check_grad(f, args)
    value, _ = ad.value_and_grad(f)(*args)
    assert value == pytest.approx(f(*args))


def read_after(x):
    y = x * 2.0
    del y
    return np.sum(y)


def read_after_branch(x, c):
    y = x * 2.0
    if c:
        del y
    return np.sum(y)


def read_next_round(x):
    s = 0.0
    y = x
    for i in range(3):
        s = s + np.sum(y)
        del y
    return s


def augmented_after(x):
    y = x * 2.0
    del y
    y += 1.0
    return np.sum(y)


def deleted_twice(x):
    y = x * 2.0
    del y
    del y
    return np.sum(x)


def read_in_handler(x):
    y = x * 2.0
    try:
        del y
        z = x * x
    except ValueError:
        z = y
    return np.sum(z)


@pytest.mark.parametrize("f,args,line", [
    (read_after, (V,), "return np.sum(y)"),
    (read_after_branch, (V, False), "return np.sum(y)"),
    (read_next_round, (V,), "s = s + np.sum(y)"),
    (augmented_after, (V,), "y += 1.0"),
    (deleted_twice, (V,), "del y"),
    (read_in_handler, (V,), "z = y"),
])
def test_read_that_may_follow_del_is_refused_where_it_is(f, args, line):
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"`y` may be read here after `del y` "
                                                        r"\(line \d+\)") as info:
        ad.grad(f)(*args)
    assert info.value.location.source_line.strip() == line
    assert info.value.location.filename == __file__


def del_item(x):
    d = {"a": x, "b": 2.0 * x}
    del d["a"]
    return np.sum(d["b"])


def del_captured(x):
    y = x * 2.0
    g = lambda: y           # noqa: E731
    del y
    return np.sum(g())


def test_del_of_an_item_is_refused():
    with pytest.raises(ad.UnsupportedSyntaxError, match="`del` of an item or attribute"):
        ad.grad(del_item)(V)


def test_del_of_a_name_a_lambda_reads_is_refused():
    with pytest.raises(ad.UnsupportedSyntaxError, match="a nested function or lambda reads `y`"):
        ad.grad(del_captured)(V)


def test_del_in_a_helper_is_checked_too():
    def outer(x):
        return read_after(x) * 2.0
    with pytest.raises(ad.UnsupportedSyntaxError, match="after `del y`"):
        ad.grad(outer)(V)


def rebound_only_in_a_comprehension(x):
    y = x * 2.0
    del y
    squares = [y * y for y in x]
    return np.sum(y) + sum(squares)


def rebound_only_in_a_nested_def(x):
    y = x * 2.0
    del y

    def helper():
        y = 1.0
        return y
    return np.sum(y) * helper()


@pytest.mark.parametrize("f,line", [
    (rebound_only_in_a_comprehension, "return np.sum(y) + sum(squares)"),
    (rebound_only_in_a_nested_def, "return np.sum(y) * helper()"),
])
def test_a_binding_in_a_nested_scope_does_not_rebind_the_name(f, line):
    # the nested scope's own `y` is neither a read nor a binding of the
    # function's: the error is at the function's own read
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"`y` may be read here after "
                                                        r"`del y`") as info:
        ad.grad(f)(V)
    assert info.value.location.source_line.strip() == line


# A nested function or lambda that binds the deleted name itself (a
# parameter, a local, a comprehension's variable) does not read the
# function's binding: the `del` stands.

def lambda_binds_its_own(x):
    t = x * 2.0
    y = t + 1.0
    del t
    g = lambda t: t * 3.0       # noqa: E731
    return np.sum(g(y) * x)


def def_binds_its_own_local(x):
    t = np.sin(x)
    y = t * x
    del t

    def g(v):
        t = v * 3.0
        return t * v
    return np.sum(g(y))


def inner_lambda_reads_the_middle_ones(x):
    t = x * 2.0
    y = t * x
    del t

    def g(v):
        t = np.cos(v)
        h = lambda w: w * t     # noqa: E731  (g's t)
        return h(v)
    return np.sum(g(y))


def nested_def_deletes_its_own(x):
    t = x * 2.0
    y = t * x
    del t

    def g(v):
        t = v * 3.0
        u = t * v
        del t
        return u
    return np.sum(g(y))


def default_read_before_the_del(x):
    t = np.exp(x)
    g = lambda v, k=t: v * k    # noqa: E731  (k is t's value here, at the def)
    del t
    return np.sum(g(x))


def comprehension_binds_its_own(x):
    t = x * 2.0
    y = t * x
    del t
    return np.sum(y) * sum([t * t for t in [1.0, 2.0]])


def lambda_in_a_comprehension_binds_its_own(x):
    t = x * 2.0
    y = np.sum(t * x)
    del t
    return sum([(lambda: t * y)() for t in [1.0, 2.0]])


@pytest.mark.parametrize("f", [
    lambda_binds_its_own, def_binds_its_own_local, inner_lambda_reads_the_middle_ones,
    nested_def_deletes_its_own, default_read_before_the_del, comprehension_binds_its_own,
    lambda_in_a_comprehension_binds_its_own,
])
def test_del_of_a_name_a_nested_scope_binds_itself_differentiates(f):
    check_grad(f, (V,))
    value, _ = ad.value_and_grad(f)(V)
    assert value == pytest.approx(f(V))


# A nested function or lambda that reads the deleted name free reads the
# function's binding whenever it is called: the `del` is refused there.

def lambda_reads_it_free(x):
    t = x * 2.0
    g = lambda v: v * t         # noqa: E731
    del t
    return np.sum(g(x))


def inner_lambda_reads_it_free(x):
    t = x * 2.0

    def g(v):
        h = lambda w: w * t     # noqa: E731  (neither h nor g binds t)
        return h(v)
    del t
    return np.sum(g(x))


def def_reads_it_and_binds_another(x):
    t = x * 2.0

    def g(t2):
        return t2 * t
    del t
    return np.sum(g(x))


def default_lambda_reads_it_free(x):
    t = x * 2.0
    g = lambda v, k=(lambda: t): v * k()    # noqa: E731
    del t
    return np.sum(g(x))


def lambda_in_a_comprehension_reads_it_free(x):
    t = x * 2.0
    del t
    return sum([(lambda: t * v)() for v in [1.0, 2.0]])


def _line_of(f, text: str) -> int:
    """The file line of the first line of `f` that holds `text`."""
    lines, first = inspect.getsourcelines(f)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("f,reader", [
    (lambda_reads_it_free, "lambda v: v * t"),
    (inner_lambda_reads_it_free, "lambda w: w * t"),
    (def_reads_it_and_binds_another, "return t2 * t"),
    (default_lambda_reads_it_free, "k=(lambda: t)"),
    (lambda_in_a_comprehension_reads_it_free, "(lambda: t * v)()"),
])
def test_del_of_a_name_a_nested_function_reads_free_is_refused(f, reader):
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"a nested function or lambda reads "
                                                        r"`t` \(line (\d+)\)") as info:
        ad.grad(f)(V)
    assert info.value.location.source_line.strip() == "del t"
    assert info.value.location.filename == __file__
    line = re.search(r"\(line (\d+)\)", str(info.value)).group(1)
    assert int(line) == _line_of(f, reader)


def default_read_after_the_del(x):
    t = x * 2.0
    del t
    g = lambda v, k=t: v * k    # noqa: E731
    return np.sum(g(x))


def comprehension_reads_it_free(x):
    t = x * 2.0
    del t
    return sum([t * v for v in [1.0, 2.0]])


def comprehension_iterates_over_it(x):
    t = [x, 2.0 * x]
    del t
    return sum([t * t for t in t])      # the first iterable is the function's t


@pytest.mark.parametrize("f,line", [
    (default_read_after_the_del, "g = lambda v, k=t: v * k    # noqa: E731"),
    (comprehension_reads_it_free, "return sum([t * v for v in [1.0, 2.0]])"),
    (comprehension_iterates_over_it, "return sum([t * t for t in t])      "
                                     "# the first iterable is the function's t"),
])
def test_a_default_or_comprehension_reads_where_it_stands(f, line):
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"`t` may be read here after "
                                                        r"`del t`") as info:
        ad.grad(f)(V)
    assert info.value.location.source_line.strip() == line


def nested_def_reads_its_own_after_del(x):
    def g(v):
        t = v * 3.0
        del t
        return np.sum(t * v)
    return g(x)


def test_a_nested_defs_own_del_is_checked_where_the_user_wrote_it():
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"`t` may be read here after "
                                                        r"`del t`") as info:
        ad.grad(nested_def_reads_its_own_after_del)(V)
    assert info.value.location.filename == __file__
    assert info.value.location.source_line.strip() == "return np.sum(t * v)"
