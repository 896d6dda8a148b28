"""Reverse mode: ANF function -> adjoint function (forward sweep + reverse sweep).

The generated function takes the primal's parameters and runs:

1. the forward sweep: the primal's statements, plus a save (straight-line
   code) or a tape push (inside loops) before each assignment that destroys
   a value the reverse sweep will read (`Facts.recorded`), and a trip
   counter for loops whose trip count is not known from their header;
2. the seed of the output's adjoint;
3. the reverse sweep: each active statement's rule in reverse order, mirroring
   the primal's structure (an `if` for an `if`, a reversed loop for a loop),
   restoring recorded values as it goes, so that at each statement's adjoint
   every variable holds its value from just after that statement.

Zero is a static fact: `plan.live` holds the primal names whose adjoint
variable holds a (possibly) nonzero value.  The first contribution assigns,
later ones accumulate; an adjoint known to be zero emits nothing.  Each
contribution is written with the shape its rule gives it, and recorded in
`Adjoint.sites`: the shape decisions are lower.py's, a pass of their own.
Adjoint code here never updates an array in place (`dx = dx + e`), so
adjoints may alias; ownership.py later makes the updates of arrays that
provably do not alias in place.
"""
from __future__ import annotations

import gast

from . import astutil, runtime, scopes, templates
from .ir import (COPY, RULE, UNKNOWN, Site, Adjoint, Facts, Normalized, PairRef, Prim, Request, Source,
                 with_marker)
from . import reverse_boundary as boundary
from . import reverse_forward as sweep
from . import reverse_rules as rules_of
from .param_copies import param_copies
from .reverse_forward import index_of
from .reverse_plan import Plan, adjoint_name, make_plan, name_reserved, unbound_locals

__all__ = ["Adjoint", "PairRef", "Request", "reverse"]


def reverse(norm: Normalized, src: Source, prims: dict[gast.stmt, Prim],
            facts: Facts, req: Request, output: gast.expr | None,
            aux: gast.expr | None) -> Adjoint:
    plan = make_plan(norm, src, prims, facts, req)
    body = norm.tree.body[:-1]                    # the final Return is ours
    forward_code = sweep.forward(plan, body)
    seed_code = boundary.seed(plan, output, req, src)
    if req.mode in ("value_and_grad", "grad"):   # what the user receives, fixed now
        kept, output, aux = boundary.capture(plan, body, output, aux, req)
        seed_code = kept + seed_code
    if req.mode == "pair":                        # split here by `split_pair`
        seed_code.insert(0, astutil.split(astutil.clone(output)))
    backward_code = backward(plan, body)
    ret = boundary.returns(plan, output, aux, req)
    prologue = [astutil.assign(p, astutil.call(f"{plan.rt}.copy", [astutil.name(p)]))
                for p in param_copies(body, prims, plan.params, norm.shares)]
    prologue += [astutil.assign(n, astutil.const(None)) for n in
                 unbound_locals(plan, forward_code + seed_code + backward_code + ret)]
    if plan.tape:
        prologue.append(astutil.assign(plan.tape, astutil.list_([])))
    fdef = astutil.function_def(plan.name, _arguments(norm, req),
                                prologue + forward_code + seed_code + backward_code + ret)
    name_reserved(plan, fdef)
    scalars = facts.shapes.scalars | {plan.adj[n] for n in facts.shapes.scalars if n in plan.adj}
    temp_adjoints = {d: p for p, d in plan.adj.items() if p in norm.namer.temps}
    return Adjoint(fdef, plan.imports, plan.seed_param, frozenset(scalars), plan.pair_names,
                   temp_adjoints, plan.sites, plan.rule_starts, plan.rt)


def _arguments(norm: Normalized, req: Request) -> gast.arguments:
    """The primal's parameters, and a vjp's seed (a pair's goes to its bwd half)."""
    args = astutil.clone(norm.tree.args)
    if req.seed and req.mode == "vjp":
        if args.defaults or args.kwonlyargs or args.vararg:
            args.kwonlyargs.append(astutil.param(req.seed))   # after defaults: keyword-only
            args.kw_defaults.append(None)
        else:
            args.args.append(astutil.param(req.seed))
    return args


# -- reverse sweep ----------------------------------------------------
def backward(plan: Plan, body: list) -> list:
    """The reverse sweep of `body`: one `Block` per user statement, its
    origin printed as `# grad of:`.  Consecutive code of one statement
    shares a block; code of the enclosing `if`'s statement needs none."""
    out, last_origin = [], plan.enclosing
    for stmt in reversed(body):
        marker = with_marker(stmt)
        if marker is not None:      # a with block setting state: its reverse runs under it
            kind = "exit" if marker[0] == "enter" else "enter"
            if _sets_state(marker[1], plan.src):
                out.append(astutil.expr_stmt(astutil.call(
                    f"{plan.rt}.{kind}", [astutil.clone(marker[1])])))
                last_origin = None
            continue
        if isinstance(stmt, gast.Assign):
            code = _assign(plan, stmt)
        elif isinstance(stmt, gast.If):
            code = _if(plan, stmt)
        elif isinstance(stmt, (gast.For, gast.While)):
            code = _loop(plan, stmt)
        else:
            code = []
        if not code:
            continue
        origin = plan.norm.origin.get(stmt, stmt)
        if origin is not last_origin:
            out.append(astutil.block("grad of: " + _header(origin), []))
        (out[-1].body if out and isinstance(out[-1], astutil.Block) else out).extend(code)
        last_origin = origin
    return out


