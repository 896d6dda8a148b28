"""Data-flow facts over an ANF body, returned as side tables.

All analyses walk the structured ANF (if/for/while, break, continue) with
one walker (dataflow.py): joins at merges, fixpoints at loop heads; nothing
is written onto nodes.

- varied  (forward, may):  names that depend on a `wrt` parameter through
  differentiable primitives.  `stop_gradient`, comparisons and calls declared
  non-differentiable produce values that are not varied.
- useful  (backward, may): names through which the output may depend.
- active: an assignment whose target is varied and useful just after it.
- carriers: names whose adjoint may be nonzero somewhere; kills: inactive
  assignments to a carrier (they zero its adjoint, so a loop with one is
  reversed even if nothing in it is active).
- recorded (forward, may): assignments that overwrite a value the adjoint
  sweep will still read - a rule's operand, a name an in-place update shares
  memory with (`Normalized.shares`), or a name whose zero adjoint is filled
  at a join (`zeros_like(x)` reads x) - the reverse transform saves and
  restores those.  Where every later read is of the value's shape only
  (un-broadcasting to it, expanding to it, a zero adjoint like it), the
  assignment is in `shape_recorded` too, and only a stand-in of that shape
  is kept (`rt.shape_only`): two walks, one counting every read, one
  counting value reads only; what the first records and the second does
  not is shape-recorded, unless it updates in place (its restore writes
  the old values back).  A call of a helper that updates an argument in
  place is no assignment to it: where the first walk finds the adjoint
  sweep still reading the argument, the call is `clobbered` (refused by
  reverse_forward.py: nothing saves the old value).
- shapes (shapes.py): shape classes, scalars and the compact-adjoint
  decisions, in the same `Facts`.
"""
from __future__ import annotations


import gast

from . import scopes, shapes, traversal
from .dataflow import State, Walk
from .ir import CALL, COPY, DYNAMIC, RULE, UNKNOWN, Facts, Prim, ShapeFacts, names_of

def analyze(body: list, prims: dict[gast.stmt, Prim], wrt: list[str],
            outputs: list[str], spread: bool = True, shares=None, heirs=None) -> Facts:
    facts = Facts(shapes=ShapeFacts(spread=spread))
    _varied(body, prims, wrt, facts)
    useful_after = _useful(body, prims, outputs, facts)
    for stmt in scopes.assignments(body):
        target = stmt.targets[0].id
        varied_after = _varied_after(stmt, prims, facts)
        if target in useful_after.get(stmt, ()) and varied_after:
            facts.active.add(stmt)
    facts.carriers = _carriers(body, prims, wrt, outputs, facts)
    facts.kills = {s for s in scopes.assignments(body)
                   if s not in facts.active and s.targets[0].id in facts.carriers}
    shapes.shape_classes(body, prims, wrt, facts)
    stored = {n.id for n in traversal.names(body) if type(n.ctx) is not gast.Load}
    facts.shapes.stable = frozenset(wrt) - stored
    if spread:
        shapes.compact(body, prims, facts)
    _recorded(body, prims, wrt, facts, useful_after, shares or {}, heirs or {})
    return facts


def _carriers(body, prims, wrt, outputs, facts) -> frozenset:
    """Names whose adjoint may be nonzero somewhere: the parameters, the
    outputs, and the targets and varied operands of active statements."""
    names = set(wrt) | set(outputs)
    for stmt in scopes.assignments(body):
        if stmt in facts.active:
            varied = facts.varied_before.get(stmt, State())
            names.add(stmt.targets[0].id)
            names.update(op for op in prims[stmt].operands if op in varied)
    return frozenset(names)


def _varied_after(stmt, prims, facts) -> bool:
    prim = prims.get(stmt)
    if prim is None or prim.kind not in (COPY, RULE, CALL, DYNAMIC, UNKNOWN):
        return False
    before = facts.varied_before.get(stmt, State())
    return any(op in before for op in prim.operands)


def _varied(body, prims, wrt, facts) -> None:
    """The varied names before each statement that it reads (`varied_before`)
    and at the end.  The walk's states are sets updated in place (copied
    where paths part: see `dataflow.Walk`'s `fork`): a new set per
    statement would copy every varied name at each, quadratic in
    straight-line code."""
    def transfer(stmt, state):
        # kept per statement: only the names it reads (linear memory)
        if isinstance(stmt, gast.Expr):
            facts.varied_before[stmt] = State(state.intersection(scopes.load_names(stmt)))
        if isinstance(stmt, gast.Assign):
            facts.varied_before[stmt] = State(state.intersection(scopes.load_names(stmt.value)))
            _mark(state, stmt.targets[0].id, _varied_after(stmt, prims, facts))
        return state

    def loop_entry(loop, state):
        if isinstance(loop, gast.For):
            _mark(state, loop.target.id, any(n in state for n in scopes.load_names(loop.iter)))
        return state

    out = Walk(transfer, set.union, loop_entry=loop_entry, fork=set.copy).run(body, set(wrt))
    facts.varied_out = State(out or ())


