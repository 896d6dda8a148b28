"""Regression tests for silently wrong values and gradients (issue 10).

Each program is one a user wrote, not one written for the compiler; each is
checked for its value and aux (against a plain call), its gradient (against
central finite differences) and unmutated inputs, through `check_grad`.
"""
import math

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_value


# -- 1. what the user receives is never a restored value --------------------
def sin_rebinds_parameter(x):
    x = np.sin(x)
    return x


def horner(x, coeffs):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def trajectory(k, traj):
    for t in range(1, len(traj)):
        traj[t] = traj[t - 1] * k
    return np.sum(traj), traj


def trajectory_in_tuple(k, traj):
    for t in range(1, len(traj)):
        traj[t] = traj[t - 1] * k
    return np.sum(traj), (traj, k)


def test_value_is_not_restored():
    assert ad.value_and_grad(sin_rebinds_parameter)(0.5)[0] == np.sin(0.5)
    check_grad(sin_rebinds_parameter, [0.5])
    check_grad(horner, [1.3, [1.0, -2.0, 3.0]])
    value, _ = ad.value_and_grad(newton_sqrt)(2.0)
    assert abs(value - math.sqrt(2.0)) < 1e-12
    check_grad(newton_sqrt, [2.0])


@pytest.mark.parametrize("f", [trajectory, trajectory_in_tuple])
def test_aux_is_not_restored(f):
    (value, aux), _ = ad.value_and_grad(f, has_aux=True)(1.5, np.ones(4))
    traj = aux[0] if isinstance(aux, tuple) else aux
    np.testing.assert_allclose(traj, [1.0, 1.5, 2.25, 3.375])
    assert value == np.sum(traj)
    check_grad(f, [1.5, np.ones(4)], has_aux=True)


# -- 2. an inactive definition kills the adjoint, in loops too ---------------
def kill_in_for(a):
    v = a
    for i in range(3):
        v = math.sin(0.25 * i)
    return a * v


def kill_in_while(a):
    v = a
    i = 0
    while i < 3:
        v = math.sin(0.25 * i)
        i += 1
    return a * v


def kill_by_stop_gradient(a):
    v = a
    for _ in range(3):
        v = ad.stop_gradient(v) * 1.0
    return a * v


def kill_in_zero_trip_loop(a, n):
    v = a
    for i in range(n):
        v = math.sin(0.25 * i)
    return a * v


@pytest.mark.parametrize("f, expected", [
    (kill_in_for, math.sin(0.5)), (kill_in_while, math.sin(0.5)),
    (kill_by_stop_gradient, 1.5)])
def test_inactive_definition_kills(f, expected):
    assert ad.grad(f)(1.5) == pytest.approx(expected)
    if f is not kill_by_stop_gradient:
        check_grad(f, [1.5])


def test_kill_in_loop_that_does_not_run():
    assert ad.grad(kill_in_zero_trip_loop)(1.5, 0) == pytest.approx(3.0)
    check_grad(kill_in_zero_trip_loop, [1.5, 2])


# -- 3. a name reused as a loop target is restored ---------------------------
def loop_target_reuses_local(x):
    k = x * 2.0
    s = np.sin(x) * k
    for k in range(2):
        s = s * x
    return s


def loop_target_reuses_parameter(x, n):
    s = x * n
    for n in range(2):
        s = s * x + n
    return s


def test_loop_target_reusing_a_name():
    check_grad(loop_target_reuses_local, [0.7])
    check_grad(loop_target_reuses_parameter, [0.7, 3.0], wrt=(0, 1))


# -- 4. assignment expressions ----------------------------------------------
def clip_by_norm(g):
    if (n := np.sqrt(np.sum(g ** 2))) > 1.0:
        g = g / n
    return np.sum(g * np.arange(3.0))


def walrus_in_and(x):
    if (y := x * 2) > 0 and y < 10:
        return y * x
    return x


def walrus_in_chain(x):
    if 0 < (m := x * 2) < 10 < m * 100:
        return m * x
    return x


def walrus_in_while(x):
    n = 0.0
    while (n := n + x) < 5.0:
        pass
    return n * x


def walrus_in_stop_gradient(x):
    t = ad.stop_gradient(w := x * x)
    return t * w


