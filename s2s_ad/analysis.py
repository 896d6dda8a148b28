"""Data-flow facts over an ANF body, returned as side tables.

All analyses walk the structured ANF (if/for/while, break, continue) with
joins at merges and fixpoints at loop heads; nothing is written onto nodes.

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
  restores those.
- same_shape (forward, must): for an elementwise primitive, the operands
  proven to have the result's shape, so no un-broadcasting is needed.
- scalars: names every assignment of which gives a scalar (a number, a full
  reduction, arithmetic on those); their adjoints are scalars too.
- compact (backward, may): adjoints that may be smaller than their value
  (a reduction's, unfilled), and where they must be spread (`_compact`);
  `Facts.witness` names a never-reassigned parameter of the same shape class,
  read instead of an intermediate whose shape is all the reverse needs.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

import gast

from . import astutil
from .primitives import CALL, COPY, RULE, Prim
from .rules.registry import ELEMENTWISE, REDUCTION, SCALAR

State = frozenset


@dataclass
class Facts:
    active: set = field(default_factory=set)               # id(stmt)
    varied_before: dict = field(default_factory=dict)      # id(stmt) -> varied names it reads
    recorded: set = field(default_factory=set)             # id(stmt)
    same_shape: dict = field(default_factory=dict)         # id(stmt) -> State
    varied_out: State = State()                            # varied at the return
    shape_out: dict = field(default_factory=dict)          # name -> class at the return
    scalars: set = field(default_factory=set)              # names only ever bound to scalars
    classes: dict = field(default_factory=dict)            # id(stmt) -> {name: class}
    stable: frozenset = frozenset()                        # wrt parameters never reassigned
    spread: bool = False                                   # compact adjoints allowed
    expand: set = field(default_factory=set)               # id(stmt): spread d[target] first
    needs_full: dict = field(default_factory=dict)         # id(stmt) -> operands: see compact
    in_loops: frozenset = frozenset()                      # names a loop assigns: never compact
    carriers: frozenset = frozenset()                      # names that may have an adjoint
    kills: set = field(default_factory=set)                # id(stmt): inactive, kills an adjoint

    def witness(self, stmt, name: str) -> str:
        """A name with `name`'s shape at `stmt` whose value never changes:
        a wrt parameter of the same shape class, else `name` itself."""
        if name in self.stable:
            return name
        cls = self.classes.get(id(stmt), {}).get(name)
        return cls if cls in self.stable else name


class _Walk:
    """A structured forward or backward walk with a join and a transfer."""

    def __init__(self, transfer: Callable, join: Callable, backward: bool = False,
                 loop_entry: Callable | None = None, loop_exit: Callable | None = None,
                 at_exit: Callable | None = None):
        self.transfer, self.join, self.backward = transfer, join, backward
        self.at_exit = at_exit
        self.loop_entry = loop_entry or (lambda stmt, state: state)
        self.loop_exit = loop_exit or (lambda stmt, state: state)
        self._loops: list = []

    def run(self, body: list, state):
        stmts = reversed(body) if self.backward else body
        for stmt in stmts:
            state = self.step(stmt, state)
            if state is None:           # after break/continue: unreachable
                return None
        return state

    def step(self, stmt, state):
        if isinstance(stmt, gast.If):
            if self.backward and self.at_exit:      # the state just after the `if`
                self.at_exit(stmt, state)
            if not self.backward:
                state = self.transfer(stmt, state)
            state = self._join(self.run(stmt.body, state), self.run(stmt.orelse, state))
            return self.transfer(stmt, state) if self.backward and state is not None \
                else state
        if isinstance(stmt, (gast.For, gast.While)):
            return self._loop(stmt, state)
        if isinstance(stmt, (gast.Break, gast.Continue)):
            return self._jump(stmt, state)
        return self.transfer(stmt, state)

    def _join(self, a, b):
        if a is None or b is None:
            return a if b is None else b
        return self.join(a, b)

    def _loop(self, loop, state):
        """Iterate the body to a fixpoint at the loop head."""
        head, jumps = state, None
        for _ in range(1000):
            # frame: [state a `continue` sees, joined states of `break`s (forward)
            #         / state a `break` sees (backward)]
            frame = [head, state] if self.backward else [None, None]
            self._loops.append(frame)
            entry = head if self.backward else self.loop_entry(loop, head)
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
        if self.backward:
            return self.transfer(loop, head)
        out = self._join(head, jumps)
        return None if out is None else self.loop_exit(loop, out)

    def _jump(self, stmt, state):
        frame = self._loops[-1]
        is_break = isinstance(stmt, gast.Break)
        if self.backward:
            # Walking backward, `break` sees the loop exit, `continue` the head.
            return frame[1] if is_break else frame[0]
        slot = 1 if is_break else 0
        frame[slot] = self._join(frame[slot], state)
        return None


def analyze(body: list, prims: dict[int, Prim], wrt: list[str],
            outputs: list[str], spread: bool = True, shares=None, heirs=None) -> Facts:
    facts = Facts(spread=spread)
    _varied(body, prims, wrt, facts)
    useful_after = _useful(body, prims, outputs, facts)
    for stmt in astutil.assignments(body):
        target = stmt.targets[0].id
        varied_after = _varied_after(stmt, prims, facts)
        if target in useful_after.get(id(stmt), ()) and varied_after:
            facts.active.add(id(stmt))
    facts.carriers = _carriers(body, prims, wrt, outputs, facts)
    facts.kills = {id(s) for s in astutil.assignments(body)
                   if id(s) not in facts.active and s.targets[0].id in facts.carriers}
    _shapes(body, prims, wrt, facts)
    stored = {n.id for n in gast.walk(astutil.module(body))
              if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    facts.stable = frozenset(wrt) - stored
    if spread:
        _compact(body, prims, facts)
    _recorded(body, prims, wrt, facts, useful_after, shares or {}, heirs or {})
    return facts


def _carriers(body, prims, wrt, outputs, facts) -> frozenset:
    """Names whose adjoint may be nonzero somewhere: the parameters, the
    outputs, and the targets and varied operands of active statements."""
    names = set(wrt) | set(outputs)
    for stmt in astutil.assignments(body):
        if id(stmt) in facts.active:
            varied = facts.varied_before.get(id(stmt), State())
            names.add(stmt.targets[0].id)
            names.update(op for op in prims[id(stmt)].operands if op in varied)
    return frozenset(names)


def _varied_after(stmt, prims, facts) -> bool:
    prim = prims.get(id(stmt))
    if prim is None or prim.kind not in (COPY, RULE, CALL, "unknown"):
        return False
    before = facts.varied_before.get(id(stmt), State())
    return any(op in before for op in prim.operands)


def _varied(body, prims, wrt, facts) -> None:
    def transfer(stmt, state):
        # kept per statement: only the names it reads (linear memory)
        if isinstance(stmt, gast.Expr):
            facts.varied_before[id(stmt)] = state & set(astutil.load_names(stmt))
        if isinstance(stmt, gast.Assign):
            facts.varied_before[id(stmt)] = state & set(astutil.load_names(stmt.value))
            target = stmt.targets[0].id
            if _varied_after(stmt, prims, facts):
                return state | {target}
            return state - {target}
        return state

    def loop_entry(loop, state):
        if isinstance(loop, gast.For):
            target = loop.target.id
            varied = any(n in state for n in astutil.load_names(loop.iter))
            return state | {target} if varied else state - {target}
        return state

    facts.varied_out = _Walk(transfer, State.union, loop_entry=loop_entry).run(
        body, State(wrt)) or State()


def _useful(body, prims, outputs, facts) -> dict:
    """id(stmt) -> names useful just after the statement (for an assignment:
    whether its target is)."""
    after: dict = {}

    def at_exit(stmt, state):
        after[id(stmt)] = state

    def transfer(stmt, state):
        if isinstance(stmt, (gast.For, gast.While)):
            after[id(stmt)] = state         # at the loop head
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0].id
            after[id(stmt)] = state & {target}      # all that is asked of it
            if target not in state:
                return state
            prim = prims[id(stmt)]
            before = facts.varied_before.get(id(stmt), State())
            return (state - {target}) | {op for op in prim.operands if op in before}
        if isinstance(stmt, gast.For):
            target = stmt.target.id
            if target in state:
                return state | set(astutil.load_names(stmt.iter))
        return state

    start = State(outputs)
    _Walk(transfer, State.union, backward=True, at_exit=at_exit).run(body, start)
    return after


def _recorded(body, prims, wrt, facts, useful, shares, heirs) -> None:
    """Mark assignments that destroy a value the adjoint sweep reads later
    (an in-place update also destroys the values of the names in `shares`;
    a value recorded by reference lives on in its `heirs`, which must then
    keep their values too).

    The reverse sweep restores recorded targets as it goes, so at the adjoint
    of a statement every variable holds its value from just after it.
    """
    def transfer(stmt, live):
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0].id
            reads, reads_result = _reverse_reads(stmt, prims, facts)
            overwritten = {target} | shares.get(id(stmt), frozenset())
            if (live & overwritten or target in reads) and not prims[id(stmt)].keeps_values:
                facts.recorded.add(id(stmt))
            live = (live | reads) - {target}
            if id(stmt) in facts.recorded:
                live = live | heirs.get(id(stmt), frozenset())
            prim = prims[id(stmt)]
            if reads_result or id(stmt) in facts.recorded and prim.inplace:
                live = live | {target}      # (an in-place restore writes into it)
            if id(stmt) in facts.recorded and prim.inplace:     # ...at its index
                for slot in ("index", "position"):
                    if slot in prim.binding:
                        live = live | set(astutil.load_names(prim.binding[slot]))
            return live
        if isinstance(stmt, gast.If):
            return live | set(astutil.load_names(stmt.test)) | zeroed(stmt)
        return live

    def zeroed(block, exit: bool = False) -> set:
        # Where control flow joins, the reverse sweep fills an adjoint that
        # is zero on one path with `zeros_like(x)`, reading x's value at the
        # start of the block (in a loop: of every iteration; and at its exit):
        # for names the block assigns that may carry an adjoint past its end,
        # and names it contributes to (their adjoint starts in the block).
        killed = {s.targets[0].id for s in astutil.assignments([block]) if kills(s)}
        if isinstance(block, gast.If):      # killed on every path: nothing to fill
            killed -= killed_always(block.body) & killed_always(block.orelse)
        contributed = {op for s in astutil.assignments([block]) if id(s) in facts.active
                       for op in prims[id(s)].operands
                       if op in facts.varied_before.get(id(s), State())}
        after = useful.get(id(block), set())       # (such an adjoint is live on every path)
        if not isinstance(block, gast.If):         # a loop fills them before it, at its exit
            if not exit:
                return facts.carriers & killed & after
            # (useful after the loop is no proof that the adjoint is live at
            # its exit: a path after it may kill it, so keep the value)
            return facts.carriers & ((killed & after) |
                                     (contributed - astutil.stored_names(block)))
        return facts.carriers & ((killed & after) | (contributed - after))

    def kills(stmt) -> bool:
        return id(stmt) not in facts.active or stmt.targets[0].id not in prims[id(stmt)].operands

    def killed_always(body) -> set:
        out = set()
        for stmt in body:
            if isinstance(stmt, gast.Assign) and kills(stmt):
                out.add(stmt.targets[0].id)
            elif isinstance(stmt, gast.If):
                out |= killed_always(stmt.body) & killed_always(stmt.orelse)
        return out

    def loop_entry(loop, live):
        # The reversed loop re-evaluates a `for` header; a `while` loop is
        # reversed with its trip count and never reads its test.
        if isinstance(loop, gast.For):
            live = live | set(astutil.load_names(loop.iter))
        return live | zeroed(loop)

    def loop_exit(loop, live):
        return live | zeroed(loop, exit=True)

    # The gradients are shaped like the parameters' values at entry.
    _Walk(transfer, State.union, loop_entry=loop_entry, loop_exit=loop_exit).run(
        body, State(wrt))


def _reverse_reads(stmt, prims, facts) -> tuple[State, bool]:
    """(names whose values the statement's adjoint reads, reads the result)."""
    if id(stmt) not in facts.active:
        return State(), False
    prim = prims[id(stmt)]
    target = stmt.targets[0].id
    varied = facts.varied_before.get(id(stmt), State())
    reads, reads_result = prim.reads(varied)
    reads = set(reads)
    if prim.kind == RULE and prim.rule.elementwise:
        # un-broadcasting reads a varied operand's shape unless proven equal
        same = facts.same_shape.get(id(stmt), State())
        reads |= {facts.witness(stmt, n) for n in prim.operands
                  if n in varied and n not in same}
    if id(stmt) in facts.expand or id(stmt) in facts.needs_full:    # reads z's shape
        witness = facts.witness(stmt, target)
        reads_result |= witness == target
        reads |= {witness} - {target}
    return State(reads), reads_result


def _compact(body, prims, facts) -> None:
    """compact (backward, may): names whose adjoint may be *compact* - smaller
    than the value, standing for its broadcast (runtime.unbroadcast).

    A reduction's operand gets its result's adjoint unfilled (`d[a] += g`
    for `np.full_like(a, g)`).  An elementwise rule passes a compact adjoint
    on, un-broadcast, where that is exact: when its contribution reads every
    other operand or the result (so it spans every broadcast axis), or the
    operand has the result's shape; elsewhere the sum needs the result's
    shape (`needs_full`).  Every other rule gets its adjoint spread first
    (`expand`).  A contribution that reads the operand or the result is full.
    Names a loop assigns are never left compact (they get `needs_full`), so
    no spreading runs inside a loop.
    """
    def transfer(stmt, state):
        if not isinstance(stmt, gast.Assign):
            return state
        target = stmt.targets[0].id
        incoming = target in state
        state = state - {target}
        if id(stmt) not in facts.active:
            return state
        prim = prims[id(stmt)]
        varied = facts.varied_before.get(id(stmt), State())
        if prim.kind == COPY:
            source = prim.operands[0]
            if incoming and source in facts.in_loops:
                facts.needs_full.setdefault(id(stmt), set()).add(source)
                return state
            return state | ({source} if incoming else set())
        tolerant = prim.kind == RULE and prim.rule.elementwise and not prim.inplace \
            and target not in prim.operands
        if incoming and not tolerant:
            facts.expand.add(id(stmt))
        if prim.kind != RULE:
            return state
        return state | _compact_operands(stmt, prim, target, varied, facts,
                                         incoming and tolerant)

    facts.in_loops = frozenset(
        n.id for loop in astutil.statements(body) if isinstance(loop, (gast.For, gast.While))
        for inner in loop.body for n in gast.walk(inner)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    _Walk(transfer, State.union, backward=True).run(body, State())


def _compact_operands(stmt, prim, target, varied, facts, incoming) -> set:
    tpl = prim.rule.template
    reads = dict(tpl.reads)
    bound = {p: node.id for p, node in prim.binding.items() if isinstance(node, gast.Name)}
    same = facts.same_shape.get(id(stmt), State())
    compact = set()
    for param, name in bound.items():
        if name not in varied or param not in reads:
            continue
        if param in tpl.spreads:
            if name not in facts.in_loops:
                compact.add(name)
            continue
        if not incoming:
            continue
        read = reads[param]
        covers = tpl.result in read or {p for p in bound if p != param} <= read
        if name not in same and not covers:
            facts.needs_full.setdefault(id(stmt), set()).add(name)      # summed exactly, so full
        elif tpl.result not in read and param not in read and \
                facts.classes.get(id(stmt), {}).get(name) != "scalar":
            if name in facts.in_loops:      # spread here, not in every iteration
                facts.needs_full.setdefault(id(stmt), set()).add(name)
            else:
                compact.add(name)
    return compact


def _shapes(body, prims, wrt, facts) -> None:
    """Shape classes: two names in one class have equal shapes at run time.

    A class is a parameter's name, "scalar" (a number: neutral under
    broadcasting), or a fresh token for a shape nothing is known about.
    """
    fresh = itertools.count()
    scalar, other = set(), set()

    def transfer(stmt, state):
        if not isinstance(stmt, gast.Assign):
            return state
        cls = dict(state)
        prim = prims.get(id(stmt))
        for name in astutil.load_names(stmt.value):
            cls.setdefault(name, f"?{next(fresh)}")     # unknown, but one shape
        shape = _shape_of(prim, cls) if prim is not None else None
        if prim is not None and prim.kind == RULE and prim.rule.elementwise:
            facts.same_shape[id(stmt)] = State(
                n for n in prim.operands if shape is not None and cls.get(n) == shape)
        if shape is None and astutil.is_number(stmt.value):
            shape = "scalar"
        target = stmt.targets[0].id
        cls[target] = shape if shape is not None else f"?{next(fresh)}"
        (scalar if shape == "scalar" else other).add(target)
        operands = list(astutil.load_names(stmt.value))
        if target not in operands:          # `x = f(x)`: no witness for either x
            facts.classes[id(stmt)] = {n: cls.get(n) for n in [*operands, target]}
        return State(cls.items())

    # Loops start from the facts at entry and intersect to a fixpoint: a
    # fact kept at the head holds on every iteration.  A name with no class
    # gets a fresh one where it is first read (one unknown shape).
    def loop_entry(loop, state):
        if not isinstance(loop, gast.For):
            return state
        target = loop.target.id             # normalized loops count over a range
        return State([(k, v) for k, v in state if k != target] + [(target, "scalar")])

    out = _Walk(transfer, State.intersection, loop_entry=loop_entry).run(
        body, State((w, w) for w in wrt))
    facts.shape_out = dict(out or ())
    facts.scalars = scalar - other - set(wrt)


def _shape_of(prim: Prim, cls: dict):
    """The class of a primitive's result, or None if unknown."""
    if prim.kind == COPY:
        return cls.get(prim.operands[0])
    if prim.kind != RULE:
        return prim.shape_hint
    shape = prim.rule.shape
    if shape == ELEMENTWISE:
        return _broadcast([_class_of(n, cls) for n in prim.binding.values()
                           if _is_operand(n)])
    if shape == SCALAR:
        # every operand is a scalar too: all share one shape, ()
        classes = {_class_of(n, cls) for n in prim.binding.values() if _is_operand(n)}
        return classes.pop() if len(classes) == 1 else "scalar"
    if shape == REDUCTION and _is_none(prim.binding.get("axis")) and \
            not _is_true(prim.binding.get("keepdims")):
        return "scalar"
    return None


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _is_true(node) -> bool:
    return not (isinstance(node, gast.Constant) and node.value is False)


def _is_operand(node) -> bool:
    return isinstance(node, gast.Name) or astutil.is_number(node)


def _class_of(node, cls):
    if astutil.is_number(node):
        return "scalar"
    return cls.get(node.id)


def _broadcast(classes):
    """The class of a broadcast of operands, if statically known."""
    known = {c for c in classes if c != "scalar"}
    if None in known or len(known) > 1:
        return None
    return known.pop() if known else "scalar"
