"""The `s2s-ad` command, run as a subprocess."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "stable_softmax.py")


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "s2s_ad", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_dump_prints_generated_source():
    out = run("dump", f"{EXAMPLE}:stable_softmax")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("def dstable_softmax(x, t):")
    assert "# grad of:" in out.stdout and "\x1b[" not in out.stdout


def test_dump_wrt_and_no_optimize():
    optimized = run("dump", f"{EXAMPLE}:stable_softmax", "--wrt", "x,t")
    plain = run("dump", f"{EXAMPLE}:stable_softmax", "--wrt", "x,t", "--no-optimize")
    assert optimized.returncode == plain.returncode == 0
    assert "return rt.like_each((dx, dt), (x, t), ('x', 't'))" in optimized.stdout
    assert len(plain.stdout) > len(optimized.stdout)


def test_console_script_and_help():
    exe = os.path.join(os.path.dirname(sys.executable), "s2s-ad")
    if not os.path.exists(exe):
        pytest.skip("console script not installed in this environment")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "dump" in out.stdout
    assert run("dump", "--help").returncode == 0


def test_rules_lists_functions():
    out = run("rules")
    assert out.returncode == 0 and "np.exp" in out.stdout and "functions with rules" in out.stdout


@pytest.fixture
def bad_files(tmp_path):
    (tmp_path / "syntax.py").write_text("def f(x):\n    return x +\n")
    (tmp_path / "unsupported.py").write_text(textwrap.dedent("""\
        def f(x):
            try:
                return x
            finally:
                pass
        """))
    (tmp_path / "raises.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "noext").write_text("def f(x):\n    return x * x\n")
    (tmp_path / "binary.py").write_bytes(b"\x7fELF\x00\x01\x02")
    (tmp_path / "exits.py").write_text("import sys\ndef f(x):\n    return x\nsys.exit(3)\n")
    (tmp_path / "square.py").write_text("def f(x):\n    return x * x\n")
    return tmp_path


@pytest.mark.parametrize("target,expected", [
    ("missing.py:f", "missing.py: no such file"),
    ("{d}/unsupported.py:g", "no function named 'g'"),
    ("{d}/syntax.py:f", "syntax.py:2: syntax error"),
    ("{d}/unsupported.py:f", "unsupported.py:2:5: s2s_ad cannot differentiate a try statement"),
    ("{d}/raises.py:f", "importing the file failed: RuntimeError: boom"),
    ("no_colon", "expected FILE.py:FUNC"),
    ("{d}/noext:f", "not a Python source file"),
    ("{d}:f", "is a directory"),
    ("{d}/binary.py:f", "binary.py: a binary file, not Python source"),
    ("{d}/exits.py:f", "the module called sys.exit(3)"),
    ("{d}/square.py:f --wrt=--1", "wrt='--1': 'f' has no parameter of that name"),
    ("{d}/square.py:f --wrt=é", "wrt='é': 'f' has no parameter of that name"),
])
def test_bad_input_is_one_line_and_exit_2(bad_files, target, expected):
    out = run("dump", *target.format(d=bad_files).split())
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_the_modules_own_output_goes_to_stderr(tmp_path):
    (tmp_path / "talks.py").write_text("print('loading')\ndef f(x):\n    return x * x\n")
    out = run("dump", f"{tmp_path}/talks.py:f")
    assert out.returncode == 0 and "loading" in out.stderr
    compile(out.stdout, "dump", "exec")         # what a redirect keeps is Python


def test_rules_into_a_closed_pipe_exits_0():
    out = subprocess.run(f"{sys.executable} -m s2s_ad rules | head -n 1", shell=True,
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() and "Traceback" not in out.stderr
    status = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m s2s_ad "
                             "rules | head -n 1 > /dev/null"], cwd=ROOT, timeout=60)
    assert status.returncode == 0


def test_output_is_byte_identical_across_runs():
    outs = {run("dump", f"{EXAMPLE}:stable_softmax").stdout for _ in range(2)}
    env = dict(os.environ, PYTHONHASHSEED="123")
    third = subprocess.run([sys.executable, "-m", "s2s_ad", "dump",
                            f"{EXAMPLE}:stable_softmax"], capture_output=True,
                           text=True, env=env, cwd=ROOT, timeout=60).stdout
    assert len(outs | {third}) == 1
