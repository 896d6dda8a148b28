"""Derivatives of derivatives: a derived function is plain Python that s2s_ad
differentiates again through its source.

Checked against finite differences of the lower order (computed with the
lower-order derived function, itself checked elsewhere against finite
differences of the primal): grad of grad, third order, jvp of grad, hvp,
hessian, jacobian in each mode, and grad of a function that calls grad.
"""
import gc
import weakref

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from rulecheck import check_hvp

rng = np.random.default_rng(7)
X3 = rng.standard_normal(3)
X5 = np.array([0.5, -0.7, 1.2, 0.9, -1.1])
W = rng.standard_normal((3, 4))
B = rng.standard_normal(4)


def poly(x):
    return 3.0 * x ** 4 - 2.0 * x ** 3 + x * x - 5.0 * x


def loop(x):
    s = 0.0
    for i in range(4):
        s = s + x * np.sin(s + i * x)
    return s


def branchy(x):
    if x > 0.3:
        y = np.exp(x) * x
    else:
        y = np.cos(x) - x ** 3
    return y * y


def vector(x):
    return np.sum(np.tanh(x) * x[::-1]) + x[0] * x[1] ** 2


def layer(x, W, b):
    h = np.tanh(x @ W + b)
    return np.sum(h ** 2) + 0.5 * np.sum(W * W)


def calls_grad(x):
    g = ad.grad(vector)(x)
    return np.sum(g ** 2)


def vector_out(x):
    return np.tanh(x) * np.sum(x) + x[::-1] ** 2


def _fd(f, x, h=1e-5):
    """Central differences of `f` (any output) along each element of `x`,
    stacked as the Jacobian: output shape + input shape."""
    if np.ndim(x) == 0:
        return (np.asarray(f(x + h)) - np.asarray(f(x - h))) / (2 * h)
    cols = []
    for e in np.eye(np.size(x)).reshape((-1,) + np.shape(x)):
        cols.append((np.asarray(f(x + h * e), dtype=float) -
                     np.asarray(f(x - h * e), dtype=float)) / (2 * h))
    return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(f(x)) + np.shape(x))


@pytest.mark.parametrize("f,x", [(poly, 0.7), (loop, 0.4), (branchy, 0.9), (branchy, -0.4)])
def test_grad_of_grad_and_third_order_on_scalars(f, x):
    g1, g2 = ad.grad(f), ad.grad(ad.grad(f))
    assert g2(x) == pytest.approx(_fd(g1, x), rel=1e-6, abs=1e-8)
    g3 = ad.grad(g2)
    assert g3(x) == pytest.approx(_fd(g2, x), rel=1e-5, abs=1e-7)


def squared_gradient(x):
    return np.sum(ad.grad(vector)(x) ** 2)


def squared_layer_gradient(x, W, b):
    gx, gW = ad.grad(layer, wrt=(0, 1))(x, W, b)
    return np.sum(gx * gx) + np.sum(gW[0] * W[0])


@pytest.mark.parametrize("f,args", [(squared_gradient, [X3]),
                                    (squared_layer_gradient, [X3, W, B]),
                                    (calls_grad, [X3])])
def test_grad_of_a_function_that_calls_grad(f, args):
    check_grad(f, args)


@pytest.mark.parametrize("f,args", [(vector, [X3]), (layer, [X3, W, B]), (loop, [0.4])])
def test_jvp_of_grad_matches_finite_differences(f, args):
    check_jvp(ad.grad(f), args)


@pytest.mark.parametrize("f,args", [(vector, [X3]), (layer, [X3, W, B]), (branchy, [0.9])])
def test_hvp_is_the_hessian_times_v(f, args):
    v = rng.standard_normal(np.shape(args[0])) if np.ndim(args[0]) else 0.8
    got = ad.hvp(f)(*args, v)
    g = ad.grad(f)
    want = np.tensordot(_fd(lambda x: g(x, *args[1:]), args[0]), v, axes=np.ndim(v)) \
        if np.ndim(v) else _fd(lambda x: g(x, *args[1:]), args[0]) * v
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    assert np.shape(got) == np.shape(args[0])