def _mark(state: set, name: str, varied: bool) -> None:
    if varied:
        state.add(name)
    else:
        state.discard(name)


def _useful(body, prims, outputs, facts) -> dict:
    """stmt -> names useful just after the statement (for an assignment:
    whether its target is)."""
    after: dict = {}

    def at_exit(stmt, state):
        after[stmt] = state

    def transfer(stmt, state):
        if isinstance(stmt, (gast.For, gast.While)):
            after[stmt] = state         # at the loop head
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0].id
            after[stmt] = state & {target}      # all that is asked of it
            if target not in state:
                return state
            prim = prims[stmt]
            before = facts.varied_before.get(stmt, State())
            return (state - {target}) | {op for op in prim.operands if op in before}
        if isinstance(stmt, gast.For):
            target = stmt.target.id
            if target in state:
                return state | set(scopes.load_names(stmt.iter))
        return state

    start = State(outputs)
    Walk(transfer, State.union, backward=True, at_exit=at_exit).run(body, start)
    return after


def _recorded(body, prims, wrt, facts, useful, shares, heirs) -> None:
    """Mark assignments that destroy a value the adjoint sweep reads later
    (an in-place update also destroys the values of the names in `shares`;
    a value recorded by reference lives on in its `heirs`, which must then
    keep their values too); those whose old value is read only for its
    shape are also `shape_recorded`.

    The reverse sweep restores recorded targets as it goes, so at the adjoint
    of a statement every variable holds its value from just after it (or a
    stand-in of its shape, where nothing reads more).
    """
    seen: dict = {}     # stmt -> what its adjoint reads (`Prim.reads`): asked by both walks
    every = _record_walk(body, prims, wrt, facts, useful, shares, heirs, None, seen)
    by_value = _record_walk(body, prims, wrt, facts, useful, shares, heirs, every, seen) \
        if every else set()     # (nothing recorded: none recorded for its shape only)
    facts.recorded = every
    facts.shape_recorded = every - by_value


def _record_walk(body, prims, wrt, facts, useful, shares, heirs, every, seen) -> set:
    """The assignments to record.  With `every` None, counting every read
    of the reverse sweep; else counting value reads only, plus the in-place
    updates in `every` (recorded by value whatever reads them).  `seen`:
    each statement's `Prim.reads`, filled as they are asked."""
    recorded: set = set()
    shapes_too = every is None
    updating = _updating_calls(prims) if shapes_too else {}

    # (the live sets are mutable and updated in place: only membership in
    # them decides what is recorded, and straight-line code copies none)
    def transfer(stmt, live):
        if stmt in updating and not live.isdisjoint(updating[stmt]):
            facts.clobbered[stmt] = frozenset(live & updating[stmt])    # (refused)
        if isinstance(stmt, gast.Assign):
            return _record_assignment(stmt, live, prims, facts, shares, heirs, recorded,
                                      shapes_too, every, seen)
        if isinstance(stmt, gast.If):
            live.update(scopes.load_names(stmt.test))
            if shapes_too:
                live.update(_zeroed(stmt, prims, facts, useful))
        return live

    def loop_entry(loop, live):
        # The reversed loop re-evaluates a `for` header; a `while` loop is
        # reversed with its trip count and never reads its test.
        if isinstance(loop, gast.For):
            live.update(scopes.load_names(loop.iter))
        if shapes_too:
            live.update(_zeroed(loop, prims, facts, useful))
        return live

    def loop_exit(loop, live):
        if shapes_too:
            live.update(_zeroed(loop, prims, facts, useful, exit=True))
        return live

    # The gradients are shaped like the parameters' values at entry.
    Walk(transfer, set.union, loop_entry=loop_entry, loop_exit=loop_exit, fork=set.copy).run(
        body, set(wrt))
    return recorded


def _updating_calls(prims) -> dict:
    """The calls of helpers that update an argument in place (surely, or
    `+=` on an array; inside `stop_gradient(...)`; a function value that
    may be one) -> the locals they may update.  Nothing records those
    values before the call."""
    out = {}
    for stmt, prim in prims.items():
        names = prim.updated_names
        if prim.kind == DYNAMIC and not prim.pure:
            names |= {n for node in prim.binding.values() for n in names_of(node)}
        if names:
            out[stmt] = names
    return out