def _assign(plan: Plan, stmt) -> list:
    target = stmt.targets[0].id
    prim = plan.prims[stmt]
    recorded = stmt in plan.facts.recorded
    code, old = [], None
    self_ref = target in prim.operands
    call = plan.calls.get(stmt)
    if call and plan.depth:
        code.append(astutil.assign(call[0], _pop(plan)))   # pushed last
    if recorded:
        if plan.depth == 0:
            old = plan.saves[stmt]
        elif self_ref:
            old = plan.namer.fresh(target + "_old")
            code.append(astutil.assign(old, _pop(plan)))
    if stmt in plan.facts.active and target in plan.live:
        if prim.kind == UNKNOWN:
            raise prim.problem
        code.extend(_rule(plan, stmt, prim, target, old if self_ref else None, call))
    else:
        plan.live.discard(target)
    if recorded:
        value = astutil.name(old) if old else _pop(plan)
        if prim.inplace:    # put the old values back where they were
            value = astutil.call(f"{plan.rt}.restore", [
                astutil.name(target), value] + index_of(prim))
        code.append(astutil.assign(target, value))
    return code


def _pop(plan: Plan) -> gast.expr:
    return astutil.call(astutil.attribute(astutil.name(sweep.tape_name(plan)), "pop"))


def _rule(plan: Plan, stmt, prim: Prim, target: str, old: str | None, call=None) -> list:
    code = []
    d_result = adjoint_name(plan, target)
    self_ref = target in prim.operands
    if self_ref:        # the old value's adjoint starts from zero
        plan.live.discard(target)
    if prim.kind == COPY:
        items = [templates.Contribution(prim.operands[0], astutil.name(d_result))]
    elif call is not None:
        items = rules_of.call_items(plan, prim, call, d_result)
    else:
        items = rules_of.rule_items(plan, stmt, prim, target, old, d_result)
    if self_ref and _read_after_write(items, d_result, {target, old}):
        # `x = f(x)` whose rule reads d[z] after writing d[x]: keep d[z]
        moved = plan.namer.fresh(d_result + "_next")
        code.append(astutil.assign(moved, astutil.name(d_result)))
        items = [_rename_item(item, d_result, moved) for item in items]
    varied = plan.facts.varied_before.get(stmt, frozenset())
    for item in items:
        if not isinstance(item, templates.Contribution):
            code.append(item)
        elif isinstance(item.primal, tuple):
            code.extend(_contribute_each(plan, stmt, prim, item, varied, old, target))
        else:
            code.extend(_contribute_one(plan, stmt, prim, item.primal, item.value,
                                             varied, old, target))
    if not self_ref:
        plan.live.discard(target)
    if code:                        # (lower.py may expand d_result before it)
        plan.rule_starts[code[0]] = (stmt, target, d_result)
    return code


def _contribute_one(plan: Plan, stmt, prim, primal, value, varied, old, target) -> list:
    if primal is not None and primal == old:
        primal = target
    if primal is None or primal not in varied:
        return []
    value_name = old if primal == target and old else primal
    return [_contribute(plan, stmt, prim, primal, value, value_name)]


def _contribute_each(plan: Plan, stmt, prim, item, varied, old, target) -> list:
    """A sequence contribution: one item of `value` per element (an
    element may be the old value of the target, `x = f(y, x)`)."""
    if not any((target if p == old and old else p) in varied for p in _flat(item.primal)):
        return []
    parts = plan.namer.temp("parts")
    code = [astutil.assign(parts, item.value)]
    for i, primal in enumerate(item.primal):
        value = astutil.subscript(astutil.name(parts), astutil.const(i))
        if isinstance(primal, tuple):
            code.extend(_contribute_each(plan, 
                stmt, prim, templates.Contribution(primal, value), varied, old, target))
        else:
            code.extend(_contribute_one(plan, stmt, prim, primal, value, varied,
                                             old, target))
    return code


def _contribute(plan: Plan, stmt, prim, primal, value, value_name) -> gast.stmt:
    """`d = value`, or `d = d + value` if `d` may hold a contribution
    already; lower.py gives `value` its shape."""
    d = adjoint_name(plan, primal)
    if primal in plan.live and _is_call_to(value, plan.rt, "unindex"):
        # (a scatter-add: in place where the code owns `d`, ownership.py)
        return astutil.assign(d, astutil.binop(astutil.name(d), gast.Add, value))
    accumulate = primal in plan.live
    if accumulate:
        value = astutil.binop(astutil.name(d), gast.Add, value)
    plan.live.add(primal)
    out = astutil.assign(d, value)
    rule = prim.kind == RULE
    plan.sites[out] = Site(stmt, primal, value_name, rule, rule and prim.rule.elementwise,
                           accumulate)
    return out