def updates_through_a_view(h):
    # fuzz seed 40394: the gradient's reverse sweep undoes `h[::2] *= c` by
    # restoring the view in place, which restores `h` too; forward mode over
    # it did not see `h` change, and the hvp read h's stale tangent
    h = h * 1.0
    h[::2] *= np.sum(h ** 2)
    return np.sum(h)


def writes_back_a_row_it_read(w):
    a = np.outer(w, w)
    row = a[1]
    a[1, :] = row * np.sum(a)
    return np.sum(a ** 2) + np.sum(row)


def updates_an_item_of_a_list(w):
    a = w * 1.0
    items = [a, w]
    a *= np.sum(a ** 2)
    return np.sum(items[0] ** 2) + np.sum(a)


def restores_a_view_an_item_was_read_from(z):
    # fuzz seed 42019: the item `z[0]` may share z's memory, so the gradient
    # saves it only on that path; the hvp's `follow` after the restore read
    # its tangent on every path (UnboundLocalError in generated code)
    z = z * 1.0
    z /= 0.5 + z[0] ** 2
    t = z[::-1]
    t += np.std(z)
    return z @ z


def diagonal_times_a_column(e):
    # fuzz seed 44021: np.diag's adjoint helper writes through np.moveaxis's
    # view, which forward mode over it did not see (a wrong hvp); the
    # helpers now have rules of their own
    return np.sum(np.diag(e) * e[:, 1]) + np.trace(e * e, 1)


@pytest.mark.parametrize("f", [updates_through_a_view, writes_back_a_row_it_read,
                               updates_an_item_of_a_list,
                               restores_a_view_an_item_was_read_from])
def test_hvp_through_an_update_of_a_view_or_an_item(f):
    x, v = np.array([0.87, 3.52, 0.68]), np.array([0.3, -1.1, 0.6])
    jac = _fd(ad.grad(f), x)
    np.testing.assert_allclose(ad.hvp(f)(x, v), jac @ v, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ad.hessian(f)(x), jac, rtol=1e-6, atol=1e-6)


def test_hvp_with_several_arguments_takes_a_tuple():
    vx, vb = rng.standard_normal(3), rng.standard_normal(4)
    hx, hb = ad.hvp(layer, wrt=(0, 2))(X3, W, B, (vx, vb))
    g = ad.grad(layer, wrt=(0, 2))
    h = 1e-6
    plus, minus = g(X3 + h * vx, W, B + h * vb), g(X3 - h * vx, W, B - h * vb)
    np.testing.assert_allclose(hx, (plus[0] - minus[0]) / (2 * h), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hb, (plus[1] - minus[1]) / (2 * h), rtol=1e-5, atol=1e-7)


def scaled_cube(x, scale=2.0):
    return np.sum(x ** 3) * scale


def test_hvp_of_a_function_with_defaults_passes_v_as_the_tangent_keyword():
    v = rng.standard_normal(3)
    np.testing.assert_allclose(ad.hvp(scaled_cube)(X3, v), 12.0 * X3 * v)
    np.testing.assert_allclose(ad.hvp(scaled_cube)(X3, 0.5, v), 3.0 * X3 * v)
    with pytest.raises(ad.S2SADError, match="hvp needs the function's arguments"):
        ad.hvp(scaled_cube)()


@pytest.mark.parametrize("f,args", [(vector, [X3]), (layer, [X3, W, B])])
def test_hessian_matches_finite_differences_and_is_symmetric(f, args):
    H = ad.hessian(f)(*args)
    g = ad.grad(f)
    want = _fd(lambda x: g(x, *args[1:]), args[0])
    assert H.shape == np.shape(args[0]) * 2
    np.testing.assert_allclose(H, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["fwd", "rev", "auto"])
def test_jacobian_in_each_mode(mode):
    J = ad.jacobian(vector_out, mode=mode)(X3)
    assert J.shape == (3, 3)
    np.testing.assert_allclose(J, _fd(vector_out, X3), rtol=1e-6, atol=1e-8)


