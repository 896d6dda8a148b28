"""Shape facts over an ANF body, written into the analysis' `Facts.shapes`.

- shape classes (forward, must): two names in one class have equal shapes
  at run time (`shape_classes`); from them, `same_shape`: for an elementwise
  primitive, the operands proven to have the result's shape, so no
  un-broadcasting is needed; and `scalars`: names every assignment of which
  gives a scalar (a number, a full reduction, arithmetic on those), whose
  adjoints are scalars too.
- compact (backward, may): adjoints that may be smaller than their value
  (a reduction's, unfilled), and where they must be spread (`compact`);
  `ShapeFacts.witness` names a never-reassigned parameter of the same shape
  class, read instead of an intermediate whose shape is all the reverse
  needs.

Both run after activity (they read `Facts.active` and `varied_before`).
"""
from __future__ import annotations

import itertools
import operator

import gast

from . import astutil, scopes, traversal
from .dataflow import State, Walk
from .ir import CONST, COPY, RULE, SEQUENCE_OPERATORS, Prim, member
from .rules.registry import ELEMENTWISE, REDUCTION, SCALAR


def compact(body, prims, facts) -> None:
    """compact (backward, may): names whose adjoint may be *compact* - smaller
    than the value, standing for its broadcast (runtime.unbroadcast).

    A reduction's operand gets its result's adjoint unfilled (`d[a] += g`
    for `rt.spread(a, g)`).  An elementwise rule passes a compact adjoint
    on, un-broadcast, where that is exact: when its contribution reads every
    other operand or the result (so it spans every broadcast axis), or the
    operand has the result's shape; elsewhere the sum needs the result's
    shape (`needs_full`).  Every other rule gets its adjoint spread first
    (`expand`).  A contribution that reads the operand or the result is full.
    Names a loop assigns are never left compact (they get `needs_full`), so
    no spreading runs inside a loop.
    """
    facts.shapes.in_loops = _assigned_in_loops(body)
    Walk(lambda stmt, state: _compact_step(stmt, state, prims, facts), State.union,
         backward=True).run(body, State())


def _compact_step(stmt, state, prims, facts) -> State:
    """The names whose adjoint may be compact just before `stmt`, given
    those just after it; marks where one is spread or must be full
    (`expand`, `needs_full`)."""
    if not isinstance(stmt, gast.Assign):
        return state
    target = stmt.targets[0].id
    incoming = target in state
    state = state - {target}
    if stmt not in facts.active:
        return state
    prim = prims[stmt]
    varied = facts.varied_before.get(stmt, State())
    if prim.kind == COPY:
        source = prim.operands[0]
        if incoming and source in facts.shapes.in_loops:
            facts.shapes.needs_full.setdefault(stmt, set()).add(source)
            return state
        return state | ({source} if incoming else set())
    tolerant = prim.kind == RULE and prim.rule.elementwise and not prim.inplace \
        and target not in prim.operands
    if incoming and not tolerant:
        facts.shapes.expand.add(stmt)
    if prim.kind != RULE:
        return state
    return state | _compact_operands(stmt, prim, target, varied, facts,
                                     incoming and tolerant)


def _assigned_in_loops(body) -> frozenset:
    """The names a loop of `body` assigns (their adjoints are never left
    compact: no spreading runs inside a loop)."""
    return frozenset(
        n.id for loop in scopes.statements(body) if isinstance(loop, (gast.For, gast.While))
        for inner in loop.body for n in traversal.walk(inner)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))


def _compact_operands(stmt, prim, target, varied, facts, incoming) -> set:
    tpl = prim.rule.template
    if tpl is None:                     # only a tangent rule: no adjoint to compact
        return set()
    reads = dict(tpl.reads)
    bound = {p: node.id for p, node in prim.binding.items() if isinstance(node, gast.Name)}
    same = facts.shapes.same_shape.get(stmt, State())
    compact = set()
    for param, name in bound.items():
        if name not in varied or param not in reads:
            continue
        if param in tpl.spreads:
            if name not in facts.shapes.in_loops:
                compact.add(name)
            continue
        if not incoming:
            continue
        read = reads[param]
        covers = tpl.result in read or {p for p in bound if p != param} <= read
        if name not in same and not covers:
            facts.shapes.needs_full.setdefault(stmt, set()).add(name)      # summed exactly, so full
        elif tpl.result not in read and param not in read and \
                facts.shapes.classes.get(stmt, {}).get(name) != "scalar":
            if name in facts.shapes.in_loops:      # spread here, not in every iteration
                facts.shapes.needs_full.setdefault(stmt, set()).add(name)
            else:
                compact.add(name)
    return compact


