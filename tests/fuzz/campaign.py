"""Running many seeds and summarising them: counts per outcome, failure
signatures with an example seed, skip reasons, refusals by message.

`run_seeds` can fan out over processes (`jobs`); each seed's result depends
only on the seed and the enabled features, never on the order or process.
"""
from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from dataclasses import dataclass, field

from .gen_core import FEATURES
from .generate import generate
from .program import Loader
from .runner import OUTCOMES, Result, run

_loader = None


def shared_loader() -> Loader:
    """This process's Loader.  Made before worker processes fork, so they
    share its directory and the parent removes it at exit (workers do not
    run atexit handlers)."""
    global _loader
    if _loader is None:
        _loader = Loader()
    return _loader


def run_seed(seed: int, features=FEATURES, orders: tuple = ()) -> Result:
    """Generate and judge one seed (in this process)."""
    return run(generate(seed, features), shared_loader(), orders)


def _work(item):
    seed, features, orders = item
    return seed, run_seed(seed, features, orders)


def run_seeds(seeds, features=FEATURES, jobs: int = 1, progress=None, orders=()) -> list:
    """[(seed, Result)] in seed order."""
    items = [(s, tuple(features), tuple(orders)) for s in seeds]
    if jobs <= 1:
        out = []
        for item in items:
            out.append(_work(item))
            if progress:
                progress(len(out), len(items))
        return out
    shared_loader()
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        out = []
        for res in pool.imap(_work, items, chunksize=8):
            out.append(res)
            if progress:
                progress(len(out), len(items))
        return out


@dataclass
class Summary:
    """What a range of seeds found."""

    counts: Counter = field(default_factory=Counter)
    order_counts: Counter = field(default_factory=Counter)     # (order, outcome) -> seeds
    failures: dict = field(default_factory=dict)    # (outcome, signature) -> [seeds]
    skips: Counter = field(default_factory=Counter)
    refusals: Counter = field(default_factory=Counter)
    refusal_seed: dict = field(default_factory=dict)
    seconds: float = 0.0

    @classmethod
    def of(cls, results, seconds: float = 0.0) -> "Summary":
        summary = cls(seconds=seconds)
        for seed, res in results:
            summary.counts[res.outcome] += 1
            if res.outcome in ("wrong", "crash"):
                summary.failures.setdefault((res.outcome, res.signature), []).append(seed)
            elif res.outcome == "skipped":
                summary.skips[res.signature] += 1
            elif res.outcome == "refused":
                summary.refusals[res.signature] += 1
                summary.refusal_seed.setdefault(res.signature, seed)
            for order, outcome, sig, _ in res.orders:
                summary.order_counts[order, outcome] += 1
                if outcome in ("wrong", "crash"):
                    summary.failures.setdefault((outcome, f"[{order}] {sig}"), []).append(seed)
                elif outcome == "refused":
                    summary.refusals[f"[{order}] {sig}"] += 1
                    summary.refusal_seed.setdefault(f"[{order}] {sig}", seed)
        return summary

    def bad(self) -> int:
        return self.counts["wrong"] + self.counts["crash"] + sum(
            n for (_, outcome), n in self.order_counts.items() if outcome in ("wrong", "crash"))

    def report(self, details: bool = True) -> str:
        total = sum(self.counts.values())
        lines = [f"{total} seeds in {self.seconds:.1f} s: "
                 + ", ".join(f"{o} {self.counts[o]}" for o in OUTCOMES)]
        for order in sorted({o for o, _ in self.order_counts}):
            which = "ok above, and those refused" if order == "jvp" else "ok above"
            lines.append(f"  {order} (of the seeds {which}): " + ", ".join(
                f"{o} {self.order_counts[order, o]}" for o in OUTCOMES))
        if self.failures:
            lines += ["", "failures (count, example seed, signature):"]
            for (outcome, sig), seeds in sorted(self.failures.items(), key=lambda kv: -len(kv[1])):
                lines.append(f"  {len(seeds):5d}  seed {seeds[0]:<6d} {outcome}: {sig}")
        if details and self.refusals:
            lines += ["", "refused (count, example seed, message):"]
            for sig, n in self.refusals.most_common():
                lines.append(f"  {n:5d}  seed {self.refusal_seed[sig]:<6d} {sig}")
        if details and self.skips:
            lines += ["", "skipped (count, reason):"]
            lines += [f"  {n:5d}  {sig}" for sig, n in self.skips.most_common()]
        return "\n".join(lines)


def campaign(seeds, features=FEATURES, jobs: int = 1, progress=None, orders=()) -> tuple:
    """(results, Summary) for `seeds`, judged in `orders` too."""
    start = time.perf_counter()
    results = run_seeds(seeds, features, jobs, progress, orders)
    return results, Summary.of(results, time.perf_counter() - start)
