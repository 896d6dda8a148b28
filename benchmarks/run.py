"""s2s_ad benchmarks: generated gradients against hand-written NumPy.

Run (from the repository root, with s2s_ad installed):

    python benchmarks/run.py            # full run, about 15 s
    python benchmarks/run.py --quick    # fewer, shorter batches, a few seconds
    python benchmarks/run.py --only B1,B5

What it does, all in one process, float64, one BLAS thread:

1. For every workload in `workloads.py`, checks the hand-written gradient
   against central finite differences, then checks that s2s_ad's gradient
   equals it (`np.allclose`).  A mismatch aborts with exit status 1.
   A workload s2s_ad rejects with an `S2SADError` is reported as
   "unsupported: <first line of the error>"; the script still exits 0.
   If s2s_ad's gradient raises anything else, or does not return within
   3 s (a loop that never ends would grow its tape until memory runs out),
   the row reads "FAILED: ..." and the script exits 1 after the table.
2. Times the primal, the s2s_ad gradient and the hand-written gradient,
   timeit-style: a batch repeats the call until it takes >= 20 ms, the three
   functions' batches are interleaved, and each time is the median over 15
   batches (`--quick`: >= 5 ms, 5 batches).
3. Times the first `ad.grad(f, wrt=...)` plus one call on a brand-new
   function object (a cache miss: transform + compile + run), median over a
   few fresh objects, and a cached `ad.grad(f, wrt=...)` (a cache hit).

It prints a Markdown table:

    ratio_s2s = s2s grad / primal      ratio_hand = hand grad / primal
    quotient  = ratio_s2s / ratio_hand (PASS when <= the workload's target)

plus the first-compile (target <= 20 ms) and cached-lookup (target <= 5 us)
columns, each marked MISS when over its target.
"""
from __future__ import annotations

import os
import sys

# One BLAS thread: must be set before NumPy is first imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
# "first grad+call" measures compilation: the on-disk cache would turn it into
# a load (benchmarks/first_call.py measures that).
os.environ["S2S_AD_CACHE_DIR"] = ""
if "numpy" in sys.modules:          # pragma: no cover - only when imported late
    print("warning: NumPy was imported before run.py set the BLAS thread count",
          file=sys.stderr)

import argparse                      # noqa: E402
import contextlib                    # noqa: E402
import gc                            # noqa: E402
import inspect                       # noqa: E402
import platform                      # noqa: E402
import signal                        # noqa: E402
import statistics                    # noqa: E402
import threading                     # noqa: E402
import time                          # noqa: E402
import traceback                     # noqa: E402
import types                         # noqa: E402
from dataclasses import dataclass, field   # noqa: E402

import numpy as np                   # noqa: E402

import s2s_ad as ad                  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as wl               # noqa: E402

COMPILE_TARGET_S = 20e-3
CACHED_TARGET_S = 5e-6
CALL_DEADLINE_S = 3.0               # one gradient call, compile included


@dataclass(frozen=True)
class Settings:
    min_batch_s: float      # a batch runs at least this long
    batches: int            # median over this many batches
    fresh: int              # fresh function objects for the first-compile time


FULL = Settings(min_batch_s=20e-3, batches=15, fresh=7)
QUICK = Settings(min_batch_s=5e-3, batches=5, fresh=3)


@dataclass
class Row:
    work: wl.Workload
    grad: object = None             # the cached s2s_ad gradient, or None
    unsupported: str = ""          # first line of an S2SADError
    failed: str = ""               # any other failure of s2s_ad's gradient
    times: dict = field(default_factory=dict)   # name -> seconds per call


# --------------------------------------------------------------------------
# timing

def _batch(fn, args, kwargs, number: int) -> float:
    """Seconds for `number` calls of fn(*args, **kwargs), GC off."""
    loop = range(number)
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in loop:
            fn(*args, **kwargs)
        return time.perf_counter() - t0
    finally:
        if enabled:
            gc.enable()


def _calibrate(fn, args, kwargs, min_batch_s: float) -> int:
    """The number of calls that makes one batch last >= `min_batch_s`."""
    number = 1
    while True:
        elapsed = _batch(fn, args, kwargs, number)
        if elapsed >= min_batch_s:
            return number
        if elapsed <= 0:
            number *= 10
        else:
            number = max(number + 1, int(number * 1.2 * min_batch_s / elapsed))


