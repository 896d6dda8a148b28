"""Command line of the fuzzer.

    python -m tests.fuzz --seeds 0:10000 [--jobs 2] [--features if,for] [--exclude names]
                         [--show-failures N] [--save DIR] [--results FILE]
    python -m tests.fuzz --seed N [--print]     # judge (or just print) one program
    python -m tests.fuzz --minimize N           # shrink seed N's failure
    python -m tests.fuzz --seeds 0:3000 --minimize-each 2   # shrink 2 seeds per signature
    python -m tests.fuzz --list-features

The same --features/--exclude must be given to reproduce a seed found with them.
Exit status: 1 if any seed was wrong or crashed, else 0.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys

from .campaign import campaign, shared_loader
from .gen_core import FEATURES
from .generate import generate
from .minimize import Minimizer
from .program import Loader, Program
from .orders import ORDERS
from .runner import run


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", help="a range START:STOP of seeds to run")
    p.add_argument("--seed", type=int, help="one seed: judge it and show the program")
    p.add_argument("--print", action="store_true", help="with --seed: only print the program")
    p.add_argument("--minimize", type=int, metavar="SEED", help="minimize this seed's failure")
    p.add_argument("--features", help="comma-separated features to enable (default: all)")
    p.add_argument("--exclude", help="comma-separated features to disable")
    p.add_argument("--jobs", type=int, default=1, help="worker processes for --seeds")
    p.add_argument("--show-failures", type=int, default=0, metavar="N",
                   help="print the program of the first N failures")
    p.add_argument("--save", metavar="DIR", help="write each failing program to DIR/seed_N.py")
    p.add_argument("--results", metavar="FILE",
                   help="write one JSON line per seed: seed, outcome, signature")
    p.add_argument("--minimize-each", type=int, default=0, metavar="K",
                   help="with --seeds: minimize the first K seeds of every failure signature")
    p.add_argument("--list-features", action="store_true")
    p.add_argument("--orders", default=",".join(ORDERS),
                   help="other orders to judge each program in once its gradient is right: "
                   f"comma-separated from {', '.join(ORDERS)} (default: all; '' for none)")
    return p.parse_args(argv)


def features_of(args) -> tuple:
    chosen = set(FEATURES if not args.features else args.features.split(","))
    chosen -= set(args.exclude.split(",")) if args.exclude else set()
    unknown = chosen - set(FEATURES)
    if unknown:
        sys.exit(f"unknown features: {', '.join(sorted(unknown))} (see --list-features)")
    return tuple(f for f in FEATURES if f in chosen)


def main(argv=None) -> int:
    args = parse_args(argv)
    features = features_of(args)
    if args.list_features:
        print("\n".join(FEATURES))
        return 0
    if args.minimize is not None:
        return _minimize(args.minimize, features)
    if args.seed is not None:
        return _one(args.seed, features, args.print, _orders(args))
    if args.seeds:
        return _many(args, features)
    print("nothing to do: give --seeds, --seed or --minimize (see --help)")
    return 2


def _orders(args) -> tuple:
    chosen = tuple(o for o in args.orders.split(",") if o)
    unknown = set(chosen) - set(ORDERS)
    if unknown:
        sys.exit(f"unknown orders: {', '.join(sorted(unknown))} (use {', '.join(ORDERS)})")
    return chosen


def _one(seed: int, features, only_print: bool, orders: tuple = ORDERS) -> int:
    prog = generate(seed, features)
    print(describe(prog))
    if only_print:
        return 0
    res = run(prog, Loader(), orders)
    print(f"# outcome: {res.outcome}  {res.signature}")
    if res.detail:
        print(comment(res.detail))
    bad = res.outcome in ("wrong", "crash")
    for order, outcome, sig, detail in res.orders:
        print(f"# {order}: {outcome}  {sig}")
        if detail and outcome in ("wrong", "crash"):
            print(comment(detail))
        bad |= outcome in ("wrong", "crash")
    return int(bad)


def describe(prog: Program) -> str:
    """The program's source with a header saying how it is called."""
    head = (f"# seed {prog.seed}: {prog.mode}, has_aux={prog.has_aux}, wrt={list(prog.wrt)}"
            f"{' (tuple)' if prog.wrt_tuple else ''}\n# features: {', '.join(prog.features)}\n")
    return head + prog.reproducer()


