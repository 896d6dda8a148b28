"""Dask at scale: the logistic loss and its value_and_grad from 10^6 to 10^8 elements.

Run (from the repository root, with s2s_ad, dask and distributed installed):

    python benchmarks/dask_scale.py              # 10^6, 10^7, 10^8 elements
    python benchmarks/dask_scale.py --quick      # 10^5, 10^6 elements
    python benchmarks/dask_scale.py --sizes 1e6,1e7

The loss is examples/dask_logistic_regression.py's (mean of
np.logaddexp(0, -y (X w + b)), 10 features, w a NumPy array, b a float),
and so is the data: each chunk of X and y is generated lazily from a seed
by the task that reads it, so nothing is held between computations and
every timed computation generates its chunks again.  For each size
(elements = samples x features):

- Dask, on a LocalCluster of 2 worker processes with 1 thread each, rows
  "Dask, w NumPy" (w as the example passes it) and "Dask, w Dask" (w as a
  one-chunk Dask array); either way every gradient comes back lazy:
  read data = computing X.sum() and y.sum() (generating the chunks only),
  primal = `dask.compute(loss(w, b, X, y))`,
  grad = `dask.compute(*value_and_grad(loss, wrt=("w", "b"))(w, b, X, y))`,
  the call included (it builds the graph).  Target: grad / primal <= 2.5.
- NumPy, in this process, where the data fits (<= --numpy-max elements):
  the same X and y materialized first, then the loss and value_and_grad,
  timed as benchmarks/run.py --quick times (interleaved batches, median).

Dask times are medians of --repeat interleaved runs, after one warm-up run
of each on a small dataset (which also compiles the gradient).  Peak worker RSS is the largest
resident memory of either worker process, sampled every 20 ms during the
grad runs.  Chunks stream, so it must not grow with the data size: the
last lines print the ratio of the largest size's peak to the smallest's
(target <= 1.5).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
import run as bench                          # noqa: E402  (sets the BLAS threads first)

import dask                                  # noqa: E402
import dask.array as da                      # noqa: E402
import numpy as np                           # noqa: E402
import psutil                                # noqa: E402  (a dependency of distributed)
from dask.distributed import Client, LocalCluster   # noqa: E402

import dask_logistic_regression as example   # noqa: E402
import s2s_ad as ad                          # noqa: E402

RATIO_TARGET = 2.5
MEMORY_TARGET = 1.5            # largest size's peak worker RSS / smallest size's
FULL_SIZES = (10**6, 10**7, 10**8)
QUICK_SIZES = (10**5, 10**6)

vg = ad.value_and_grad(example.loss, wrt=("w", "b"))


class PeakRSS:
    """Samples the resident memory of some processes in a background thread;
    `peak[label]` is the largest RSS of any of them while `label` was set."""

    def __init__(self, pids, interval=0.02):
        self.procs = [psutil.Process(pid) for pid in pids]
        self.interval, self.label, self.peak = interval, None, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.is_set():
            label = self.label
            if label is not None:
                rss = max(p.memory_info().rss for p in self.procs)
                self.peak[label] = max(self.peak.get(label, 0), rss)
            self._stop.wait(self.interval)

    def now(self) -> int:
        return max(p.memory_info().rss for p in self.procs)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def timed(calls: dict, repeat: int, sampler=None) -> dict:
    """Median seconds of each `name -> fn()` over `repeat` interleaved runs;
    with a sampler, each run's memory is recorded under its name."""
    samples = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            if sampler is not None:
                sampler.label = name
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
            if sampler is not None:
                sampler.label = None
    return {name: statistics.median(s) for name, s in samples.items()}


def dask_calls(w, b, X, y) -> dict:
    """The timed Dask computations for one dataset."""
    wd = da.from_array(w, chunks=w.shape)
    return {"read": lambda: dask.compute(X.sum(), y.sum()),
            "primal": lambda: dask.compute(example.loss(w, b, X, y)),
            "grad": lambda: dask.compute(*vg(w, b, X, y)),
            "grad_wd": lambda: dask.compute(*vg(wd, b, X, y))}


