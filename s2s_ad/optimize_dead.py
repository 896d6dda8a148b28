"""Dead code and empty blocks.

- `dead_code`: assignments whose target is never read, when the right-hand
  side is pure (no call, or a call into NumPy, math or the runtime); then
  ifs and loops left with no code and nothing to evaluate.
- `empty_blocks`: `Block`s (a `# grad of:` comment and its code) left
  with no code.
- `tidy_blocks` (run on every generated function, optimized or not, as
  the last step before printing): no block is left empty.  An `if` whose
  body has no code is inverted (`if not t: <else>`) or, with neither branch
  left, dropped (its test kept as a statement if it has effects); a loop
  whose body has no code gets `pass`; a block with no code goes.

Invariants: only what cannot be observed is removed.  After `tidy_blocks`
every block holds at least one statement that is no empty `Block`, so the
printed code always compiles.
"""
from __future__ import annotations

import gast

from . import astutil, scopes, traversal
from .dataflow import Walk


# -- dead code ---------------------------------------------------------------
def dead_code(fdef: gast.FunctionDef, is_pure_call) -> bool:
    """Remove pure assignments whose target is not live, then the ifs and
    loops left with no code and nothing to evaluate.  Liveness is a backward
    walk on the one walker (`dataflow.Walk`, loops to a fixpoint); a dead
    assignment reads nothing, so a chain of them goes in one walk.  An if
    or loop removed took the reads of its test or sequence with it, so the
    walk runs again (the pass is idempotent, as the optimizer needs); an if
    that will be left empty is known in the walk (`_goes`), so a chain of
    them does not take one walk each."""
    pure = Purity(is_pure_call)
    changed = False
    while True:
        removed, emptied = _dead_once(fdef, pure)
        changed |= removed
        if not emptied:
            return changed


def _dead_once(fdef: gast.FunctionDef, pure) -> tuple[bool, bool]:
    """One liveness walk and its removals: (anything removed, an if or a
    loop removed)."""
    dead: dict = {}                 # assignment, or if left empty -> dead (the last visit decides)
    heads: dict = {}                # for loop -> names live at its head

    def transfer(stmt, live: set) -> set:      # (updated in place: see `fork`)
        if type(stmt) is gast.If:
            dead[stmt] = _goes(stmt.body, dead) and _goes(stmt.orelse, dead) and pure(stmt.test)
            if dead[stmt]:          # it goes, and the reads of its test with it
                return live
        if scopes.is_simple_assign(stmt):
            target = stmt.targets[0].id
            dead[stmt] = target not in live and pure(stmt.value)
            if not dead[stmt]:
                live.discard(target)
                live.update(scopes.load_names(stmt.value))
            return live
        if isinstance(stmt, gast.For):
            heads[stmt] = set(live)
            live.discard(stmt.target.id)
            live.update(scopes.load_names(stmt.iter))
            return live
        live.update(scopes.load_names(stmt.test if isinstance(stmt, (gast.If, gast.While))
                                      else stmt))
        if isinstance(stmt, gast.AugAssign):    # `a += b` reads a too
            live.update(scopes.all_names(stmt.target))
        return live

    def loop_entry(loop, live: set) -> set:     # the header is read on every iteration
        live.update(scopes.load_names(loop.iter if isinstance(loop, gast.For) else loop.test))
        return live
    Walk(transfer, set.union, backward=True, loop_entry=loop_entry, fork=set.copy).run(
        fdef.body, set())
    return _remove(fdef, {s for s, is_dead in dead.items() if is_dead and
                          type(s) is not gast.If}, pure, heads)


def _goes(body: list, dead: dict) -> bool:
    """Whether `_remove` leaves `body` with no code: each statement a dead
    assignment, an if that goes too, or a block of such.  An if whose
    branches go (and whose test is pure) reads nothing, so what its test
    reads may die in the same walk: a chain of write-back guards
    (`_slots1 = rt.slots(...); if _slots1: y = rt.sync_index(...)`) goes in
    one walk, not one walk per guard."""
    return all(dead.get(s, False) if type(s) is not astutil.Block else _goes(s.body, dead)
               for s in body)


def _remove(fdef, doomed: set, pure, heads: dict) -> tuple[bool, bool]:
    """Remove the statements `doomed`, then ifs and for loops left empty
    whose test or sequence has no effect (a loop whose target is read after
    it stays; a while loop always stays: it might not end).  Says whether
    anything went, and whether an if or a loop did."""
    flags = [False, False]          # removed, emptied
    fdef.body = _kept(fdef.body, doomed, pure, heads, flags)
    return flags[0], flags[1]


