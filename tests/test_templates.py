"""The template engine (templates.py) on a rule of its own: what folds at
compile time and what is left to run time."""
import pytest

from s2s_ad import astutil, templates
from s2s_ad.errors import RuleError
from s2s_ad.naming import Namer

d = None  # `d[x]` in the templates below


def gain(z, x, k=None, flip=False):
    d[x] += d[z] * (2.0 if k is None and flip is False else x * 0.0 + k)


def guarded(z, x, k=None):
    if k is None:
        d[x] += d[z]


def contribution(rule, **keywords) -> str:
    """The text of the rule's one contribution for the call `f(x, **keywords)`
    (a string is a name, anything else a constant)."""
    tpl = templates.parse(rule)
    nodes = {key: astutil.name(v) if isinstance(v, str) else astutil.const(v)
             for key, v in keywords.items()}
    out, _ = templates.instantiate(tpl, templates.bind(tpl, [astutil.name("x")], nodes),
                                   "z", "dz", Namer())
    return astutil.unparse(out[0].value)


def test_a_conditional_expression_folds_where_its_test_is_constant():
    assert contribution(gain) == "dz * 2.0"
    assert contribution(gain, k=3.0) == "dz * (x * 0.0 + 3.0)"
    assert contribution(gain, flip=True) == "dz * (x * 0.0 + None)"


def test_constant_operands_of_a_run_time_test_are_left_out():
    assert contribution(gain, k="v") == "dz * (2.0 if v is None else x * 0.0 + v)"
    assert contribution(gain, flip="f") == "dz * (2.0 if f is False else x * 0.0 + None)"
    assert contribution(gain, k="v", flip="f") == \
        "dz * (2.0 if v is None and f is False else x * 0.0 + v)"
    assert contribution(gain, k="v", flip=True) == "dz * (x * 0.0 + v)"


def test_an_if_statement_guarding_a_contribution_must_fold():
    assert contribution(guarded) == "dz"
    with pytest.raises(RuleError, match="compile-time constant"):
        contribution(guarded, k="v")