def measure_dask(elements, opts, sampler) -> list:
    """The two Dask rows (w NumPy, w Dask) for one size."""
    X, y = example.make_data(elements // opts.features, opts.features, opts.chunk_rows)
    w, b = 0.1 * np.ones(opts.features), 0.1
    t = timed(dask_calls(w, b, X, y), opts.repeat, sampler)
    mb = {k: v / 2**20 for k, v in sampler.peak.items()}
    sampler.peak.clear()
    base = dict(elements=elements, chunks=X.numblocks[0], read=t["read"],
                primal=t["primal"])
    return [dict(base, arrays="Dask, w NumPy", grad=t["grad"], rss=mb["grad"]),
            dict(base, arrays="Dask, w Dask", grad=t["grad_wd"], rss=mb["grad_wd"])]


def measure_numpy(elements, opts) -> dict:
    """The NumPy row for one size: the same data, materialized first."""
    X, y = example.make_data(elements // opts.features, opts.features, opts.chunk_rows)
    X, y = dask.compute(X, y, scheduler="synchronous")
    w, b = 0.1 * np.ones(opts.features), 0.1
    t = bench.time_interleaved({"primal": (example.loss, (w, b, X, y), {}),
                                "grad": (vg, (w, b, X, y), {})}, bench.QUICK)
    return dict(elements=elements, chunks=None, arrays="NumPy", read=None,
                primal=t["primal"], grad=t["grad"], rss=None)


def warm_up(opts) -> None:
    """Compile the gradient and run every computation once on a small dataset."""
    X, y = example.make_data(2 * opts.chunk_rows, opts.features, opts.chunk_rows)
    w = np.zeros(opts.features)
    for fn in dask_calls(w, 0.0, X, y).values():
        fn()


HEADER = ("| elements | samples × features | arrays | chunks | read data | primal | grad "
          "| grad ÷ primal | target | result | peak worker RSS (grad) |")


def table_row(row, features) -> str:
    fmt, ratio = bench.fmt_time, row["grad"] / row["primal"]
    dask_row = row["chunks"] is not None
    cells = [f"10^{round(np.log10(row['elements']))}",
             f"{row['elements'] // features:,} × {features}", row["arrays"],
             str(row["chunks"]) if dask_row else "—",
             fmt(row["read"]) if dask_row else "—", fmt(row["primal"]), fmt(row["grad"]),
             f"{ratio:.2f}", f"≤ {RATIO_TARGET:g}" if dask_row else "—",
             ("PASS" if ratio <= RATIO_TARGET else "MISS") if dask_row else "—",
             f"{row['rss']:.0f} MB" if dask_row else "—"]
    return "| " + " | ".join(cells) + " |"


def memory_lines(rows) -> list:
    """Per Dask variant: the largest size's peak worker RSS over the smallest's."""
    lines = []
    for arrays in ("Dask, w NumPy", "Dask, w Dask"):
        mine = sorted((r for r in rows if r["arrays"] == arrays), key=lambda r: r["elements"])
        if len(mine) < 2:
            continue
        lo, hi = mine[0], mine[-1]
        ratio = hi["rss"] / lo["rss"]
        lines.append(f"{arrays}: peak worker RSS at 10^{round(np.log10(hi['elements']))} "
                     f"÷ at 10^{round(np.log10(lo['elements']))} elements = "
                     f"{hi['rss']:.0f} MB ÷ {lo['rss']:.0f} MB = {ratio:.2f} "
                     f"(target ≤ {MEMORY_TARGET:g}): "
                     f"{'PASS' if ratio <= MEMORY_TARGET else 'MISS'}")
    return lines


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^5 and 10^6 elements only")
    parser.add_argument("--sizes", default="",
                        help="comma-separated element counts, e.g. 1e6,1e7")
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=100_000,
                        help="samples per chunk (default 100000: 8 MB of X)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per median")
    parser.add_argument("--memory-limit", default="1GB", help="per worker")
    parser.add_argument("--numpy-max", type=float, default=1e7,
                        help="largest size also run on NumPy (default 1e7 elements)")
    opts = parser.parse_args(argv)
    sizes = [int(float(s)) for s in opts.sizes.split(",") if s.strip()]
    opts.sizes = sizes or list(QUICK_SIZES if opts.quick else FULL_SIZES)
    return opts


def run_sizes(client, opts) -> tuple:
    """All rows, smallest size first, and the workers' idle RSS in MB."""
    warm_up(opts)
    pids = list(client.run(os.getpid).values())
    rows = []
    with PeakRSS(pids) as sampler:
        idle = sampler.now() / 2**20
        for elements in sorted(opts.sizes):
            if elements <= opts.numpy_max:
                rows.append(measure_numpy(elements, opts))
            rows += measure_dask(elements, opts, sampler)
            print(f"measured 10^{np.log10(elements):.3g} elements", file=sys.stderr,
                  flush=True)
    return rows, idle


def main(argv=None) -> int:
    opts = parse(argv)
    started = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=opts.memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        rows, idle = run_sizes(client, opts)
    print()
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    for row in rows:
        print(table_row(row, opts.features))
    print()
    for line in memory_lines(rows):
        print(line)
    print()
    print(f"{bench.environment()}; Dask {dask.__version__}, LocalCluster of 2 workers "
          f"x 1 thread, memory limit {opts.memory_limit} each (idle worker RSS "
          f"{idle:.0f} MB), chunks of {opts.chunk_rows:,} samples; median of "
          f"{opts.repeat} runs.  Total {time.perf_counter() - started:.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