def _kept(body: list, doomed: set, pure, heads: dict, flags: list) -> list:
    """`_remove` of one body, its nested bodies first (a function of its
    own, not a closure calling itself: such a cycle would keep the doomed
    statements alive until the cyclic collector ran)."""
    out = []
    for stmt in body:
        if stmt in doomed:
            flags[0] = True
            continue
        for child in ("body", "orelse"):
            if isinstance(getattr(stmt, child, None), list):
                setattr(stmt, child, _kept(getattr(stmt, child), doomed, pure, heads, flags))
        if _empty_control(stmt, pure, heads):
            flags[0] = flags[1] = True
            continue
        out.append(stmt)
    return out


def _empty_control(stmt, pure, heads: dict) -> bool:
    """An if or for loop with no code (a `Block` left empty is none: its
    comment would go with it) and nothing to evaluate."""
    if isinstance(stmt, gast.If):
        return not _has_code(stmt.body) and not _has_code(stmt.orelse) and pure(stmt.test)
    if isinstance(stmt, gast.For):
        return not _has_code(stmt.body) and not _has_code(stmt.orelse) and \
            pure(stmt.iter) and stmt.target.id not in heads.get(stmt, ())
    return False


class Purity:
    def __init__(self, is_pure_call):
        self.is_pure_call = is_pure_call

    def __call__(self, expr) -> bool:
        call = gast.Call
        for node in traversal.nodes(expr):
            kind = type(node)       # (no class derives from these)
            if kind is call:
                if not self.is_pure_call(node):
                    return False
            elif kind in _EFFECTS:
                return False
        return True


_EFFECTS = frozenset({gast.Yield, gast.YieldFrom, gast.Await, gast.NamedExpr})


# -- empty blocks ------------------------------------------------------------
def empty_blocks(fdef: gast.FunctionDef) -> None:
    """Drop the `Block`s that hold no code (their comment would stand alone)."""
    def block(body: list) -> list:
        out = []
        for stmt in body:
            for child in ("body", "orelse"):
                if isinstance(getattr(stmt, child, None), list):
                    setattr(stmt, child, block(getattr(stmt, child)))
            if not isinstance(stmt, astutil.Block) or _has_code(stmt.body):
                out.append(stmt)
        return out
    fdef.body = block(fdef.body)


# -- no empty blocks ---------------------------------------------------------
def tidy_blocks(fdef: gast.FunctionDef, is_pure_call) -> None:
    """Leave no block without code: see the module docstring."""
    fdef.body = _Tidy(Purity(is_pure_call)).block(fdef.body)
    if not _has_code(fdef.body):
        fdef.body.append(astutil.pass_())


class _Tidy:
    """`tidy_blocks`' walk over nested bodies (methods, not closures calling
    each other: such a cycle would keep the purity test, and through it the
    function's source tree, alive until the cyclic collector ran)."""

    def __init__(self, pure: Purity):
        self.pure = pure

    def block(self, body: list) -> list:
        out = []
        for stmt in body:
            out.extend(self.tidy(stmt))
        return out

    def tidy(self, stmt) -> list:
        block = self.block
        if isinstance(stmt, astutil.Block):
            stmt.body = block(stmt.body)
            return [stmt] if _has_code(stmt.body) else []
        if isinstance(stmt, gast.If):
            stmt.body, stmt.orelse = block(stmt.body), block(stmt.orelse)
            if not _has_code(stmt.orelse):
                stmt.orelse = []
            if _has_code(stmt.body):
                return [stmt]
            if stmt.orelse:         # `if t: <nothing> else: B` -> `if not t: B`
                return [astutil.if_(astutil.not_(stmt.test), stmt.orelse)]
            return [] if self.pure(stmt.test) else [astutil.expr_stmt(stmt.test)]
        if isinstance(stmt, (gast.For, gast.While)):
            stmt.body, stmt.orelse = block(stmt.body), block(stmt.orelse)
            if not _has_code(stmt.orelse):
                stmt.orelse = []
            if not _has_code(stmt.body):
                stmt.body = stmt.body + [astutil.pass_()]
        return [stmt]


def _has_code(body: list) -> bool:
    return any(not isinstance(s, astutil.Block) or _has_code(s.body) for s in body)
