"""First-call time in a fresh process, without and with the on-disk cache.

    python benchmarks/first_call.py

Each row runs a new Python process that imports s2s_ad and a workload, then
times the first `value_and_grad` call (compile + run) and a second call
(run only): with the cache off (`S2S_AD_CACHE_DIR=""`), with an empty cache
directory (compile and write), and with that directory warm (load).  The
median of 5 processes is printed, in milliseconds.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PROBE = r"""
import json, sys, time
start = time.perf_counter()
import numpy as np
import s2s_ad as ad
imported = time.perf_counter()
sys.path[:0] = [sys.argv[1], sys.argv[2]]
case = sys.argv[3]
if case == "rk4":
    import rk4_lotka_volterra as m
    args = (m.TRUE_THETA * 0.9, m.trajectory(m.lotka_volterra, m.Z0, m.TRUE_THETA, m.DT, m.STEPS))
    func, wrt = m.loss, 0
else:
    import workloads as w
    spec = {s.key: s for s in w.WORKLOADS}[case]
    func, args, wrt = spec.primal, spec.make_args(np.random.default_rng(0)), spec.wrt
t0 = time.perf_counter()
derived = ad.value_and_grad(func, wrt=wrt)        # (compiles here)
derived(*args)
t1 = time.perf_counter()
derived(*args)
t2 = time.perf_counter()
print(json.dumps({"import": imported - start, "first": t1 - t0, "second": t2 - t1}))
"""


def probe(case: str, cache_dir: str) -> dict:
    env = {**os.environ, "S2S_AD_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", PROBE, os.path.join(ROOT, "examples"), HERE,
                          case], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def median(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs) * 1e3


def main() -> None:
    cases = sys.argv[1:] or ["rk4", "B5"]
    print(f"{'workload':10} {'cache':8} {'import ms':>10} {'first call ms':>14} "
          f"{'second call ms':>15}")
    for case in cases:
        with tempfile.TemporaryDirectory() as tmp:
            probe(case, "")             # (a first process warms the OS's file cache)
            rows = {"off": [probe(case, "") for _ in range(5)]}
            rows["empty"] = []
            for i in range(5):
                rows["empty"].append(probe(case, os.path.join(tmp, f"e{i}")))
            warm = os.path.join(tmp, "warm")
            probe(case, warm)
            rows["warm"] = [probe(case, warm) for _ in range(5)]
            for name, runs in rows.items():
                print(f"{case:10} {name:8} {median(runs, 'import'):10.0f} "
                      f"{median(runs, 'first'):14.1f} {median(runs, 'second'):15.1f}")


if __name__ == "__main__":
    main()