def value_of_or(x):
    y = x or 1.0
    return y * y


@pytest.mark.parametrize("f, x", [
    (clip_by_norm, np.array([1.0, 2.0, 3.0])), (clip_by_norm, np.array([0.1, 0.2, 0.3])),
    (walrus_in_and, 1.5), (walrus_in_chain, 1.5), (walrus_in_chain, 0.001),
    (walrus_in_while, 1.1), (value_of_or, 1.5)])
def test_assignment_expressions(f, x):
    check_grad(f, [x])


def test_walrus_inside_stop_gradient_binds_an_active_name():
    x = 1.2
    assert ad.grad(walrus_in_stop_gradient)(x) == pytest.approx(x * x * 2 * x)
    check_value(walrus_in_stop_gradient, [x])


# -- 5. a loop variable whose shape changes between iterations ---------------
def mlp(params, inputs):
    for W, b in params:
        outputs = inputs @ W + b
        inputs = np.tanh(outputs)
    return np.sum(outputs)


def shrinking(x):
    h = x
    for n in (4, 3, 2):
        h = np.tanh(h[:n] * 2.0)
    return np.sum(h)


def test_shape_changing_loop_variable():
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((3, 4)), rng.standard_normal(4)),
              (rng.standard_normal((4, 2)), rng.standard_normal(2))]
    check_grad(mlp, [params, rng.standard_normal((5, 3))], wrt=(0, 1))
    check_grad(shrinking, [rng.standard_normal(5)])


# -- 11. in-place updates through views --------------------------------------
def update_through_slice(x, y):
    y = y.copy()
    v = y[1:3]
    v += x[0]
    return np.sum(y * y)


def normalize_rows(Q):
    Q = Q * 1.0
    for row in Q:
        row /= row.sum()
    return np.sum(Q * Q * np.arange(Q.shape[1]))


def normalize_rows_of_parameter(Q):
    for row in Q:
        row /= row.sum()
    return np.sum(Q * Q * np.arange(Q.shape[1]))


def center_column(B, j):
    B = B * 1.0
    col = B[:, j]
    col -= col.mean()
    return np.sum(B ** 3)


def scale_through_transpose(B):
    B = B * 1.0
    B.T[0] *= 3
    return np.sum(B ** 2)


def reshaped_view(x):
    y = x * 1.0
    flat = y.reshape(-1)
    flat[0] = flat[1] * flat[2]
    return np.sum(y ** 2)


def base_updated_under_view(x):
    y = x * 2.0
    v = y[0:2]
    y[1] = y[2] * y[0]
    return np.sum(v * v) + np.sum(y)


def view_of_view(x):
    y = x * 1.0
    v = y[1:]
    w = v[:2]
    w *= 2.0
    return np.sum(y ** 2)


def row_of_1d_is_a_copy(x):
    y = x * 1.0
    for v in y:
        v += 1.0            # a scalar: y is not changed
    return np.sum(y * y)


@pytest.mark.parametrize("f, args", [
    (update_through_slice, [np.array([0.3, 0.1]), np.array([1.0, 2.0, 3.0, 4.0])]),
    (normalize_rows, [np.array([[1.0, 2.0, 3.0], [0.5, 1.5, 2.0]])]),
    (normalize_rows_of_parameter, [np.array([[1.0, 2.0, 3.0], [0.5, 1.5, 2.0]])]),
    (center_column, [np.arange(12.0).reshape(3, 4) / 7.0, 1]),
    (scale_through_transpose, [np.arange(6.0).reshape(2, 3) / 5.0]),
    (reshaped_view, [np.arange(1.0, 7.0).reshape(2, 3) / 5.0]),
    (base_updated_under_view, [np.array([0.5, 1.5, 2.5])]),
    (view_of_view, [np.array([0.5, 1.5, 2.5, 3.0])]),
    (row_of_1d_is_a_copy, [np.array([0.5, 1.5, 2.5])]),
])
def test_updates_through_views(f, args):
    check_grad(f, args, wrt=0)


def view_bound_in_branch(x, flag):
    y = x * 1.0
    if flag:
        v = y[0:2]
    else:
        v = y[1:3]
    v += 1.0
    return np.sum(y * y)