def test_jacobian_of_several_arguments_and_shapes():
    def f(x, W):
        return np.tanh(x @ W)
    Jx, JW = ad.jacobian(f, wrt=(0, 1))(X3, W)
    assert Jx.shape == (4, 3) and JW.shape == (4, 3, 4)
    np.testing.assert_allclose(Jx, _fd(lambda x: f(x, W), X3), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(JW, _fd(lambda w: f(X3, w), W), rtol=1e-6, atol=1e-8)
    Jr = ad.jacobian(f, wrt=(0, 1), mode="rev")(X3, W)
    np.testing.assert_allclose(Jr[1], JW, rtol=1e-10, atol=1e-12)


def test_value_and_grad_of_grad():
    value, g2 = ad.value_and_grad(ad.grad(poly))(0.7)
    assert value == pytest.approx(ad.grad(poly)(0.7))
    assert g2 == pytest.approx(_fd(ad.grad(poly), 0.7), rel=1e-6)


@pytest.mark.parametrize("make", [lambda: ad.hvp(vector), lambda: ad.hessian(vector),
                                  lambda: ad.jacobian(vector_out), lambda: ad.jvp(vector),
                                  lambda: ad.grad(ad.grad(poly))])
def test_source_works_on_each(make):
    text = ad.source(make())
    assert text.startswith("def ") and "# " in text


def test_inputs_are_not_mutated():
    x, v = X3.copy(), np.ones(3)
    ad.hvp(vector)(x, v)
    ad.hessian(vector)(x)
    ad.jacobian(vector_out)(x)
    np.testing.assert_array_equal(x, X3)
    np.testing.assert_array_equal(v, np.ones(3))


def test_the_tapes_tangent_is_updated_in_place():
    """hvp of a loop runs the gradient's tape forward with a tangent list the
    generated code owns: appended and popped in place, never copied whole
    (a copy per step made it quadratic), by the list's own methods."""
    text = ad.source(ad.hvp(loop))
    assert "ttape.append(" in text and "= ttape.pop(-1)" in text
    assert "rt.copy(ttape)" not in text and "rt.append(" not in text


def test_hvp_and_hessian_through_diagonals():
    e = np.array([[0.79, -0.0967, 0.567], [-0.4125, 0.395, 2.01], [2.29, 0.72, -0.202]])
    v = np.arange(9.0).reshape(3, 3) / 9.0
    jac = _fd(lambda x: ad.grad(diagonal_times_a_column)(x.reshape(3, 3)).ravel(), e.ravel())
    np.testing.assert_allclose(ad.hvp(diagonal_times_a_column)(e, v).ravel(),
                               jac @ v.ravel(), rtol=1e-6, atol=1e-7)


def _apply(fn, u):
    return fn(u)


def _squared_sine(v):
    return np.sin(v) ** 2


def through_a_function_value(x):
    return np.sum(_apply(_squared_sine, x))


def test_second_order_through_a_function_value_says_why_it_is_refused():
    """It named s2s_ad's `CallSite.backward` and claimed its source had
    changed since it was defined."""
    with pytest.raises(ad.NoRuleError, match="function passed as a value") as info:
        ad.hvp(through_a_function_value)(np.array([0.3, 0.8]), np.ones(2))
    assert "changed since" not in str(info.value)
    # located at the user's helper whose derived code makes the call, the
    # generated line quoted (once at that line of the generated text)
    assert info.value.location.filename == __file__
    assert info.value.location.line == _apply.__code__.co_firstlineno
    assert "fn_call.backward" in info.value.message


def keeps_a_row_it_updates(x):
    M = np.outer(x, x)
    keep = []
    for i in range(2):
        r = M[i]
        keep.append(r)
        r *= 2.0
    return np.sum(M) + keep[0][0]


def test_a_second_order_refusal_from_the_derived_codes_own_analysis_is_located_at_the_user():
    """The gradient keeps the rows it updates on its tape: differentiating
    it again is refused by the analysis of the derived code, which once
    located the error in the generated text."""
    np.testing.assert_allclose(ad.grad(keeps_a_row_it_updates)(np.array([0.3, 0.8])),
                               [5.6, 4.4], rtol=1e-12)     # 4 sum(x) + (4 x0, 0)
    with pytest.raises(ad.UnsupportedSyntaxError, match="derivative again") as info:
        ad.hvp(keeps_a_row_it_updates)(np.array([0.3, 0.8]), np.ones(2))
    assert info.value.location.filename == __file__
    assert info.value.location.line == keeps_a_row_it_updates.__code__.co_firstlineno
    assert "`r *= 2.0`" in info.value.message


def contracts_with_einsum(x, y):
    return np.sum(np.einsum("ij,jk->ik", x, y) ** 2)


def traces_with_sublists(x, y):
    return np.sum(np.einsum(x, [0, 1], y, [1, 0], [0]) ** 3) + np.einsum("ii", x @ y.T)


def three_operands(x, y):
    return np.einsum("ij,jk,ki->", x, y, np.sin(x).T @ x)


@pytest.mark.parametrize("f,wrt", [(contracts_with_einsum, (0,)),
                                   (contracts_with_einsum, (0, 1)),
                                   (traces_with_sublists, (0, 1)), (three_operands, (0, 1))])
def test_hvp_through_einsums_derivative(f, wrt):
    """einsum's adjoint is linear in the result's adjoint and in each other
    operand: its tangent is the product rule over them (once refused)."""
    x, y = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    check_hvp(f, (x, y), wrt)


def max_of_a_generator(x):
    return max(0.1 * v * np.tanh(x[3]) for v in range(4)) * x[0]


def min_of_a_list(x):
    return min([x[0] * x[1], np.sin(x[2]), x[3] ** 2]) * x[1]


def max_with_a_default(x):
    return max((x[i] * x[0] for i in range(3) if x[i] > 0.0), default=0.0) ** 2


def sorted_products(x):
    return sum(w * v for w, v in zip([1.0, 2.0, 3.0], sorted([x[0] * x[1], x[2], x[3] ** 2])))


def stacked_and_cut(x):
    y = np.hstack([x[:2] ** 2, np.vstack([x, x ** 3]).ravel()])
    return np.sum(np.split(y, 4)[1] * np.tile(x[:2], 2)[:3]) + np.sum(np.diff(x ** 3) ** 2)


@pytest.mark.parametrize("f", [max_of_a_generator, min_of_a_list, max_with_a_default,
                               sorted_products, stacked_and_cut])
def test_hvp_through_selections_and_shape_adjoints(f):
    """The adjoint helpers of builtin max/min (`rt.extremum_parts`,
    `rt.default_part`), sorted (`rt.unsorted`), stacking, splitting, tiling
    and np.diff are linear in the adjoint they propagate, the choices
    piecewise constant: hvp against differences of gradients."""
    check_hvp(f, (X5,), (0,))


def test_reverse_over_reverse_through_a_forward_only_helper_is_refused_at_the_user():
    with pytest.raises(ad.NoRuleError, match="rt.extremum_parts") as info:
        ad.grad(lambda x: ad.grad(max_of_a_generator)(x)[0])(X5)
    assert info.value.location.filename == __file__


def test_a_helper_without_a_second_order_rule_is_refused_at_the_user():
    with pytest.raises(ad.NoRuleError, match="rt.lstsq_adjoints") as info:
        ad.hvp(lambda x: np.sum(np.linalg.lstsq(x, x[:, 0], rcond=None)[0] ** 2))(
            W, np.ones_like(W))
    assert info.value.location.filename == __file__


def concatenated(x):
    return np.sum(np.concatenate([np.sin(x), x ** 2], axis=1) ** 3)


def stacked(x):
    return np.sum(np.stack([np.sin(x), x ** 2]) ** 3)


_d_concatenated, _d_stacked = ad.grad(concatenated), ad.grad(stacked)


def _dd_concatenated(x):
    return np.sum(_d_concatenated(x) * np.cos(x))


def _dd_stacked(x):
    return np.sum(_d_stacked(x) * np.cos(x))


_d3_concatenated, _d3_stacked = ad.grad(_dd_concatenated), ad.grad(_dd_stacked)


def third_concatenated(x):
    return np.sum(_d3_concatenated(x) * np.sin(x))


def third_stacked(x):
    return np.sum(_d3_stacked(x) * np.sin(x))


@pytest.mark.parametrize("f", [third_concatenated, third_stacked])
def test_third_order_through_reconcatenate_and_restack(f):
    """The second derivative's code calls `rt.reconcatenate` / `rt.restack`
    (the transposes of unconcatenate / unstack); their adjoint templates
    are those again: grad of it against central differences."""
    check_grad(f, [W])


def _alike():
    return lambda x: np.sum(np.linalg.lstsq(x, x[:, 0], rcond=None)[0] ** 2)


def test_a_second_order_refusal_is_located_after_an_alike_derivative_died():
    # two derivatives printed alike compile to equal code objects: the table
    # locating generated code was keyed by equality, so the first collected
    # took the second's entry along (found by the full suite, by chance)
    import gc
    x = np.array([[0.3, -0.5], [0.8, 1.1]])
    first = _alike()
    with pytest.raises(ad.S2SADError):
        ad.hvp(first)(x, np.ones_like(x))
    second = _alike()
    with pytest.raises(ad.S2SADError):      # (its derivative printed as the first's)
        ad.hvp(second)(x, np.ones_like(x))
    del first
    gc.collect()
    with pytest.raises(ad.S2SADError, match="lstsq_adjoints") as info:
        ad.hvp(second)(x, np.ones_like(x))
    assert info.value.location.filename == __file__, str(info.value)


# -- second order of adjoint helpers that read a primal operand -----------------
M34 = rng.standard_normal((3, 4))
M34Z = M34.copy()
M34Z[0, 1] = M34Z[2, 0] = M34Z[2, 3] = 0.0      # zeros in the products


def polyval_summed(p, x):
    """The coefficients' adjoint reads `x`; under `np.sum` its own adjoint
    is a constant (once a silent zero: the term in `x` was dropped)."""
    return np.sum(np.polyval(p, x))


def polyval_both(v):
    return np.sum(np.polyval(v[:3], v[3:]) ** 2)


def dict_display(x):
    d = {"w": x * 2.0, "b": x ** 2, "w2": np.sin(x)}
    return np.sum(d["w"] * d["b"]) + np.sum(d["w2"] ** 2)


def dict_call_and_get(x):
    d = dict([("a", x * 2.0), ("b", x ** 2)])
    return np.sum(d.get("c", x) ** 3) + np.sum(d.get("a", x) * d["b"])


def reduced(ufunc, axis):
    def f(x, axis=axis):        # (a parameter: the axis is no literal)
        return np.sum(np.sin(ufunc.reduce(x * x, axis=axis)) * np.cos(x).sum())
    return f


@pytest.mark.parametrize("f,args,wrt", [
    (polyval_summed, (X3, X5), (0, 1)), (polyval_summed, (M34[:, :2], X3[:2]), (0, 1)),
    (polyval_both, (X5,), (0,)), (dict_display, (X5,), (0,)),
    (dict_call_and_get, (X5,), (0,))])
def test_hvp_through_coefficients_and_dicts(f, args, wrt):
    check_hvp(f, args, wrt)


@pytest.mark.parametrize("ufunc", [np.add, np.subtract, np.multiply, np.maximum, np.fmin,
                                   np.logaddexp, np.logaddexp2, np.hypot])
@pytest.mark.parametrize("axis,x", [(1, M34), (0, M34Z), (None, M34Z), (-1, M34Z[:, :3])])
def test_hvp_through_the_adjoint_of_reduce(ufunc, axis, x):
    if ufunc is np.subtract and axis is None:
        pytest.skip("NumPy: subtract.reduce takes one axis")
    if ufunc is not np.multiply and x is not M34:
        x = x + 0.5         # (zeros matter to products; ties of extrema are not smooth)
    check_hvp(reduced(ufunc, axis), (x,), (0,))


def test_hvp_through_the_adjoint_of_another_reduce_is_refused_at_the_user():
    f = reduced(np.divide, 1)
    with pytest.raises(ad.NoRuleError, match=r"np\.divide\.reduce again") as info:
        ad.hvp(f)(M34 + 2.0, np.ones((3, 4)))
    assert info.value.location.filename == __file__


def test_a_linear_helper_refuses_a_varied_parameter_its_linearity_leaves_out():
    """A helper declared linear in some parameters carries no derivative
    through the others unless declared inert: a varied one is refused
    (the activity analysis once did not see it at all: a silent zero)."""
    from s2s_ad.rules import registry

    def scaled(g, c):
        return g * c
    registry.linear(scaled, "g")

    def f(x):
        return scaled(2.0, x)
    with pytest.raises(ad.RuleError, match="parameter 'c'"):
        ad.jvp(f)(X3, np.ones(3))


def det_of(x):
    return np.linalg.det(x) ** 2 + np.linalg.det(x[:2, :2] * x[0, 0])


@pytest.mark.parametrize("rank", [3, 2, 1])
def test_hvp_through_det_at_invertible_and_singular_matrices(rank):
    """det's gradient is the cofactors, differentiated again from inv(a)
    where `a` is invertible and from its SVD where it is not (once refused:
    no second-order rule)."""
    u, _, vh = np.linalg.svd(rng.standard_normal((3, 3)))
    s = np.r_[rng.uniform(0.5, 2.0, rank), np.zeros(3 - rank)]
    check_hvp(det_of, ((u * s) @ vh,), (0,))


TRAPEZOID = getattr(np, "trapezoid", None) or getattr(np, "trapz")


def integral_over_points(y, x):
    return TRAPEZOID(np.sin(y) * y, x) ** 2


def integral_with_a_step(y, h):
    return np.sum(TRAPEZOID(y ** 2, dx=h * h, axis=0) ** 2)


def integral_along_rows(y, x):
    return np.sum(TRAPEZOID(y ** 3, x * x, axis=1))


@pytest.mark.parametrize("f,args", [
    (integral_over_points, (X5, np.cumsum(np.abs(X5)))),
    (integral_with_a_step, (W, 0.7)), (integral_along_rows, (W, W[::-1] + 2.0))])
def test_hvp_through_the_trapezoid_rules_adjoint(f, args):
    """d y reads the widths, d x and d dx read y: each takes its tangent
    (once refused: no second-order rule)."""
    check_hvp(f, args, (0, 1))


def running_product(x):
    return np.sum(np.cumprod(np.sin(x), axis=0) ** 2) + np.sum(np.cumprod(x) * x.ravel())


@pytest.mark.parametrize("x", [W[:3, :3], np.array([[0.5, 0.0, 1.2], [0.0, -0.7, 0.3]])])
def test_hvp_through_cumprods_adjoint_with_and_without_zeros(x):
    check_hvp(running_product, (x,), (0,))


def masked_products(x):
    """`initial` varied, `where` leaving elements out: the product rule over
    the selected elements and `initial` (once refused at second order)."""
    return np.sum(np.multiply.reduce(np.sin(x), axis=1, initial=x[0, 1] * 2.0,
                                     where=x < 1.0) ** 2)


def masked_soft_maximum(x):
    return np.sum(np.logaddexp.reduce(x * x, axis=0, initial=x[0, 0] ** 2,
                                      where=x > -0.5) ** 2)


def masked_sums_and_extrema(x):
    return np.sum(np.sin(np.sum(x * x, axis=0, where=x > 0.1))) + \
        np.sum(np.max(x * x, axis=1, initial=0.3) ** 2) + np.mean(x ** 3, where=x > 0.0) ** 2


@pytest.mark.parametrize("f", [masked_products, masked_soft_maximum,
                               masked_sums_and_extrema])
def test_hvp_through_reductions_with_initial_and_where(f):
    check_hvp(f, (W,), (0,))


def running_and_outer(x):
    return np.sum(np.multiply.accumulate(np.sin(x), axis=1) ** 2) + \
        np.sum(np.maximum.accumulate(x * x, axis=0)) + \
        np.sum(np.multiply.outer(x[0], x[1] ** 2) ** 2) + np.sum(np.sin(np.add.outer(x[0], x[2])))


def test_hvp_through_accumulate_and_outer():
    check_hvp(running_and_outer, (W[:3, :3] + 0.1,), (0,))


def test_hvp_through_another_accumulate_is_refused_at_the_user():
    with pytest.raises(ad.NoRuleError, match=r"np\.divide\.accumulate again") as info:
        ad.hvp(lambda x: np.sum(np.divide.accumulate(x + 3.0) ** 2))(X5, np.ones(5))
    assert info.value.location.filename == __file__


def heat_stencil(u0, k):
    u = u0.copy()
    for _ in range(4):
        lap = u[:-2] - 2 * u[1:-1] + u[2:]
        u[1:-1] += k * lap
    return np.sum(u * u)


def gauss_seidel(A, b):
    x = np.zeros_like(b)
    for _ in range(3):
        for i in range(b.shape[0]):
            row = A[i]
            x[i] = (b[i] - row[:i] @ x[:i] - row[i + 1:] @ x[i + 1:]) / row[i]
    return np.sum(x ** 2)


def test_a_loop_body_does_not_re_read_its_statements_temporaries():
    """A view a statement read (`u[:-2]`) is not read again after a later
    update of its base, in a loop too: the next iteration binds it again
    before reading it (once: a guarded re-read of each, every iteration)."""
    text = ad.source(ad.grad(heat_stencil))
    assert "rt.shares(" not in text and "rt.slots(" in text, text
    check_grad(heat_stencil, [X5, 0.2], (0, 1))


def test_hvp_through_in_place_updates_in_loops():
    A, b = rng.standard_normal((4, 4)) + 4.0 * np.eye(4), np.append(X3, 0.5)
    check_grad(gauss_seidel, [A, b], (0, 1))
    check_hvp(gauss_seidel, (A, b), (0, 1))


KNOTS = np.array([0.0, 0.5, 1.3, 2.0, 2.2])


def interpolated(x, fp):
    return np.sum(np.interp(x, KNOTS, fp) ** 2 * x) + np.interp(0.7, KNOTS, fp * fp, left=0.3)


def interpolated_on_moving_knots(x, xp):
    return np.sum(np.interp(x, xp, np.sin(xp)) ** 2)


def test_hvp_through_interp_in_the_queries_and_values():
    """Within an interval the adjoints move with the slope (linear in fp)
    and the fraction t (linear in x); below and above the knots too."""
    check_hvp(interpolated, (np.array([-0.3, 0.2, 0.9, 1.7, 2.1, 2.6]), X5), (0, 1))


def test_hvp_through_interp_on_moving_knots_is_refused_at_the_user():
    with pytest.raises(ad.NoRuleError, match="np.interp again") as info:
        ad.hvp(interpolated_on_moving_knots, wrt=(0, 1))(
            np.array([0.2, 0.9]), KNOTS, (np.ones(2), np.ones(5)))
    assert info.value.location.filename == __file__


def pseudo_inverse_and_ranges(x):
    return np.sum(np.linalg.pinv(x) ** 2) + np.sum(np.geomspace(1.0 + x[0, 0] ** 2,
                                                              2.0 + x[0, 1] ** 2, 4))


def test_hvp_through_adjoints_differentiated_from_their_source():
    """pinv's and geomspace's adjoint helpers have no second-order rule:
    their source is differentiated (once refused: `np.result_type` and the
    final casts had no rule)."""
    check_hvp(pseudo_inverse_and_ranges, (W,), (0,))


def test_nested_grads_of_a_lambda_and_of_a_closure_whose_primal_is_gone():
    """`grad(grad(grad(lambda ...)))` and `hvp(make(c))`: nothing else holds
    the lambda, the closure, or the inner derived functions (once: "cannot
    read the source of None"); the primal is still not kept alive."""
    d3 = ad.grad(ad.grad(ad.grad(lambda x, b: x ** b)))
    assert d3(2.0, 3.0) == 6.0 and d3(0.5, 4.0) == 12.0

    def make(c):
        def loss(w):
            return np.sum(np.sin(w * c))
        return loss
    hv = ad.hvp(make(2.0))(X3, np.ones(3))
    np.testing.assert_allclose(hv, -4.0 * np.sin(2.0 * X3), rtol=1e-12)
    loss = make(3.0)
    alive, d2 = weakref.ref(loss), ad.grad(ad.grad(loss))
    del loss
    gc.collect()
    assert alive() is None
    np.testing.assert_allclose(d2(0.7), -9.0 * np.sin(2.1), rtol=1e-12)