def comment(text: str) -> str:
    """`text` as Python comment lines, so printed programs stay runnable."""
    return "\n".join("# " + line for line in text.splitlines())


def _many(args, features) -> int:
    start, _, stop = args.seeds.partition(":")
    seeds = range(int(start), int(stop))

    def progress(done, total):
        if sys.stderr.isatty() and (done % 50 == 0 or done == total):
            print(f"\r{done}/{total}", end="", file=sys.stderr, flush=True)
    results, summary = campaign(seeds, features, args.jobs, progress, _orders(args))
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(summary.report())
    bad = [(s, r) for s, r in results if r.outcome in ("wrong", "crash")]
    for seed, res in bad[:args.show_failures]:
        print(f"\n{'=' * 70}\n# {res.outcome}: {res.signature}")
        print(describe(generate(seed, features)))
        if res.detail and res.outcome == "wrong":
            print(comment(res.detail))
    if args.save:
        _save(args.save, bad, features)
    if args.minimize_each:
        _minimize_each(summary, args.minimize_each, features, args.jobs)
    if args.results:
        with open(args.results, "w") as fh:
            for seed, res in results:
                fh.write(json.dumps({"seed": seed, "outcome": res.outcome,
                                     "signature": res.signature}) + "\n")
    return int(bool(bad))


def _save(directory: str, bad, features) -> None:
    os.makedirs(directory, exist_ok=True)
    for seed, res in bad:
        with open(os.path.join(directory, f"seed_{seed}.py"), "w") as fh:
            fh.write(f"# {res.outcome}: {res.signature}\n")
            fh.write(describe(generate(seed, features)))
    print(f"\nsaved {len(bad)} failing programs to {directory}")


def failure(res) -> tuple | None:
    """(order or "", outcome, signature) of `res`'s failure, its own or
    an order's (a program whose gradient is right, or that reverse mode
    refused, may still fail in forward mode or at second order); None."""
    if res.outcome in ("wrong", "crash"):
        return "", res.outcome, res.signature
    return next(((order, outcome, sig) for order, outcome, sig, _ in res.orders
                 if outcome in ("wrong", "crash")), None)


def minimize_seed(seed: int, features=FEATURES):
    """(seed, first result, minimized Program, its result); the Program is
    None when the seed does not fail, in any order."""
    loader = shared_loader()

    def judge(prog):
        res = run(prog, loader, ORDERS)
        return failure(res) or ("", res.outcome, res.signature)
    prog = generate(seed, features)
    first = run(prog, loader, ORDERS)
    if failure(first) is None:
        return seed, first, None, first
    small = Minimizer(prog, judge).minimize()
    return seed, first, small, run(small, loader, ORDERS)


def _minimize(seed: int, features) -> int:
    seed, first, small, res = minimize_seed(seed, features)
    print(f"# seed {seed}: {_said(first)}")
    if small is None:
        print("# nothing to minimize")
        return 0
    _print_minimized(small, res)
    return 1


def _said(res) -> str:
    """`outcome  signature`, of the failing order where one failed."""
    order, outcome, sig = failure(res) or ("", res.outcome, res.signature)
    return f"{outcome}  {f'[{order}] ' if order else ''}{sig}"


def _print_minimized(small: Program, res) -> None:
    print(describe(small))
    print(f"# outcome: {_said(res)}")
    detail = res.detail if res.outcome == "wrong" else next(
        (d for _, outcome, _, d in res.orders if outcome == "wrong"), "")
    if detail:
        print(comment(detail))


def _minimize_each(summary, k: int, features, jobs: int) -> None:
    """Minimize the first `k` seeds of every failure signature."""
    seeds = [s for _, found in sorted(summary.failures.items(), key=lambda kv: -len(kv[1]))
             for s in found[:k]]
    items = [(s, features) for s in seeds]
    shared_loader()
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            done = pool.starmap(minimize_seed, items)
    else:
        done = [minimize_seed(*item) for item in items]
    for seed, first, small, res in done:
        print(f"\n{'=' * 70}\n# minimized from seed {seed}: {_said(first)}")
        _print_minimized(small, res)