def time_interleaved(calls: dict, settings: Settings) -> dict:
    """Median seconds per call of each `name -> (fn, args, kwargs)`.

    Batches of the different functions alternate, so slow drift of the
    machine affects all of them alike and their ratios stay meaningful.
    """
    numbers = {name: _calibrate(*call, settings.min_batch_s)
               for name, call in calls.items()}
    samples = {name: [] for name in calls}
    for _ in range(settings.batches):
        for name, (fn, args, kwargs) in calls.items():
            n = numbers[name]
            samples[name].append(_batch(fn, args, kwargs, n) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


def fresh_function(func):
    """A new function object with `func`'s code: a cache miss for ad.grad."""
    new = types.FunctionType(func.__code__, func.__globals__, func.__name__,
                             func.__defaults__, func.__closure__)
    new.__kwdefaults__ = func.__kwdefaults__
    new.__qualname__ = func.__qualname__
    new.__module__ = func.__module__
    return new


def time_first_grad(row: Row, args, settings: Settings) -> float:
    """Median seconds of `ad.grad(fresh_f, wrt=...)` plus one call."""
    seen = [row.grad]
    samples = []
    for _ in range(settings.fresh):
        func = fresh_function(row.work.primal)
        gc.collect()
        t0 = time.perf_counter()
        g = ad.grad(func, wrt=row.work.wrt)
        g(*args)
        samples.append(time.perf_counter() - t0)
        if any(g is old for old in seen):
            raise SystemExit(f"{row.work.key}: ad.grad on a fresh function object "
                             "was a cache hit; the first-compile time would be wrong")
        seen.append(g)
    return statistics.median(samples)


# --------------------------------------------------------------------------
# correctness

def _components(g, n: int) -> list:
    return list(g) if n > 1 else [g]


def _wrt_indices(work: wl.Workload) -> list[int]:
    params = list(inspect.signature(work.primal).parameters)
    items = work.wrt if isinstance(work.wrt, tuple) else (work.wrt,)
    return [params.index(i) if isinstance(i, str) else i for i in items]


def _abort(key: str, what: str) -> None:
    raise SystemExit(f"\nABORT {key}: {what}\n"
                     "The benchmark compares only correct gradients; fix the "
                     "gradient (or the workload) and run again.")


def check_hand_gradient(work: wl.Workload, args, rng) -> None:
    """Hand gradient vs central differences along a random direction."""
    idx = _wrt_indices(work)
    grads = _components(work.hand(*args), len(idx))
    eps = 1e-6
    dirs = [rng.standard_normal(np.shape(args[i])) if np.ndim(args[i]) else 1.0
            for i in idx]

    def shifted(sign):
        new = list(args)
        for i, v in zip(idx, dirs):
            new[i] = args[i] + sign * eps * v
        return work.primal(*new)

    fd = (shifted(+1) - shifted(-1)) / (2 * eps)
    exact = sum(float(np.vdot(g, v)) for g, v in zip(grads, dirs))
    if not abs(fd - exact) <= 1e-5 * max(1.0, abs(exact)):
        _abort(work.key, f"the hand-written gradient disagrees with finite "
                         f"differences: directional derivative {exact!r} vs {fd!r}")


def check_s2s_gradient(row: Row, args) -> None:
    """s2s_ad's gradient must equal the hand-written one, component-wise."""
    work = row.work
    n = len(_wrt_indices(work))
    mine = _components(row.grad(*args), n)
    hand = _components(work.hand(*args), n)
    names = work.wrt if isinstance(work.wrt, tuple) else (work.wrt,)
    for name, a, b in zip(names, mine, hand):
        if np.shape(a) != np.shape(b) or not np.allclose(a, b):
            diff = (np.max(np.abs(np.asarray(a) - np.asarray(b)))
                    if np.shape(a) == np.shape(b) else "n/a")
            _abort(work.key, f"s2s_ad's gradient wrt {name!r} differs from the "
                             f"hand-written one (shapes {np.shape(a)} vs "
                             f"{np.shape(b)}, max |diff| {diff})")


class _Overtime(BaseException):   # not swallowed by `except Exception`
    pass


@contextlib.contextmanager
def deadline(seconds: float):
    """Raise `_Overtime` if the block runs longer than `seconds`."""
    if not hasattr(signal, "setitimer") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise _Overtime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def prepare(work: wl.Workload, args) -> Row:
    """Compile the s2s_ad gradient and run it once; S2SADError -> unsupported."""
    row = Row(work)
    here = os.path.dirname(os.path.abspath(wl.__file__)) + os.sep
    try:
        with deadline(CALL_DEADLINE_S):
            row.grad = ad.grad(work.primal, wrt=work.wrt)
            row.grad(*args)
    except ad.S2SADError as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        row.grad, row.unsupported = None, first.replace(here, "")
    except _Overtime:
        row.grad, row.failed = None, f"no result within {CALL_DEADLINE_S:g} s"
    except Exception as exc:                         # a bug in s2s_ad
        traceback.print_exc()
        first = (str(exc).splitlines() or [""])[0].replace(here, "")
        row.grad, row.failed = None, f"{type(exc).__name__}: {first}"
    if row.failed:
        print(f"{work.key}: s2s_ad's gradient FAILED ({row.failed})",
              file=sys.stderr, flush=True)
    return row


# --------------------------------------------------------------------------
# report

def fmt_time(s: float) -> str:
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1.0:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def fmt_target(s: float, target: float) -> str:
    return fmt_time(s) + ("" if s <= target else " MISS")


HEADER = ("| | workload | primal | s2s grad | hand grad | ratio s2s | ratio hand "
          "| quotient | target | result | first grad+call (≤ 20 ms) "
          "| cached grad(f) (≤ 5 µs) |")


def table_row(row: Row) -> str:
    t, w = row.times, row.work
    cells = [w.key, w.title, fmt_time(t["primal"])]
    if row.grad is None:
        status = (f"unsupported: {row.unsupported}" if row.unsupported
                  else f"FAILED: {row.failed}")
        cells += ["—", fmt_time(t["hand"]), "—", f"{t['hand'] / t['primal']:.2f}",
                  "—", f"≤ {w.target:g}", status.replace("|", "\\|"), "—", "—"]
    else:
        r_s2s = t["s2s"] / t["primal"]
        r_hand = t["hand"] / t["primal"]
        quotient = r_s2s / r_hand
        cells += [fmt_time(t["s2s"]), fmt_time(t["hand"]), f"{r_s2s:.2f}",
                  f"{r_hand:.2f}", f"{quotient:.2f}", f"≤ {w.target:g}",
                  "PASS" if quotient <= w.target else "MISS",
                  fmt_target(t["first"], COMPILE_TARGET_S),
                  fmt_target(t["cached"], CACHED_TARGET_S)]
    return "| " + " | ".join(cells) + " |"


def environment() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"Python {platform.python_version()}, NumPy {np.__version__}, "
            f"s2s_ad {ad.__version__}, float64, 1 BLAS thread, {cpu}, "
            f"{os.cpu_count()} CPUs")