def shape_classes(body, prims, wrt, facts) -> None:
    """Shape classes: two names in one class have equal shapes at run time.

    A class is a parameter's name, "scalar" (a number: neutral under
    broadcasting), or a fresh token for a shape nothing is known about.
    """
    fresh = itertools.count()
    scalar, other = set(), set()
    numeric = numeric_names(prims)

    def transfer(stmt, cls: dict) -> dict:      # (updated in place: see `fork`)
        if not isinstance(stmt, gast.Assign):
            return cls
        prim = prims.get(stmt)
        operands = scopes.load_names(stmt.value)       # (a new list: kept below)
        for name in operands:
            if name not in cls:
                cls[name] = f"?{next(fresh)}"          # unknown, but one shape
        shape = _assigned_shape(stmt, prim, numeric, cls, facts)
        target = stmt.targets[0].id
        cls[target] = shape if shape is not None else f"?{next(fresh)}"
        (scalar if shape == "scalar" else other).add(target)
        if target not in operands:          # `x = f(x)`: no witness for either x
            facts.shapes.classes[stmt] = {n: cls.get(n) for n in [*operands, target]}
        return cls

    # Loops start from the facts at entry and intersect to a fixpoint: a
    # fact kept at the head holds on every iteration.  A name with no class
    # gets a fresh one where it is first read (one unknown shape).
    def loop_entry(loop, cls: dict) -> dict:
        if isinstance(loop, gast.For):
            cls[loop.target.id] = "scalar"  # normalized loops count over a range
        return cls

    out = Walk(transfer, _join_classes, loop_entry=loop_entry, fork=dict.copy).run(
        body, {w: w for w in wrt})
    facts.shapes.shape_out = dict(out or {})
    facts.shapes.scalars = scalar - other - set(wrt)


def _assigned_shape(stmt, prim, numeric, cls: dict, facts) -> str | None:
    """The class of the value `stmt` assigns (None: unknown); for an
    elementwise rule, records its operands of that class (`same_shape`)."""
    shape = _shape_of(prim, cls) if prim is not None else None
    if prim is not None and _may_join(prim, numeric, cls):
        shape = None        # a list joined or repeated: not the operands' shape
    if prim is not None and prim.kind == RULE and prim.rule.elementwise:
        facts.shapes.same_shape[stmt] = State(
            n for n in prim.operands if shape is not None and cls.get(n) == shape)
    if shape is None and astutil.is_number(stmt.value):
        shape = "scalar"
    return shape


def _join_classes(a: dict, b: dict) -> dict:
    """The class facts two paths agree on (where they meet)."""
    return {k: v for k, v in a.items() if b.get(k) == v}


def numeric_names(prims: dict) -> set[str]:
    """Names every assignment of which binds a number or an array, never a
    list or tuple: the result of a NumPy-like rule (elementwise, scalar or
    reduction), of Python's `+`/`*` with such an operand, a number, or a
    copy of such a name (flow-insensitive; a parameter is not known)."""
    bindings: dict[str, list] = {}
    for stmt, prim in prims.items():
        if isinstance(stmt, gast.Assign):
            bindings.setdefault(stmt.targets[0].id, []).append((stmt, prim))
    numeric = set(bindings)
    while True:         # the greatest fixpoint: drop names with a binding not known numeric
        dropped = {n for n in numeric
                   if not all(_makes_numeric(s, p, numeric) for s, p in bindings[n])}
        if not dropped:
            return numeric
        numeric -= dropped


def _makes_numeric(stmt, prim: Prim, numeric: set) -> bool:
    if prim.kind == COPY:
        return prim.operands[0] in numeric
    if prim.kind == CONST:
        return astutil.is_number(stmt.value)
    if prim.kind != RULE:
        return False
    if member(prim.key, SEQUENCE_OPERATORS):
        return not _may_join(prim, numeric, {})
    return prim.rule.shape in (ELEMENTWISE, SCALAR, REDUCTION)


def _may_join(prim: Prim, numeric: set, cls: dict) -> bool:
    """Python's `+`/`*` under NumPy's rule whose operands may be lists or
    tuples it joins or repeats: none is surely an array or number.  A
    number operand settles `+` (a list plus a number is an error), a float
    settles `*` (an int repeats a list), and so does `x * x`."""
    if prim.kind != RULE or not prim.rule.elementwise or not member(prim.key, SEQUENCE_OPERATORS):
        return False
    operands = list(prim.binding.values())
    mul = prim.key in (operator.mul, operator.imul)
    if mul and len(operands) == 2 and all(isinstance(n, gast.Name) for n in operands) \
            and operands[0].id == operands[1].id:
        return False
    numbers = (float, complex) if mul else (int, float, complex)
    return not any(isinstance(n, gast.Name) and (n.id in numeric or not mul and
                                                 cls.get(n.id) == "scalar")
                   or astutil.is_number(n) and isinstance(astutil.literal_value(n), numbers)
                   for n in operands)


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
