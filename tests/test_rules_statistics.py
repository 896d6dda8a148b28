"""Every statistics rule (rules/statistics.py), checked against finite
differences.

Each table row is one call; rows with two arrays differentiate both.  `cov`
and `corrcoef` take 1-D and 2-D arrays, `rowvar` both ways (with NumPy's
quirk that a single row stays a row), `bias` and `ddof`; `percentile` and
`quantile` take scalar, list and 2-D `q`, every `axis` form, `keepdims` and
every interpolation method, on slices of odd and even lengths; `nanmax` and
`nanmin` take arrays with NaNs.  Random data has no ties.  `wsum` (see
rulecheck.py) reduces each output with fixed random weights.  Every row also
runs in float32: the gradient must be float32 and agree with the float64 one.
In forward mode every row's jvp is checked against finite differences and
against its gradient; the conventions (ties, NaNs) in both modes.
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp, checked_grad
from rulecheck import check_modes_agree, forward_tests, second_order_tests, table_tests, wsum

rng = np.random.default_rng(4)
S = 0.7
V = rng.standard_normal(5)
V2 = rng.standard_normal(5)
V6 = rng.standard_normal(6)
M = rng.standard_normal((3, 4))
M2 = rng.standard_normal((2, 4))
M3 = rng.standard_normal((4, 2))
ROW = rng.standard_normal((1, 5))
W = rng.standard_normal((6, 3))
T = rng.standard_normal((2, 3, 4))
T5 = rng.standard_normal((3, 5, 2))
Q = np.array([10.0, 50.0, 87.5])
Q2 = np.array([[0.1, 0.5], [0.9, 0.33]])
MNAN = M.copy()
MNAN[0, 1] = MNAN[2, 2] = MNAN[2, 3] = np.nan
TNAN = T.copy()
TNAN[0, 1, 2] = TNAN[1, 0, 0] = np.nan
AX = (0, 2)                                 # an axis known only at run time
DDOF = 2
QM = [0.1, 0.37, 0.5, 0.8]

CASES = [
    # cov: one array
    (lambda x: wsum(np.cov(x)), [M]),
    (lambda x: wsum(np.cov(x)), [V]),
    (lambda x: wsum(np.cov(x, rowvar=False)), [W]),
    (lambda x: wsum(np.cov(x, rowvar=False)), [V]),
    (lambda x: wsum(np.cov(x, rowvar=False, bias=True)), [ROW]),
    (lambda x, y: wsum(np.cov(x, y, rowvar=False)), [V, ROW]),
    (lambda x: wsum(np.cov(x, bias=True)), [M]),
    (lambda x: wsum(np.cov(x, ddof=0)), [M]),
    (lambda x: wsum(np.cov(x, ddof=DDOF)), [W]),
    (lambda x: wsum(np.cov(x, None, False, True, 2)), [W]),
    (lambda x: wsum(np.cov(x, dtype=np.float64)), [M]),
    # cov: two arrays
    (lambda x, y: wsum(np.cov(x, y)), [V, V2]),
    (lambda x, y: wsum(np.cov(x, y)), [M, M2]),
    (lambda x, y: wsum(np.cov(x, y)), [M, V[:4]]),
    (lambda x, y: wsum(np.cov(x, y, rowvar=False)), [M3, W[:4]]),
    (lambda x, y: wsum(np.cov(x, y, rowvar=False, bias=True)), [V, V2]),
    (lambda x, y: wsum(np.cov(x, y, ddof=0)), [V, ROW]),
    (lambda x: wsum(np.cov(x, 2.0 * x)), [M]),
    # corrcoef
    (lambda x: wsum(np.corrcoef(x)), [M]),
    (lambda x: wsum(np.corrcoef(x)), [V]),
    (lambda x: wsum(np.corrcoef(x, rowvar=False)), [W]),
    (lambda x, y: wsum(np.corrcoef(x, y)), [V, V2]),
    (lambda x, y: wsum(np.corrcoef(x, y)), [M, M2]),
    (lambda x, y: wsum(np.corrcoef(x, y, rowvar=False)), [M3, W[:4]]),
    (lambda x, y: wsum(np.corrcoef(x, y, False)), [V, V2]),
    # percentile: scalar and array q, axis, keepdims
    (lambda x: wsum(np.percentile(x, 30.0)), [V]),
    (lambda x: wsum(np.percentile(x, 30)), [V6]),
    (lambda x: wsum(np.percentile(x, 0.0)), [V]),
    (lambda x: wsum(np.percentile(x, 100)), [V]),
    (lambda x: wsum(np.percentile(x, 50)), [S]),
    (lambda x: wsum(np.percentile(x, Q)), [V]),
    (lambda x: wsum(np.percentile(x, [25, 75])), [M]),
    (lambda x: wsum(np.percentile(x, 40, axis=1)), [M]),
    (lambda x: wsum(np.percentile(x, 40, axis=0)), [M]),
    (lambda x: wsum(np.percentile(x, Q, axis=-1)), [T]),
    (lambda x: wsum(np.percentile(x, Q, axis=(0, 2))), [T]),
    (lambda x: wsum(np.percentile(x, Q, axis=AX, keepdims=True)), [T]),
    (lambda x: wsum(np.percentile(x, 65, axis=1, keepdims=True)), [T5]),
    (lambda x: wsum(np.percentile(x, 65, keepdims=True)), [M]),
    (lambda x: wsum(np.percentile(x, 100.0 * Q2, 1)), [T5]),
    # quantile
    (lambda x: wsum(np.quantile(x, 0.3)), [V]),
    (lambda x: wsum(np.quantile(x, Q2)), [V6]),
    (lambda x: wsum(np.quantile(x, Q2, axis=0, keepdims=True)), [T5]),
    (lambda x: wsum(np.quantile(x, [0.2, 0.8], axis=(1, 2))), [T]),
    (lambda x: wsum(np.quantile(x, 0.5, axis=1)), [T]),
    # every interpolation method, odd and even slice lengths
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="linear")), [W.T]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="lower")), [T5]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="higher")), [W.T]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="nearest")), [T5]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="midpoint")), [W.T]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="inverted_cdf")), [T5]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="averaged_inverted_cdf")), [W.T]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="closest_observation")), [T5]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="interpolated_inverted_cdf")), [W.T]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="hazen")), [T5]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="weibull")), [W.T]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="median_unbiased")), [T5]),
    (lambda x: wsum(np.quantile(x, QM, axis=1, method="normal_unbiased")), [W.T]),
    (lambda x: wsum(np.percentile(x, Q, method="nearest")), [V6]),
    (lambda x: wsum(np.percentile(x, Q, axis=0, method="hazen", keepdims=True)), [W]),
    # nanmax and nanmin: NaNs get no gradient
    (lambda x: wsum(np.nanmax(x)), [MNAN]),
    (lambda x: wsum(np.nanmax(x, axis=1)), [MNAN]),
    (lambda x: wsum(np.nanmax(x, 0, keepdims=True)), [MNAN]),
    (lambda x: wsum(np.nanmax(x, axis=(0, 2))), [TNAN]),
    (lambda x: wsum(np.nanmin(x)), [MNAN]),
    (lambda x: wsum(np.nanmin(x, axis=0)), [MNAN]),
    (lambda x: wsum(np.nanmin(x, axis=-1, keepdims=True)), [TNAN]),
    (lambda x: wsum(np.nanmin(x, axis=AX)), [TNAN]),
    (lambda x: wsum(np.nanmax(x)), [V]),
    (lambda x: wsum(np.nanmin(x, axis=1)), [M]),
]


test_matches_finite_differences, test_float32 = table_tests(CASES)
test_forward_matches_finite_differences, test_forward_agrees_with_reverse = \
    forward_tests(CASES)
test_hvp_matches_differences_of_gradients = second_order_tests(CASES)


# -- conventions -------------------------------------------------------------
def nanmax_of(x):
    return np.nanmax(x)


def nanmin_rows(x):
    return np.sum(np.nanmin(x, axis=1) * np.array([1.0, 2.0, 3.0]))


def test_nan_extrema_split_ties_and_give_nans_nothing():
    x = np.array([1.0, np.nan, 3.0, 3.0, np.nan])
    np.testing.assert_array_equal(checked_grad(nanmax_of)(x), [0.0, 0.0, 0.5, 0.5, 0.0])
    x = np.array([[0.0, np.nan, 0.0], [np.nan, np.nan, np.nan], [2.0, -1.0, np.nan]])
    with pytest.warns(RuntimeWarning, match="All-NaN"):      # the primal's own warning
        g = checked_grad(nanmin_rows)(x)
    np.testing.assert_array_equal(g, [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]])


def test_nan_extrema_tangents_split_ties_and_ignore_nans():
    x = np.array([1.0, np.nan, 3.0, 3.0, np.nan])
    assert ad.jvp(nanmax_of)(x, np.array([1.0, 100.0, 2.0, 4.0, 100.0]))[1] == 3.0
    x = np.array([[0.0, np.nan, 0.0], [np.nan, np.nan, np.nan], [2.0, -1.0, np.nan]])
    u = np.array([[1.0, 9.0, 2.0], [9.0, 9.0, 9.0], [9.0, 5.0, 9.0]])
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        assert ad.jvp(nanmin_rows)(x, u)[1] == 1.5 + 3.0 * 5.0


def median_loss(x):
    return np.sum(np.median(x, axis=1) * np.array([1.0, -2.0]))


def percentile_loss(x):
    return np.sum(np.percentile(x, 50, axis=1) * np.array([1.0, -2.0]))


def quantile_loss(x):
    return np.sum(np.quantile(x, 0.5, axis=1) * np.array([1.0, -2.0]))


@pytest.mark.parametrize("x", [
    np.array([[3.0, 1.0, 2.0, 5.0, 4.0], [0.5, -1.0, 2.5, 0.0, 1.0]]),
    np.array([[3.0, 1.0, 2.0, 4.0], [0.5, -1.0, 2.5, 0.0]]),
    np.array([[1.0, 2.0, 2.0, 2.0, 3.0], [2.0, 2.0, 1.0, 1.0, 0.0]]),     # ties
    np.array([[1.0, 2.0, 2.0, 3.0], [2.0, 2.0, 2.0, 2.0]]),
], ids=["odd", "even", "odd-ties", "even-ties"])
def test_fiftieth_percentile_gets_the_median_gradient(x):
    expected = checked_grad(median_loss)(x)
    np.testing.assert_array_equal(checked_grad(percentile_loss)(x), expected)
    np.testing.assert_array_equal(checked_grad(quantile_loss)(x), expected)
    u = np.arange(1.0, x.size + 1).reshape(x.shape)
    tangent = ad.jvp(median_loss)(x, u)[1]
    assert tangent == np.sum(expected * u)
    assert ad.jvp(percentile_loss)(x, u)[1] == tangent
    assert ad.jvp(quantile_loss)(x, u)[1] == tangent


def corrcoef_single(x):
    return np.corrcoef(x)


def test_corrcoef_of_one_variable_is_constant():
    np.testing.assert_allclose(checked_grad(corrcoef_single)(V), np.zeros_like(V), atol=1e-14)
    assert abs(ad.jvp(corrcoef_single)(V, np.ones_like(V) + V)[1]) < 1e-14


def percentile_into(x):
    out = np.zeros(2)
    np.percentile(x, [30, 60], out=out)
    return wsum(out)


def nanmax_into(x):
    out = np.zeros(3)
    np.nanmax(x, axis=1, out=out)
    return wsum(out)


@pytest.mark.parametrize("f,x", [(percentile_into, V), (nanmax_into, MNAN)],
                         ids=["percentile", "nanmax"])
def test_out_argument(f, x):
    check_grad(f, [x])
    check_jvp(f, [x])
    check_modes_agree(f, [x], (0,))


def cov_aweights(x, w):
    return np.sum(np.cov(x, aweights=w))


def cov_fweights(x):
    return np.sum(np.cov(x, fweights=np.array([1, 2, 1, 1])))


def percentile_overwrite(x):
    return np.percentile(x, 30, overwrite_input=True)


def nanmax_where(x):
    return np.nanmax(x, where=x < 1.0, initial=-5.0)


@pytest.mark.parametrize("f,args,name", [
    (cov_aweights, [M, np.array([1.0, 0.5, 2.0, 1.0])], "aweights"),
    (cov_fweights, [M], "fweights"),
    (percentile_overwrite, [V], "overwrite_input"),
    (nanmax_where, [V], "where"),
], ids=["cov-aweights", "cov-fweights", "percentile-overwrite", "nanmax-where"])
def test_unsupported_parameters_are_rejected_at_compile_time(f, args, name):
    with pytest.raises(ad.RuleError, match=name):
        ad.grad(f)(*args)


def percentile_of_varied_q(x, q):
    return np.percentile(x, q)


def test_forward_mode_refuses_a_varied_q():
    # the gradient w.r.t. q is 0 by convention; forward mode refuses, located,
    # rather than give that silent zero
    with pytest.raises(ad.RuleError, match="'q'") as info:
        ad.jvp(percentile_of_varied_q, wrt=(0, 1))(V, 30.0, V, 1.0)
    assert info.value.location is not None
    check_jvp(percentile_of_varied_q, [V, 30.0])          # w.r.t. x only: fine


def quantile_interpolation(x):
    return np.quantile(x, 0.3, interpolation="lower")


def quantile_weights(x):
    return np.quantile(x, 0.3, method="inverted_cdf", weights=np.ones(5))


@pytest.mark.parametrize("f", [quantile_interpolation, quantile_weights])
def test_version_specific_parameters_are_rejected(f):
    # NumPy 1's deprecated `interpolation=` and NumPy 2's `weights=`: refused
    # at compile time on either version (say `method=`)
    with pytest.raises(ad.RuleError, match="interpolation|weights"):
        ad.grad(f)(V)


def quantile_at(q):
    return np.quantile(np.array([0.3, 1.2, -0.5, 2.0, 0.9]), q)


def percentile_at(q):
    return np.percentile(np.array([0.3, 1.2, -0.5, 2.0]), q * 100.0)


def norm_of_order(p):
    return np.linalg.norm(np.array([0.3, 1.2, -0.5]), ord=p)


@pytest.mark.parametrize("f, arg", [(quantile_at, 0.37), (percentile_at, 0.37),
                                    (norm_of_order, 3.0)], ids=lambda v: getattr(v, "__name__", ""))
def test_a_derivative_into_a_parameter_the_rule_does_not_differentiate_is_refused(f, arg):
    """Where only the quantile's `q` (the norm's `ord`) varies, the result
    varies with it; no rule gives that derivative, so it is refused where
    it flows, in both modes (it was a silent zero)."""
    for derive in (lambda: ad.grad(f)(arg), lambda: ad.jvp(f)(arg, 1.0)):
        with pytest.raises(ad.RuleError, match="gives no (gradient to|term for) its parameter") as info:
            derive()
        assert info.value.location.line == f.__code__.co_firstlineno + 1