# --------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer and shorter batches (for smoke tests)")
    parser.add_argument("--only", default="",
                        help="comma-separated workload keys, e.g. B1,B5")
    opts = parser.parse_args(argv)
    settings = QUICK if opts.quick else FULL
    keys = {k.strip().upper() for k in opts.only.split(",") if k.strip()}
    works = [w for w in wl.WORKLOADS if not keys or w.key in keys]
    if keys - {w.key for w in works}:
        parser.error(f"unknown workload(s): {sorted(keys - {w.key for w in works})}")

    started = time.perf_counter()
    rows = []
    for work in works:                                  # 1. correctness first
        rng = np.random.default_rng(0)
        args = work.make_args(rng)
        check_hand_gradient(work, args, rng)
        row = prepare(work, args)
        if row.grad is not None:
            check_s2s_gradient(row, args)
        rows.append((row, args))

    for row, args in rows:                              # 2. timing
        calls = {"primal": (row.work.primal, args, {}),
                 "hand": (row.work.hand, args, {})}
        if row.grad is not None:
            calls["s2s"] = (row.grad, args, {})
        row.times = time_interleaved(calls, settings)
        if row.grad is not None:
            row.times["first"] = time_first_grad(row, args, settings)
            row.times["cached"] = time_interleaved(
                {"cached": (ad.grad, (row.work.primal,), {"wrt": row.work.wrt})},
                settings)["cached"]
            if row.times["first"] < 20 * row.times["cached"]:
                print(f"warning: {row.work.key}: first grad(f) is not clearly "
                      "slower than a cached one; was it a cache miss?",
                      file=sys.stderr)
        print(f"timed {row.work.key}", file=sys.stderr, flush=True)

    print()
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    for row, _ in rows:
        print(table_row(row))
    print()
    mode = "quick" if opts.quick else "full"
    print(f"{environment()}; {mode} run: median of {settings.batches} batches "
          f"of >= {settings.min_batch_s * 1e3:g} ms; first grad+call is the "
          f"median of {settings.fresh} fresh function objects.  "
          f"Total {time.perf_counter() - started:.1f} s.")
    failed = [row.work.key for row, _ in rows if row.failed]
    if failed:
        print(f"\nFAILED: s2s_ad's gradient failed on {', '.join(failed)} "
              "(see the table and the messages above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
