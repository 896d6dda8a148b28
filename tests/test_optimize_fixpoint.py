"""The optimizer's fixpoint rests on each pass being idempotent: run again
right after it changed the code, a pass finds nothing.  A pass that is not
leaves work behind that only another pass's change happens to trigger, so
what the generated code keeps depends on the order things were found in
(dead_code once left `_shares3 = rt.shares(...)` behind after removing the
`if` that read it: fuzz seed 297).  It also checks `optimize._ENABLES`, the
passes each pass can give work to: a pass missing there would find work.

For generated programs in every mode, the code `optimize` returns is run
through each pass once more; none may change it."""
from __future__ import annotations

import warnings

import pytest

import s2s_ad as ad
from s2s_ad import astutil, optimize, pipeline

from fuzz.generate import generate
from fuzz.program import Loader, inspect_params

SEEDS = [*range(0, 300, 7), 435, 528, 630, 738]   # (the last: a loop of empty blocks)


def _printed(tree) -> str:
    return pipeline._printed(tree)


def _passes(pure, protected, unsafe, disposable):
    return {"propagate": lambda t: optimize.propagate(t, protected, unsafe),
            "fold": lambda t: optimize.fold(t, unsafe),
            "dead_code": lambda t: optimize.dead_code(t, pure),
            "copies": optimize.copies,
            "forward_copies": lambda t: optimize.forward_copies(t, disposable)}


@pytest.fixture
def settled(monkeypatch):
    """Every optimized function, checked pass by pass; the failures."""
    failures: list = []
    real = optimize.optimize

    def checked(fdef, protected, pure, temps, temp_adjoints, interleaved=False):
        unsafe = optimize.alias_unsafe(fdef)      # (as `optimize` computes it)
        out = real(fdef, protected, pure, temps, temp_adjoints, interleaved)
        for name, run in _passes(pure, protected, unsafe, temp_adjoints - protected).items():
            before = _printed(out)
            copy = astutil.clone(out)
            run(copy)
            if _printed(copy) != before:
                failures.append((fdef.name, name))
        return out
    monkeypatch.setattr(pipeline.optimizer, "optimize", checked)
    return failures


@pytest.mark.parametrize("seed", SEEDS)
def test_no_pass_finds_work_after_the_fixpoint(seed, settled):
    prog = generate(seed)
    loader = Loader()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = loader.load(prog.source)
    func = getattr(module, prog.entry)
    wrt = prog.wrt_value(list(inspect_params(prog.source, prog.entry)))
    wrt = 0 if wrt is None else wrt
    for make in (ad.grad, ad.jvp):
        try:
            ad.source(make(func, wrt=wrt, has_aux=prog.has_aux))
        except ad.S2SADError:
            pass            # refused programs still ran the optimizer on their callees
    loader.unload(module)
    assert settled == []


def test_a_chain_of_write_back_guards_goes_in_two_liveness_walks(monkeypatch):
    # each guard's test read the base the next guard writes: dead code took
    # one walk per guard (a chain of n in-place writes compiled in O(n^2))
    import gast
    from s2s_ad import optimize_dead
    lines = ["def f(x, w):"]
    for i in range(30):
        lines += [f"    s{i} = rt.slots(w, x, 0)", f"    if s{i}:",
                  f"        x = rt.sync_index(x, s{i}, w)"]
    lines += ["    return w"]
    fdef = gast.parse("\n".join(lines)).body[0]
    walks = []
    once = optimize_dead._dead_once
    monkeypatch.setattr(optimize_dead, "_dead_once", lambda *a: walks.append(1) or once(*a))
    assert optimize_dead.dead_code(fdef, lambda call: True)
    assert [type(s).__name__ for s in fdef.body] == ["Return"]
    assert len(walks) == 2