def _record_assignment(stmt, live, prims, facts, shares, heirs, recorded, shapes_too, every,
                       seen):
    """Record `stmt` if it overwrites a value still live for the adjoint
    sweep, and return the names live after it (forward transfer; `live` is
    updated in place)."""
    target = stmt.targets[0].id
    prim = prims[stmt]
    reads, reads_result = _reverse_reads(stmt, prims, facts, shapes_too, seen)
    overwritten = {target} | shares.get(stmt, frozenset())
    if (not live.isdisjoint(overwritten) or target in reads) and not prim.keeps_values or \
            every is not None and stmt in every and prim.inplace:
        recorded.add(stmt)
    live.update(reads)
    live.discard(target)
    if stmt in recorded:
        live.update(heirs.get(stmt, ()))
    if reads_result or stmt in recorded and prim.inplace:
        live.add(target)            # (an in-place restore writes into it)
    if stmt in recorded and prim.inplace:     # ...at its index
        for slot in ("index", "position"):
            if slot in prim.binding:
                live.update(scopes.load_names(prim.binding[slot]))
    return live


def _zeroed(block, prims, facts, useful, exit: bool = False) -> set:
    """Names whose value the reverse sweep reads to fill a zero adjoint
    where control flow joins around `block` (they must be kept)."""
    # Where control flow joins, the reverse sweep fills an adjoint that
    # is zero on one path with `zeros_like(x)`, reading x's value at the
    # start of the block (in a loop: of every iteration; and at its exit):
    # for names the block assigns that may carry an adjoint past its end,
    # and names it contributes to (their adjoint starts in the block).
    killed = {s.targets[0].id for s in scopes.assignments([block])
              if _kills(s, prims, facts)}
    if isinstance(block, gast.If):      # killed on every path: nothing to fill
        killed -= (_killed_always(block.body, prims, facts)
                   & _killed_always(block.orelse, prims, facts))
    contributed = {op for s in scopes.assignments([block]) if s in facts.active
                   for op in prims[s].operands
                   if op in facts.varied_before.get(s, State())}
    after = useful.get(block, set())       # (such an adjoint is live on every path)
    if not isinstance(block, gast.If):         # a loop fills them before it, at its exit
        if not exit:
            return facts.carriers & killed & after
        # (useful after the loop is no proof that the adjoint is live at
        # its exit: a path after it may kill it, so keep the value)
        return facts.carriers & ((killed & after) | contributed)
    return facts.carriers & ((killed & after) | (contributed - after))


def _kills(stmt, prims, facts) -> bool:
    """Whether `stmt` kills its target's adjoint: it is inactive, or does
    not read its own target."""
    return stmt not in facts.active or stmt.targets[0].id not in prims[stmt].operands


def _killed_always(body, prims, facts) -> set:
    """Names whose adjoint `body` zeroes on every path through it."""
    out = set()
    for stmt in body:
        if isinstance(stmt, gast.Assign) and _kills(stmt, prims, facts):
            out.add(stmt.targets[0].id)
        elif isinstance(stmt, gast.If):
            out |= (_killed_always(stmt.body, prims, facts)
                    & _killed_always(stmt.orelse, prims, facts))
    return out


def _reverse_reads(stmt, prims, facts, shapes_too: bool, seen: dict) -> tuple[State, bool]:
    """(names whose values the statement's adjoint reads, reads the result);
    with `shapes_too`, counting the names it reads the shape of.  `seen`
    holds `Prim.reads` of the statements asked before (what it depends on,
    the primitive and the varied names before the statement, is fixed)."""
    if stmt not in facts.active:
        return State(), False
    prim = prims[stmt]
    target = stmt.targets[0].id
    if stmt not in seen:
        seen[stmt] = prim.reads(facts.varied_before.get(stmt, State()))
    reads, reads_result = seen[stmt]
    varied = facts.varied_before.get(stmt, State())
    if not shapes_too:
        return reads, reads_result
    reads = set(reads)
    if prim.kind == RULE and prim.rule.elementwise:
        # un-broadcasting reads a varied operand's shape unless proven equal
        same = facts.shapes.same_shape.get(stmt, State())
        reads |= {facts.shapes.witness(stmt, n) for n in prim.operands
                  if n in varied and n not in same}
    if stmt in facts.shapes.expand or stmt in facts.shapes.needs_full:    # reads z's shape
        witness = facts.shapes.witness(stmt, target)
        reads_result |= witness == target
        reads |= {witness} - {target}
    return State(reads), reads_result