def stale_view_read(x):
    y = x * 1.0
    for i in range(2):
        v = y[i:i + 2]
    y[1] = 5.0
    return np.sum(v)


@pytest.mark.parametrize("f", [view_bound_in_branch, stale_view_read])
def test_unprovable_view_update_is_a_located_error(f):
    with pytest.raises(ad.errors.UnsupportedSyntaxError) as info:
        ad.grad(f)(np.array([0.5, 1.5, 2.5]), True) if f is view_bound_in_branch \
            else ad.grad(f)(np.array([0.5, 1.5, 2.5]))
    assert "test_soundness.py" in str(info.value)


# -- 13. a helper that mutates its argument ---------------------------------
def normalize_(v):
    v /= np.sqrt(np.sum(v ** 2))


def calls_mutating_helper(w):
    w = w * 2.0
    normalize_(w)
    return np.sum(w * np.arange(3.0))


def scale_(v, s):
    v *= s
    return np.sum(v)


def uses_mutating_helper(w):
    w = w * 2.0
    t = scale_(w, 3.0)
    return t + np.sum(w)


def bump(t, dt):
    t += dt                 # a float: rebinds, mutates nothing
    return t


def calls_rebinding_helper(x):
    return bump(x, 0.5) * x


@pytest.mark.parametrize("f", [calls_mutating_helper, uses_mutating_helper])
def test_helper_augmenting_an_array_argument_is_followed(f):
    # (a located error until session 23: now the helper's updating variant
    # runs on a copy and the new values are written back, normalize/updating.py)
    check_grad(f, [np.array([1.0, 2.0, 3.0])])
    check_value(f, [np.array([1.0, 2.0, 3.0])])


def test_helper_rebinding_a_float_parameter():
    check_grad(calls_rebinding_helper, [1.5])


# -- 14. containers through aliases ------------------------------------------
def list_item_through_alias(x):
    a = [1.0, 2.0]
    b = a
    b[0] = x * x * x
    return a[0] * 2.0


def append_through_alias(x):
    a = []
    b = a
    b.append(x * x)
    b.append(np.sin(x))
    return sum(a)


def array_in_list_updated(x):
    w = x * 1.0
    params = [w, x]
    w *= 3.0                # params[0] is w: it changes too
    return np.sum(params[0] * params[1])


@pytest.mark.parametrize("f, x", [
    (list_item_through_alias, 1.3), (append_through_alias, 1.3),
    (array_in_list_updated, np.array([0.5, 1.5]))])
def test_containers_through_aliases(f, x):
    check_grad(f, [x])


# -- 15. crashes on valid code ----------------------------------------------
def loop_over_local_dict(x):
    d = {"a": x, "b": x * 2}
    s = 0.0
    for k in d:
        s = s + d[k] * x
    return s


def test_loop_over_dict_built_in_function():
    check_grad(loop_over_local_dict, [1.3])


def view_index_changed(B, j):
    B = B * 1.0
    col = B[:, j]
    j += 1
    col -= col.mean()
    return np.sum(B ** 3)


def test_view_whose_index_changed_is_a_located_error():
    with pytest.raises(ad.errors.UnsupportedSyntaxError, match="may share memory"):
        ad.grad(view_index_changed)(np.ones((2, 3)), 0)


# -- textbook programs with in-place updates and views ----------------------
def heat(u0, kappa):
    """Explicit finite-difference heat equation (textbook FTCS scheme)."""
    u = u0.copy()
    for _ in range(20):
        lap = u[2:] - 2 * u[1:-1] + u[:-2]
        u[1:-1] += kappa * lap
    return np.sum(u ** 2)

def kalman(ys, q, r):
    """1-d Kalman filter negative log-likelihood (Harvey's textbook form)."""
    x, p, nll = 0.0, 1.0, 0.0
    for y in ys:
        p = p + q
        s = p + r
        k = p / s
        v = y - x
        nll = nll + 0.5 * (np.log(2 * np.pi * s) + v * v / s)
        x = x + k * v
        p = (1 - k) * p
    return nll

