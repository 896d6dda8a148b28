"""The one walker of structured ANF that every data-flow analysis uses.

A `Walk` runs a transfer function forward or backward over if/for/while,
`break` and `continue` (and the `Block`s of generated code, in place), joining states where control flow merges and
iterating loops to a fixpoint at their head (`loop_entry` adjusts the
state at the head: forward, what the header binds; backward, what it
reads).  States are immutable sets (`State`); transfer functions return new
ones, except where a walk is given `fork`: then states are mutable (dicts,
sets) that a transfer may update and return, and the walk copies one
(`fork`) wherever two paths start from it or a jump sees it, so
straight-line code costs no copy per statement.
Analyses (analysis.py, shapes.py, param_copies.py), dead-code
elimination (optimize.py) and adjoint ownership (ownership.py) all run
on it.

Invariant: a loop head is the join of everything seen at it so far, so it
moves one way and settles; one that has not settled after 1000 rounds is a
bug, raised (and reported by the driver as a located `InternalError`).
"""
from __future__ import annotations

from typing import Callable

import gast

from . import astutil

State = frozenset


# the statements the walk itself steers through (others go to the transfer)
_CONTROL = frozenset({astutil.Block, gast.If, gast.For, gast.While, gast.Break, gast.Continue})


class Walk:
    """A structured forward or backward walk with a join and a transfer."""

    def __init__(self, transfer: Callable, join: Callable, backward: bool = False,
                 loop_entry: Callable | None = None, loop_exit: Callable | None = None,
                 at_exit: Callable | None = None, fork: Callable | None = None):
        self.transfer, self.join, self.backward = transfer, join, backward
        # a mutable state (a dict) is copied where two paths start from it
        self.fork = fork or (lambda state: state)
        self.at_exit = at_exit
        self.loop_entry = loop_entry or (lambda stmt, state: state)
        self.loop_exit = loop_exit or (lambda stmt, state: state)
        self._loops: list = []
        self._heads: dict = {}      # loop -> its settled head, within the outermost loop

    def run(self, body: list, state):
        stmts = reversed(body) if self.backward else body
        for stmt in stmts:
            state = self.step(stmt, state)
            if state is None:           # after break/continue: unreachable
                return None
        return state

    def step(self, stmt, state):
        kind = type(stmt)       # (no class derives from a statement class named here)
        if kind not in _CONTROL:
            return self.transfer(stmt, state)
        if kind is astutil.Block:               # (generated code) its statements
            return self.run(stmt.body, state)
        if kind is gast.If:
            if self.backward and self.at_exit:      # the state just after the `if`
                self.at_exit(stmt, state)
            if not self.backward:
                state = self.transfer(stmt, state)
            state = self._join(self.run(stmt.body, self.fork(state)), self.run(stmt.orelse, state))
            return self.transfer(stmt, state) if self.backward and state is not None \
                else state
        if kind is gast.For or kind is gast.While:
            return self._loop(stmt, state)
        return self._jump(stmt, state)          # break, continue

    def _join(self, a, b):
        if a is None or b is None:
            return a if b is None else b
        return self.join(a, b)

    def _loop(self, loop, state):
        """Iterate the body to a fixpoint at the loop head.

        A nested loop starts from its head of the enclosing loop's previous
        round joined with its entry: entries only grow (the enclosing head
        moves one way), so the fixpoint is the same, and the cost of a nest
        is polynomial in its depth instead of exponential."""
        if not self._loops:
            self._heads = {}
        known = self._heads.get(loop)
        head, jumps = (state if known is None else self._join(known, state)), None
        for _ in range(1000):
            # frame: [state a `continue` sees, joined states of `break`s (forward)
            #         / state a `break` sees (backward)]
            entry = self.loop_entry(loop, self.fork(head))  # (backward: what the header reads)
            frame = [self.fork(entry), state] if self.backward else [None, None]
            self._loops.append(frame)
            out = self.run(loop.body, entry)
            self._loops.pop()
            # joined with the head so far (which starts as `state`): the
            # head only moves one way, so it settles even where a transfer
            # invents fresh facts (a new shape class) on each pass
            if self.backward:
                new = self._join(head, out)
            else:
                new = self._join(head, self._join(out, frame[0]))
                jumps = frame[1]
            if new == head:
                break
            head = new
        else:       # (reported as a located InternalError by the driver)
            raise RuntimeError("the analysis of a loop reached no fixpoint in 1000 rounds")
        self._heads[loop] = self.fork(head)
        if self.backward:
            return self.transfer(loop, head)
        out = self._join(head, jumps)
        return None if out is None else self.loop_exit(loop, out)

    def _jump(self, stmt, state):
        frame = self._loops[-1]
        is_break = isinstance(stmt, gast.Break)
        if self.backward:
            # Walking backward, `break` sees the loop exit, `continue` the head
            # (a copy: the statements before it may update a mutable state).
            return self.fork(frame[1] if is_break else frame[0])
        slot = 1 if is_break else 0
        frame[slot] = self._join(frame[slot], state)
        return None