def _zero(plan: Plan, primal: str) -> gast.stmt:
    plan.live.add(primal)
    return astutil.assign(adjoint_name(plan, primal), astutil.call(
        f"{plan.rt}.zeros_like", [astutil.name(primal)]))


def _if(plan: Plan, stmt) -> list:
    before, outer = set(plan.live), plan.enclosing
    plan.enclosing = plan.norm.origin.get(stmt, stmt)
    body = backward(plan, stmt.body)
    after_body, plan.live = plan.live, set(before)
    orelse = backward(plan, stmt.orelse)
    plan.enclosing = outer
    after_else = plan.live
    joined = after_body | after_else
    plan.live = set()
    body += [_zero(plan, p) for p in sorted(joined - after_body)]
    plan.live = set()
    orelse += [_zero(plan, p) for p in sorted(joined - after_else)]
    plan.live = joined
    if not body and not orelse:
        return []
    test = astutil.clone(stmt.test)
    if not body:
        test, body, orelse = astutil.unary(gast.Not, test), orelse, []
    return [astutil.if_(test, body, orelse)]


def _loop(plan: Plan, loop) -> list:
    if not sweep.loop_reversed(plan, loop):
        return []
    entry = set(plan.live)
    head = set(entry)
    plan.depth += 1
    names = plan.namer.snapshot()
    outer, plan.enclosing = plan.enclosing, plan.norm.origin.get(loop, loop)
    for _ in range(100):                    # fixpoint of live adjoints
        plan.live = set(head)
        body = backward(plan, loop.body)
        if plan.live <= head:
            break
        head |= plan.live
        # the next round regenerates the body's names; the adjoint
        # names chosen stay chosen (`adj` hands them out again)
        plan.namer.restore(names | set(plan.adj.values()))
    else:       # (reported as a located InternalError by the driver)
        raise RuntimeError("the live adjoints of a loop reached no fixpoint in 100 rounds")
    plan.enclosing = outer
    exit_live = plan.live
    plan.live = set()
    body += [_zero(plan, p) for p in sorted(head - exit_live)]
    plan.depth -= 1
    plan.live = set()
    pre = [_zero(plan, p) for p in sorted(head - entry)]
    counter = plan.counters.get(loop)
    if counter and plan.depth:              # nested: its count was taped
        pre.append(astutil.assign(counter, _pop(plan)))
    plan.live = head
    return pre + [_reverse_header(plan, loop, body)]


def _reverse_header(plan: Plan, loop, body) -> gast.stmt:
    counter = plan.counters.get(loop)
    if isinstance(loop, gast.While):
        target = plan.namer.fresh("_")
        return astutil.for_(target, astutil.call(astutil.builtin("range"),
                                                 [astutil.name(counter)]), body)
    iterable = astutil.clone(loop.iter)
    if counter:
        iterable = astutil.subscript(iterable, astutil.slice_(
            None, astutil.name(counter), None))
    return astutil.for_(loop.target.id, astutil.call(astutil.builtin("reversed"),
                                                     [iterable]), body)


def _is_call_to(node, module: str, func: str) -> bool:
    return isinstance(node, gast.Call) and astutil.dotted_name(node.func) == f"{module}.{func}"


def _read_after_write(items, name: str, primals: set) -> bool:
    """Whether an item reads `name` after a contribution to one of `primals`."""
    written = False
    for item in items:
        node = item.value if isinstance(item, templates.Contribution) else item
        if written and name in set(scopes.load_names(node)):
            return True
        if isinstance(item, templates.Contribution):
            targets = set(_flat(item.primal)) if isinstance(item.primal, tuple) \
                else {item.primal}
            written |= bool(targets & primals)
    return False


def _rename_item(item, old: str, new: str):
    if isinstance(item, templates.Contribution):
        return templates.Contribution(item.primal, rules_of.renamed(item.value, old, new))
    return rules_of.renamed(item, old, new)


def _flat(primals):
    for p in primals:
        if isinstance(p, tuple):
            yield from _flat(p)
        else:
            yield p


def _sets_state(manager, src: Source) -> bool:
    return isinstance(manager, gast.Call) and \
        runtime.sets_state(src.resolve(manager.func, set()))


def _header(stmt) -> str:
    """One line of user source for a `# grad of:` comment."""
    if isinstance(stmt, gast.If):
        return "if " + astutil.unparse(stmt.test) + ":"
    if isinstance(stmt, gast.For):
        return f"for {astutil.unparse(stmt.target)} in {astutil.unparse(stmt.iter)}:"
    if isinstance(stmt, gast.While):
        return "while " + astutil.unparse(stmt.test) + ":"
    if isinstance(stmt, gast.With):
        return astutil.unparse(stmt).splitlines()[0]
    if isinstance(stmt, gast.FunctionDef):      # its defaults: its first line
        return astutil.unparse(stmt).splitlines()[0]
    return astutil.unparse(stmt)
