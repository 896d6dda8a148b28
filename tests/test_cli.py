"""The `s2s-ad` command, run as a subprocess."""
import os
import re
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


@pytest.mark.parametrize("mode,header,comment", [
    ("jvp", "def stable_softmax_jvp(x, t, tx):", "# jvp of:"),
    ("hvp", "def dstable_softmax_jvp(x, t, tx):", "# jvp of:"),
    ("jacobian", "def stable_softmax_jvp(x, t, tx):", "# jvp of:"),
    ("hessian", "def dstable_softmax_jvp(x, t, tx):", "# jvp of:")])
def test_dump_forward_and_second_order_modes(mode, header, comment):
    """Each mode prints the generated function it runs, as valid Python."""
    out = run("dump", f"{EXAMPLE}:stable_softmax", "--mode", mode)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(header) and comment in out.stdout
    compile(out.stdout, "<dump>", "exec")
    staged = run("dump", f"{EXAMPLE}:stable_softmax", "--mode", mode, "--stage", "final")
    assert (staged.returncode == 0) == (mode == "jvp"), staged.stderr


def test_console_script_and_help():
    exe = os.path.join(os.path.dirname(sys.executable), "s2s-ad")
    if not os.path.exists(exe):
        pytest.skip("console script not installed in this environment")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "dump" in out.stdout
    for command in ("dump", "check"):
        help_text = " ".join(run(command, "--help").stdout.split())
        assert "It imports FILE.py" in help_text and "stderr" in help_text, command


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
    ("{d}/unsupported.py:f",
     "unsupported.py:3:9: s2s_ad cannot differentiate return out of a try statement"),
    ("{d}/raises.py:f", "importing the file failed: RuntimeError: boom"),
    ("no_colon", "expected FILE.py:FUNC"),
    ("{d}/noext:f", "not a Python source file"),
    ("{d}:f", "is a directory"),
    ("{d}/binary.py:f", "binary.py: a binary file, not Python source"),
    ("{d}/exits.py:f", "the module called sys.exit(3)"),
    ("{d}/square.py:f --wrt=--1", "wrt='--1': 'f' has no parameter of that name"),
    ("{d}/square.py:f --wrt=é", "wrt='é': 'f' has no parameter of that name"),
])
@pytest.mark.parametrize("command", ["dump", "check"])
def test_bad_input_is_one_line_and_exit_2(bad_files, target, expected, command):
    out = run(command, *target.format(d=bad_files).split())
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


@pytest.fixture
def model(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""\
        import numpy as np
        import s2s_ad as ad

        print("importing model")

        def softplus(x):
            return np.log1p(np.exp(x))

        @ad.adjoint(softplus)
        def softplus_rule(z, x):
            d[x] += d[z] / (1.0 + np.exp(x))        # wrong: the sign of x

        def good(x, w, b=0.5):
            print("called")
            return np.sum(np.tanh(x @ w + b) ** 2)

        def scalars(a, b):
            return a * np.sin(b) + a ** 2

        def wrong(x):
            return np.sum(softplus(x) * np.cos(x))

        def log(x):
            return np.sum(np.log(x))
        """))
    return tmp_path / "model.py"


VERDICT_OK = r"ok: rel error \d\.\de[-+]\d\d \(abs \d\.\de[-+]\d\d\) over 3 directions"


def test_check_ok_prints_one_verdict_line_and_exits_0(model):
    out = run("check", f"{model}:good", "--shape", "3,4", "--shape", "(4,)", "--wrt", "x,w")
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(VERDICT_OK + " for each of x, w\n", out.stdout), out.stdout
    assert "importing model" in out.stderr and "called" in out.stderr   # not on stdout
    again = run("check", f"{model}:good", "--shape", "3,4", "--shape", "4", "--wrt", "x,w")
    assert again.stdout == out.stdout                   # the same seed: the same inputs
    scalars = run("check", f"{model}:scalars", "--wrt", "0,b", "--seed", "5")
    assert scalars.returncode == 0, scalars.stderr
    assert re.fullmatch(VERDICT_OK + " for each of a, b\n", scalars.stdout), scalars.stdout
    drawn = run("check", f"{model}:good", "--shape", "2,3", "--shape", "3", "--shape", "()",
                "--wrt", "b")                           # a parameter with a default, drawn
    assert drawn.returncode == 0 and re.fullmatch(VERDICT_OK + "\n", drawn.stdout)


def test_check_mismatch_exits_1(model):
    out = run("check", f"{model}:wrong", "--shape", "5")
    assert out.returncode == 1, out.stderr
    assert re.fullmatch(r"MISMATCH: rel error \S+ \(abs \S+\) for 'x' in direction [123] "
                        r"of 3: s2s_ad \S+ vs finite differences \S+ \(allowed: .*\)\n",
                        out.stdout), out.stdout
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("options,expected", [
    ("good --shape 3,a --shape 4", "--shape '3,a' (for 'x'): expected sizes separated by commas"),
    ("good --shape 3x4 --shape 4", "--shape '3x4' (for 'x')"),
    ("good --shape 3", "1 --shape given for good(x, w, b): give one per positional parameter"),
    ("good --shape 1 --shape 2 --shape 3 --shape 4", "4 --shape given"),
    ("good --shape 3,4 --shape 5", "calling it on the drawn inputs (shapes 3x4, 5) failed: "
                                   "ValueError"),
    ("good", "calling it on the drawn inputs (shapes scalar, scalar) failed: TypeError"),
    ("good --shape 3,4 --shape 4 --wrt b", "--wrt 'b': good's parameter 'b' is not drawn"),
    ("log --shape 6", "cannot check: the function is not finite near the drawn inputs"),
    ("scalars --wrt c", "wrt='c': 'scalars' has no parameter of that name"),
    ("scalars --seed -1", "--seed -1: give a non-negative integer"),
])
def test_check_bad_usage_is_one_line_and_exit_2(model, options, expected):
    target, *rest = options.split()
    out = run("check", f"{model}:{target}", *rest)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()        # after the module's own output
    assert lines[-1].startswith("s2s-ad: error: ") and expected in lines[-1], out.stderr
    assert sum(line.startswith("s2s-ad") for line in lines) == 1
    assert "Traceback" not in out.stderr
