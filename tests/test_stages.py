"""Every compiler stage, visible and pinned: `s2s_ad.api.stages` and
`s2s-ad dump --stage NAME`, on a small corpus (straight line, branch, loop,
call, stop_gradient, in-place update, break and early return).

The expected texts live in tests/golden/stages/<case>.<stage>.txt; after an
intended change, regenerate them with

    S2S_AD_UPDATE_GOLDEN=1 pytest tests/test_stages.py

and review the diff.  Each case's gradient is also checked against finite
differences, so a pinned text is never a pinned wrong answer.
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad
from golden_files import check_golden
from s2s_ad import api, cli, pipeline

def straight(x, y):
    z = np.sin(x) * y
    return z * z + x


def branch(x):
    if x > 0.5:
        y = x * x
    else:
        y = np.cos(x)
    return y


def loop(x):
    s = 0.0
    for i in range(3):
        s = s + x * i
    return s


def helper(u):
    return np.tanh(u) * 2.0


def call(x):
    return helper(x) + x


def stable_softmax_max(x):        # shift-invariant: the shift needs no gradient
    z = x - ad.stop_gradient(np.max(x))
    return np.log(np.sum(np.exp(z))) - z[0]


def early_exit(x):
    s = 0.0
    for i in range(4):
        if s > 2.0:
            break
        s = s + x * i
    if s < 0.0:
        return -s
    return s


def inplace(x):
    out = np.zeros(3)
    out[1:] = x[:2] * 2.0
    out *= x
    return np.sum(out)


def broadcast(W, b, c):
    h = np.tanh(W + b) * c
    return np.sum(h) + np.sum(b * b)


V = np.array([0.3, -0.8, 1.1])
CORPUS = {          # name: (function, arguments)
    "straight": (straight, [0.4, 1.3]),
    "branch": (branch, [0.7]),
    "loop": (loop, [0.9]),
    "call": (call, [0.2]),
    "stop_gradient": (stable_softmax_max, [V]),
    "inplace": (inplace, [V]),
    "jumps": (early_exit, [0.9]),
    "broadcast": (broadcast, [np.array([[0.2, -0.4], [0.9, 0.1], [-0.3, 0.5]]),
                              np.array([0.7, -0.2]), 1.5]),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_stages_in_order_valid_python_and_pinned(case):
    f, args = CORPUS[case]
    check_grad(f, args)
    out = api.stages(f)
    assert list(out) == [s for s in pipeline.STAGES if s != "tangent"]
    assert out["final"] == ad.source(ad.grad(f))
    for stage, text in out.items():
        compile(text, f"<{case} {stage}>", "exec")         # valid Python, every stage
        check_golden(text, f"stages/{case}.{stage}.txt", f"stage {stage} of {case}")


def test_stop_gradient_emits_no_adjoint_code():
    reverse = api.stages(stable_softmax_max)["reverse"]
    assert "dmax" not in reverse and "d_max" not in reverse


def test_reverse_stage_is_the_textbook_sweep_and_lower_gives_shapes():
    """The reverse transform writes each contribution with the shape its
    rule gives it; only the lower stage sums a broadcast operand's down."""
    out = api.stages(broadcast, wrt=(0, 1, 2))
    assert "unbroadcast" not in out["reverse"]
    assert "rt.unbroadcast(" in out["lowered"] and "rt.unbroadcast(" in out["final"]
    check_grad(broadcast, CORPUS["broadcast"][1], wrt=(0, 1, 2))


def test_without_optimization_there_is_no_optimized_stage():
    out = api.stages(straight, optimize=False)
    assert "optimized" not in out and out["final"] == ad.source(ad.grad(straight, optimize=False))


def test_stages_refuses_an_unknown_mode():
    with pytest.raises(ad.S2SADError, match="mode='curl'"):
        api.stages(straight, mode="curl")


def test_cli_prints_one_stage_and_lists_them(capsys):
    target = f"{__file__}:straight"
    assert cli.main(["dump", target, "--stage", "anf"]) == 0
    assert capsys.readouterr().out == api.stages(straight)["anf"]
    assert cli.main(["dump", target, "--stage", "list"]) == 0
    listed = capsys.readouterr().out.split("\n")
    assert [line.split()[0] for line in listed if line] == list(pipeline.STAGES)
    assert cli.main(["dump", target, "--stage", "curl"]) == 2
    assert "no stage named 'curl'" in capsys.readouterr().err
