"""How s2s_ad's compile cost grows with the program: time and peak memory.

Run from the repository root, with s2s_ad installed:

    python benchmarks/compile_scale.py            # every family, every size
    python benchmarks/compile_scale.py --quick    # smaller sizes, a few seconds
    python benchmarks/compile_scale.py --only straight,nested

Each family is a generated module of plain numeric Python, written to a
temporary directory and imported (s2s_ad reads source with `inspect`):

- straight: one function of n assignments, each reading the two before;
- nested:   n nested `for` loops, each level updating two carried values
  (once 2^n: each round of a loop re-solved its inner loops from scratch);
- helpers:  a chain of n distinct helpers, each calling the next;
- branches: n conditional expressions in a row, with a view alive across
  them (once 2^n: each branch join copied the view's relations);
- rebinds:  n `if` statements in a row, each rebinding a view of the
  argument (once 2^n: each `if` added again, as new, the relations the
  view had before it; 14 of them took 72 s);
- writes:   n writes into an array, each reading another of its rows (once
  n^3: each write re-read every row read before it, 80 of them took 6 s);
- views:    n views of the argument, each summed into a running total (once
  n^1.15: each binding scanned every view relation).

For each size it times `s2s_ad.source(s2s_ad.grad(f))` (transform, optimize,
codegen and compile of everything the gradient needs, callees included) on
a fresh module, the best of `--repeat` (3) such compiles (a shared machine's
noise only ever adds time), and measures the peak memory the same compile allocates on
another (`tracemalloc`, above what was live before; tracing slows it, so it
is not timed).  A size that raises is shown
with the error's first line.  The fitted growth exponent is the slope of
log(time) and log(memory) against log(n) over the sizes that ran; a family
whose targets hold (README, "Compile cost") prints PASS.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import s2s_ad as ad


def straight(n: int) -> str:
    lines = ["import numpy as np", "", "def f(x):", "    a0 = np.sin(x)", "    a1 = x * a0"]
    for i in range(2, n):
        op = ("a{0} = a{1} * 0.5 + np.tanh(a{2})", "a{0} = np.cos(a{1}) - a{2} * 0.25",
              "a{0} = a{1} + a{2} * x")[i % 3]
        lines.append("    " + op.format(i, i - 1, i - 2))
    lines.append(f"    return a{n - 1}")
    return "\n".join(lines) + "\n"


def nested(n: int) -> str:
    lines = ["import numpy as np", "", "def f(x):", "    s = x", "    t = x"]
    for depth in range(n):
        indent = "    " * (depth + 1)
        lines += [indent + f"for i{depth} in range(1):",
                  indent + "    s = np.sin(s) * t", indent + "    t = t + s * 0.5"]
    lines.append("    " * (n + 1) + "s = s * x")
    lines.append("    return s + t")
    return "\n".join(lines) + "\n"


def branches(n: int) -> str:
    lines = ["import numpy as np", "", "def f(x):", "    v = x[1:]", "    s = x[0]"]
    lines += ["    s = s * 1.1 if s > 0.0 else s * 0.9"] * n
    lines.append("    return s + np.sum(v)")
    return "\n".join(lines) + "\n"


def rebinds(n: int) -> str:
    lines = ["import numpy as np", "", "def f(x):", "    v = x[1:]"]
    lines += ["    if x[0] > 0.0:", "        v = v * 1.1"] * n
    lines.append("    return np.sum(v)")
    return "\n".join(lines) + "\n"


def writes(n: int) -> str:
    lines = ["import numpy as np", "", "def f(x):", "    w = x * 1.0"]
    lines += [f"    w[{i % 3}] = w[{(i + 1) % 3}] * 1.1" for i in range(n)]
    lines.append("    return np.sum(w)")
    return "\n".join(lines) + "\n"


def views(n: int) -> str:
    lines = ["import numpy as np", "", "def f(x):", "    s = 0.0"]
    for i in range(n):
        lines += [f"    v{i} = x[{i % 7}:]", f"    s = s + np.sum(v{i})"]
    lines.append("    return s")
    return "\n".join(lines) + "\n"


def helpers(n: int) -> str:
    lines = ["import numpy as np", ""]
    for i in range(n):
        body = f"h{i + 1}(x) * 0.5 + np.sin(x)" if i + 1 < n else "np.sin(x) * x"
        lines += [f"def h{i}(x):", f"    return {body}", ""]
    lines += ["def f(x):", "    return h0(x)"]
    return "\n".join(lines) + "\n"


FAMILIES = {
    # name: (source maker, sizes, quick sizes, time target (s) at the largest
    #        size, memory target (MB) at the largest size)
    "straight": (straight, [100, 300, 1000, 3000], [100, 300], 1.0, 100.0),
    "nested": (nested, [2, 4, 8, 12], [2, 4, 6], 1.0, 100.0),
    "helpers": (helpers, [10, 30, 100, 300], [10, 30], None, None),
    "branches": (branches, [10, 30, 100, 300], [10, 30], None, None),
    "rebinds": (rebinds, [10, 30, 100, 300], [10, 30], None, None),
    "writes": (writes, [10, 30, 100, 300], [10, 30], None, None),
    "views": (views, [30, 100, 300, 1000], [30, 100], None, None),
}
TARGET_SIZE = {"straight": 1000, "nested": 12, "helpers": 300, "branches": 300, "rebinds": 300,
               "writes": 300, "views": 1000}


def _load(text: str, tag: str):
    path = Path(tempfile.mkdtemp(prefix="s2s_ad_scale_")) / f"scale_{tag}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module.f


def measure(family: str, n: int, repeat: int = 3) -> tuple[float, float, str]:
    """(seconds, peak MB, error or '') for compiling `family` at `n`: the
    best time of `repeat` fresh modules, its memory traced on another
    (tracing slows it)."""
    text = FAMILIES[family][0](n)
    try:
        seconds = math.inf
        for i in range(repeat):
            f = _load(text, f"{family}_{n}_time{i}")
            start = time.perf_counter()
            ad.source(ad.grad(f))
            seconds = min(seconds, time.perf_counter() - start)
        f = _load(text, f"{family}_{n}_memory")
        tracemalloc.start()
        try:
            ad.source(ad.grad(f))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    except Exception as exc:                    # reported in the table
        return float("nan"), float("nan"), \
            f"{type(exc).__name__}: {str(exc).splitlines()[0][:60]}"
    return seconds, peak / 2**20, ""


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of log(y) against log(x)."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(max(y, 1e-9)) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=None, help="comma-separated families")
    parser.add_argument("--repeat", type=int, default=3,
                        help="compiles timed per size (the best is shown)")
    args = parser.parse_args(argv)
    chosen = args.only.split(",") if args.only else list(FAMILIES)
    print("| family | n | compile s | peak MB | |")
    print("|---|---:|---:|---:|---|")
    summary = []
    for family in chosen:
        _, sizes, quick, time_target, mem_target = FAMILIES[family]
        rows = []
        for n in quick if args.quick else sizes:
            seconds, mb, error = measure(family, n, args.repeat)
            rows.append((n, seconds, mb, error))
            print(f"| {family} | {n} | {seconds:.3f} | {mb:.1f} | {error} |", flush=True)
        ran = [r for r in rows if not r[3]]
        t_exp = slope([(n, s) for n, s, _, _ in ran]) if len(ran) > 1 else float("nan")
        m_exp = slope([(n, m) for n, _, m, _ in ran]) if len(ran) > 1 else float("nan")
        at_target = [r for r in rows if r[0] == TARGET_SIZE[family]]
        verdict = "n/a (quick)" if not at_target else "FAIL" if at_target[0][3] else "PASS"
        if at_target and not at_target[0][3]:
            _, s, mb, _ = at_target[0]
            if (time_target and s > time_target) or (mem_target and mb > mem_target):
                verdict = "FAIL"
        summary.append((family, t_exp, m_exp, verdict))
    print()
    print("| family | time exponent | memory exponent | target |")
    print("|---|---:|---:|---|")
    for family, t_exp, m_exp, verdict in summary:
        print(f"| {family} | {t_exp:.2f} | {m_exp:.2f} | {verdict} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