def gram_schmidt(A):
    """Modified Gram-Schmidt with in-place column updates."""
    Q = A.copy()
    n = Q.shape[1]
    for j in range(n):
        col = Q[:, j]
        col /= np.linalg.norm(col)
        for k in range(j + 1, n):
            Q[:, k] -= (col @ Q[:, k]) * col
    return np.sum(Q * np.arange(1.0, 10.0).reshape(3, 3))


def test_textbook_programs():
    rng = np.random.default_rng(1)
    check_grad(heat, [rng.random(12), 0.2], wrt=(0, 1))
    check_grad(kalman, [rng.standard_normal(15), 0.3, 0.5], wrt=(1, 2))
    check_grad(gram_schmidt, [rng.standard_normal((3, 3))])


def writes_through_moveaxis(g):
    out = np.zeros((3, 3))
    view = np.moveaxis(out, (0, 1), (-2, -1))
    i = np.arange(3)
    view[..., i, i] = g
    return np.sum(out * out)


def writes_through_swapaxes_method(g):
    out = np.zeros((2, 3))
    view = out.swapaxes(0, 1)
    view[0] = g
    return np.sum(out * out)


@pytest.mark.parametrize("f", [writes_through_moveaxis, writes_through_swapaxes_method])
def test_an_update_through_a_view_no_relation_follows_is_refused(f):
    """np.moveaxis, a.swapaxes & co. return views: an update through one
    changes the base, which s2s_ad cannot follow, so it refuses at run time
    (the gradient was silently zero)."""
    with pytest.raises(ad.UnsupportedSyntaxError, match="may share memory with `out`"):
        ad.grad(f)(np.array([1.0, 2.0]) if f is writes_through_swapaxes_method
                   else np.array([1.0, 2.0, 3.0]))


def test_a_call_that_returns_a_copy_is_not_refused():
    def f(g):
        out = np.zeros((3, 3))
        view = np.moveaxis(out, 0, 1).copy()
        view[0] = g
        return np.sum(view * view) + np.sum(out)
    check_grad(f, [np.array([1.0, 2.0, 3.0])], 0)



def updates_the_base_of_a_swapaxes_view(g):
    out = np.outer(g, g)
    view = np.swapaxes(out, 0, 1)
    out[0, 1] = 5.0 * g[0]
    return np.sum(view * view)


def updates_through_a_swapaxes_view_at_a_constant_index(g):
    out = np.outer(g, g)
    view = np.swapaxes(out, 0, 1)
    view[0, 1] = 5.0 * g[0]
    return np.sum(out * out)


@pytest.mark.parametrize("f", [updates_the_base_of_a_swapaxes_view,
                               updates_through_a_swapaxes_view_at_a_constant_index])
def test_np_swapaxes_the_function_is_a_view_too(f):
    """`np.swapaxes(x, ...)` was taken for the method `x.swapaxes` of a
    non-local `np`, and its view was not followed (a wrong gradient)."""
    with pytest.raises(ad.UnsupportedSyntaxError, match="may share memory with `out`"):
        ad.grad(f)(np.array([1.0, 2.0]))


# Every NumPy function or array method not known to make a new array may
# return its argument or a view of it: an update through the result changes
# the argument.  Each program below was a silently wrong gradient; each is
# now refused where memory is shared, and right where it is not.
def ascontiguousarray_updated(x):
    y = x * 1.0
    v = np.ascontiguousarray(y)
    v[0] = v[0] * 3.0
    return np.sum(y * x)


def asfortranarray_updated(x):
    y = x * 1.0
    v = np.asfortranarray(y)
    v[0] = v[0] * 3.0
    return np.sum(y * x)


def astype_without_copy_updated(x):
    y = x * 1.0
    v = y.astype(float, copy=False)
    v[0] = v[0] * 3.0
    return np.sum(y * x)


def conj_of_real_updated(x):
    y = x * 1.0
    v = y.conj()            # (a real array's conjugate is the array itself)
    v[0] = v[0] * 3.0
    return np.sum(y * x)


def split_piece_updated(x):
    y = x * 1.0
    v = np.split(y, 2)[1]
    v[0] = v[0] * 3.0
    return np.sum(y * x)


