"""Programs at sizes where the compiler used to fail: long helper chains
(once a RecursionError past 96 levels), deep loop nests (once 2^depth
compile time) branches in a row with a view alive (once 2^n: SciPy's
`logsumexp` took 207 s to be refused), and `if` statements in a row each
rebinding a view (once 2^n: 14 of them took 72 s).  Correctness only: costs are measured in
benchmarks/compile_scale.py, never timed here."""
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from s2s_ad import api
from fdcheck import check_grad


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


compile_scale = _load(pathlib.Path(__file__).parents[1] / "benchmarks" / "compile_scale.py",
                      "compile_scale")


def _module_function(text: str, tmp_path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return _load(path, name).f


def test_a_chain_of_150_helpers_differentiates(tmp_path):
    f = _module_function(compile_scale.helpers(150), tmp_path, "chain150")
    check_grad(f, [0.4])


@pytest.mark.parametrize("depth", [3, 12])
def test_deep_loop_nests_differentiate(tmp_path, depth):
    f = _module_function(compile_scale.nested(depth), tmp_path, f"nest{depth}")
    check_grad(f, [0.7])


def test_a_long_straight_line_function_differentiates(tmp_path):
    f = _module_function(compile_scale.straight(400), tmp_path, "straight400")
    check_grad(f, [np.float64(0.3)])


def test_many_branches_with_a_view_alive_differentiate(tmp_path):
    f = _module_function(compile_scale.branches(60), tmp_path, "branches60")
    check_grad(f, [np.array([0.3, -0.2, 0.5])])
    check_grad(f, [np.array([-0.3, -0.2, 0.5])])


def test_ifs_in_a_row_rebinding_a_view_differentiate(tmp_path):
    f = _module_function(compile_scale.rebinds(60), tmp_path, "rebinds60")
    check_grad(f, [np.array([0.3, -0.2, 0.5])])
    check_grad(f, [np.array([-0.3, -0.2, 0.5])])


def test_writes_reading_their_array_differentiate(tmp_path):
    f = _module_function(compile_scale.writes(150), tmp_path, "writes150")
    check_grad(f, [np.array([[0.3, -0.2], [0.5, 0.1], [-0.4, 0.2]])])


def test_writes_reading_their_array_normalize_to_code_linear_in_them(tmp_path):
    # (each write once re-read every row read before it: n^2 statements)
    sizes = {}
    for n in (20, 40):
        f = _module_function(compile_scale.writes(n), tmp_path, f"writes{n}")
        sizes[n] = len(api.stages(f)["jumps"].splitlines())
    assert sizes[40] - sizes[20] <= sizes[20]


def test_many_views_of_one_argument_differentiate(tmp_path):
    f = _module_function(compile_scale.views(120), tmp_path, "views120")
    check_grad(f, [np.array([0.3, -0.2, 0.5, 1.1, -0.7, 0.25, 0.9, 0.4])])
