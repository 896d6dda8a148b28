"""examples/dask_logistic_regression.py on a real 2-worker LocalCluster.

Runs the example's `--quick` configuration (10^6 samples, 3 steps) in a
fresh process, as a user would, and checks that it exits 0: the loss fell
and the Dask gradient matched central finite differences.  Skipped when
dask or distributed is not installed (`pip install s2s_ad[dask]`).
"""
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / \
    "dask_logistic_regression.py"


def test_quick_run_passes_the_finite_difference_check():
    proc = subprocess.run([sys.executable, str(EXAMPLE), "--quick"], capture_output=True,
                          text=True, timeout=120, cwd=EXAMPLE.parent.parent)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "OK: gradient matches central finite differences" in out, out
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", out)]
    assert len(losses) == 3, out
    assert losses[-1] < losses[0] - 0.1, f"the loss did not fall: {losses}"