def array_split_piece_updated(x):
    y = x * 1.0
    v = np.array_split(y, 2)[0]
    v[0] = v[0] * 3.0
    return np.sum(y * x)


@pytest.mark.parametrize("f", [ascontiguousarray_updated, asfortranarray_updated,
                               astype_without_copy_updated, conj_of_real_updated,
                               split_piece_updated, array_split_piece_updated])
def test_an_update_through_a_numpy_result_sharing_memory_is_refused(f):
    with pytest.raises(ad.S2SADError, match="may share memory|intermediate value"):
        ad.grad(f)(np.array([1.0, 2.0, 3.0, 4.0]))


def update_through_split_unpacked(x):
    y = x * 1.0
    v, w = np.split(y, 2)
    w[0] = w[0] * 3.0
    return np.sum(y * x)


def test_an_update_through_an_unpacked_split_is_refused():
    with pytest.raises(ad.S2SADError):
        ad.grad(update_through_split_unpacked)(np.array([1.0, 2.0, 3.0, 4.0]))


def asarray_update_then_read_base(x):
    y = x * 1.0
    v = np.asarray(y)
    v[0] = v[0] * 3.0
    return np.sum(y * x) + 0.0 * np.sum(v)


def ravel_of_a_view_updated(x):
    y = x * 1.0
    v = np.asarray(y).ravel()
    v[0] = v[0] * 3.0
    return np.sum(y * x)


def fresh_results_updated(x):
    a = np.triu(np.outer(x, x)).ravel()      # new arrays: nothing to refuse
    a[0] = a[0] * 3.0
    s = np.concatenate([x, x])
    s[1] = s[1] ** 2
    return np.sum(a) + np.sum(s * s)


@pytest.mark.parametrize("f", [asarray_update_then_read_base,
                               ravel_of_a_view_updated, fresh_results_updated])
def test_updates_through_followed_views_and_fresh_results(f):
    """`np.asarray(y)` updated, `y` read after: the optimizer folded `1.0 *
    y` into an adjoint that the reverse sweep's restore then changed (it
    took `np.asarray` for a method of `np`); a view of a temporary read
    with a method was not followed at all."""
    check_grad(f, [np.array([1.0, 2.0, 3.0, 4.0])], 0)


def overwritten_by_a_library_call(x):
    import scipy.linalg
    a = np.asfortranarray(np.outer(x, x) + 3.0 * np.eye(2))
    c = ad.stop_gradient(scipy.linalg.cholesky(a, overwrite_a=True))
    return np.sum(a * x[:, None]) + np.sum(c)


def test_a_library_call_told_to_overwrite_its_argument_is_refused():
    """`overwrite_a=True` lets SciPy overwrite a Fortran-ordered array in
    place: the gradient would miss the update."""
    pytest.importorskip("scipy")
    with pytest.raises(ad.UnsupportedSyntaxError, match="may update `a` in place"):
        ad.grad(overwritten_by_a_library_call)(np.array([0.3, 0.8]))


GLOBAL_STATE = np.zeros(3)
GLOBAL_LOG: list = []


def _fill_global(x):
    GLOBAL_STATE[1] = x[1] * 3.0


def reads_global_state_a_helper_updated(x):
    _fill_global(x)
    return np.sum(GLOBAL_STATE * x)


def reads_a_global_list_after_appending(x):
    GLOBAL_LOG.append(x * 2.0)
    return np.sum(GLOBAL_LOG[-1] ** 2)


@pytest.mark.parametrize("f", [reads_global_state_a_helper_updated,
                               reads_a_global_list_after_appending])
def test_an_update_of_global_state_with_a_local_value_is_refused(f):
    """A helper writing into a global array, or `.append` to a global
    list, was run as written and not followed: the read of the global
    afterwards got no gradient (silently wrong)."""
    with pytest.raises(ad.UnsupportedSyntaxError, match="not a local variable"):
        ad.grad(f)(np.array([0.7, 1.3, -0.4]))


def logs_a_constant(x):
    GLOBAL_LOG.append("called")         # no local's value: runs as written
    return np.sum(x ** 2)


def test_an_update_of_global_state_with_no_local_value_runs():
    check_grad(logs_a_constant, [np.array([0.7, 1.3, -0.4])], 0)
