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

Zero is a static fact: `self.live` holds the primal names whose adjoint
variable holds a (possibly) nonzero value.  The first contribution assigns,
later ones accumulate; an adjoint known to be zero emits nothing.  Adjoint
code here never updates an array in place (`dx = dx + e`), so adjoints may
alias; ownership.py later makes the updates of arrays that provably do not
alias in place.
"""
from __future__ import annotations

import gast

from . import astutil, runtime, scopes, templates, traversal
from .errors import RuleError
from .ir import (COPY, RULE, UNKNOWN, Adjoint, Facts, Normalized, PairRef, Prim, Request, Source,
                 with_marker)
from .reverse_boundary import Boundary
from .reverse_forward import ForwardSweep, index_of, param_copies
from .reverse_names import Naming

__all__ = ["Adjoint", "PairRef", "Request", "reverse", "param_copies"]


def reverse(norm: Normalized, src: Source, prims: dict[gast.stmt, Prim],
            facts: Facts, req: Request, output: gast.expr | None,
            aux: gast.expr | None) -> Adjoint:
    gen = _Reverser(norm, src, prims, facts, req)
    body = norm.tree.body[:-1]                    # the final Return is ours
    forward = gen.forward(body)
    seed = gen.seed(output, req, src)
    if req.mode in ("value_and_grad", "grad"):   # what the user receives, fixed now
        kept, output, aux = gen.capture(body, output, aux, req)
        seed = kept + seed
    if req.mode == "pair":                        # split here by `split_pair`
        seed.insert(0, astutil.split(astutil.clone(output)))
    backward = gen.backward(body)
    ret = gen.returns(output, aux, req)
    prologue = [astutil.assign(p, astutil.call(f"{gen._rt}.copy", [astutil.name(p)]))
                for p in param_copies(body, prims, gen.params, norm.shares)]
    prologue += [astutil.assign(n, astutil.const(None)) for n in sorted(gen.unbound)]
    if gen.tape:
        prologue.append(astutil.assign(gen.tape, astutil.list_([])))
    args = astutil.clone(norm.tree.args)
    if req.seed and req.mode == "vjp":            # (a pair's seed goes to its bwd half)
        if args.defaults or args.kwonlyargs or args.vararg:
            args.kwonlyargs.append(astutil.param(req.seed))   # after defaults: keyword-only
            args.kw_defaults.append(None)
        else:
            args.args.append(astutil.param(req.seed))
    fdef = astutil.function_def(gen.name, args, prologue + forward + seed + backward + ret)
    gen.name_reserved(fdef)
    scalars = facts.scalars | {gen.adj[n] for n in facts.scalars if n in gen.adj}
    temp_adjoints = frozenset(d for p, d in gen.adj.items() if p in norm.namer.temps)
    return Adjoint(fdef, gen.imports, gen.seed_param, frozenset(scalars), gen.pair_names,
                   temp_adjoints)


class _Reverser(ForwardSweep, Boundary, Naming):
    def __init__(self, norm: Normalized, src: Source, prims, facts: Facts, req: Request):
        self.norm, self.src, self.prims, self.facts = norm, src, prims, facts
        self.req = req
        self.seed_param: str | None = None
        self.calls: dict[gast.stmt, tuple] = {}  # stmt -> (saved name, bwd name, variant)
        self.namer = norm.namer
        self.adj: dict[str, str] = {}     # primal name -> adjoint variable
        self.live: set[str] = set()       # primal names with a nonzero adjoint
        self.depth = 0                    # loop nesting while generating
        self.branches = 0                 # `if` nesting while generating the forward sweep
        self.saves: dict[gast.stmt, str] = {}   # stmt -> save variable
        self.counters: dict[gast.stmt, str] = {}  # loop -> trip counter
        self.unbound: set[str] = set(norm.unbound)   # bound to None at entry
        self.tape: str | None = None
        self._enclosing = None            # origin of the `if` being reversed
        self.imports: dict[str, object] = {}
        args = norm.tree.args
        self.params = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs
                       + ([args.vararg] if args.vararg else [])}
        self.name, self.pair_names = self.own_names(req.mode)
        self._rt = self._import("rt", runtime)
        for name, func in src.lifted.items():      # nested functions, lifted
            self._import(name, func)

    # -- naming (see reverse_names.py) ------------------------------------
    def adjoint_name(self, primal: str) -> str:
        if primal not in self.adj:
            self.adj[primal] = self.namer.fresh("d" + primal)
        return self.adj[primal]

    # -- reverse sweep ----------------------------------------------------
    def backward(self, body: list) -> list:
        """The reverse sweep of `body`: one `Block` per user statement, its
        origin printed as `# grad of:`.  Consecutive code of one statement
        shares a block; code of the enclosing `if`'s statement needs none."""
        out, last_origin = [], self._enclosing
        for stmt in reversed(body):
            marker = with_marker(stmt)
            if marker is not None:      # a with block setting state: its reverse runs under it
                kind = "exit" if marker[0] == "enter" else "enter"
                if _sets_state(marker[1], self.src):
                    out.append(astutil.expr_stmt(astutil.call(
                        f"{self._rt}.{kind}", [astutil.clone(marker[1])])))
                    last_origin = None
                continue
            if isinstance(stmt, gast.Assign):
                code = self._assign(stmt)
            elif isinstance(stmt, gast.If):
                code = self._if(stmt)
            elif isinstance(stmt, (gast.For, gast.While)):
                code = self._loop(stmt)
            else:
                code = []
            if not code:
                continue
            origin = self.norm.origin.get(stmt, stmt)
            if origin is not last_origin:
                out.append(astutil.block("grad of: " + _header(origin), []))
            (out[-1].body if out and isinstance(out[-1], astutil.Block) else out).extend(code)
            last_origin = origin
        return out

    def _assign(self, stmt) -> list:
        target = stmt.targets[0].id
        prim = self.prims[stmt]
        recorded = stmt in self.facts.recorded
        code, old = [], None
        self_ref = target in prim.operands
        call = self.calls.get(stmt)
        if call and self.depth:
            code.append(astutil.assign(call[0], self._pop()))   # pushed last
        if recorded:
            if self.depth == 0:
                old = self.saves[stmt]
            elif self_ref:
                old = self.namer.fresh(target + "_old")
                code.append(astutil.assign(old, self._pop()))
        if stmt in self.facts.active and target in self.live:
            if prim.kind == UNKNOWN:
                raise prim.problem
            code.extend(self._rule(stmt, prim, target, old if self_ref else None, call))
        else:
            self.live.discard(target)
        if recorded:
            value = astutil.name(old) if old else self._pop()
            if prim.inplace:    # put the old values back where they were
                value = astutil.call(f"{self._rt}.restore", [
                    astutil.name(target), value] + index_of(prim))
            code.append(astutil.assign(target, value))
        return code

    def _pop(self) -> gast.expr:
        return astutil.call(astutil.attribute(astutil.name(self._tape()), "pop"))

    def _rule(self, stmt, prim: Prim, target: str, old: str | None, call=None) -> list:
        code = []
        d_result = self.adjoint_name(target)
        self_ref = target in prim.operands
        if stmt in self.facts.expand:      # this rule needs d[z] full-size
            code.append(astutil.assign(d_result, astutil.call(f"{self._rt}.expand", [
                astutil.name(d_result), astutil.name(self.facts.witness(stmt, target))])))
        if self_ref:        # the old value's adjoint starts from zero
            self.live.discard(target)
        if prim.kind == COPY:
            items = [templates.Contribution(prim.operands[0], astutil.name(d_result))]
        elif call is not None:
            items = self._call_items(prim, call, d_result)
        else:
            binding = prim.binding
            if old is not None:
                binding = {k: _rename(v, target, old) for k, v in binding.items()}
            try:
                items, _ = templates.instantiate(
                    prim.rule.template, binding, target, d_result, self.namer, self._import)
            except RuleError as exc:
                raise RuleError(exc.message, self.src.locate(stmt), exc.hint) from None
        if self_ref and _read_after_write(items, d_result, {target, old}):
            # `x = f(x)` whose rule reads d[z] after writing d[x]: keep d[z]
            moved = self.namer.fresh(d_result + "_next")
            code.append(astutil.assign(moved, astutil.name(d_result)))
            items = [_rename_item(item, d_result, moved) for item in items]
        varied = self.facts.varied_before.get(stmt, frozenset())
        for item in items:
            if not isinstance(item, templates.Contribution):
                code.append(item)
            elif isinstance(item.primal, tuple):
                code.extend(self._contribute_each(stmt, prim, item, varied, old, target))
            else:
                code.extend(self._contribute_one(stmt, prim, item.primal, item.value,
                                                 varied, old, target))
        if not self_ref:
            self.live.discard(target)
        return code

    def _call_items(self, prim: Prim, call, d_result: str) -> list:
        """`grads = g_bwd(saved, d_result)`, then one contribution per
        varied parameter of the callee."""
        saved, bwd, variant = call
        grads = self.namer.temp("grads")
        items = [astutil.assign(grads, astutil.call(
            bwd, [astutil.name(saved), astutil.name(d_result)]))]
        for i, param in enumerate(variant):
            value = astutil.subscript(astutil.name(grads), astutil.const(i))
            items.append(templates.Contribution(templates.primal_of(prim.binding[param]),
                                                value))
        return items

    def _contribute_one(self, stmt, prim, primal, value, varied, old, target) -> list:
        if primal is not None and primal == old:
            primal = target
        if primal is None or primal not in varied:
            return []
        value_name = old if primal == target and old else primal
        return [self._contribute(stmt, prim, primal, value, value_name)]

    def _contribute_each(self, stmt, prim, item, varied, old, target) -> list:
        """A sequence contribution: one item of `value` per element (an
        element may be the old value of the target, `x = f(y, x)`)."""
        if not any((target if p == old and old else p) in varied for p in _flat(item.primal)):
            return []
        parts = self.namer.temp("parts")
        code = [astutil.assign(parts, item.value)]
        for i, primal in enumerate(item.primal):
            value = astutil.subscript(astutil.name(parts), astutil.const(i))
            if isinstance(primal, tuple):
                code.extend(self._contribute_each(
                    stmt, prim, templates.Contribution(primal, value), varied, old, target))
            else:
                code.extend(self._contribute_one(stmt, prim, primal, value, varied,
                                                 old, target))
        return code

    def _contribute(self, stmt, prim, primal, value, value_name) -> gast.stmt:
        d = self.adjoint_name(primal)
        if primal in self.live and _is_call_to(value, self._rt, "unindex"):
            # (a scatter-add: in place where the code owns `d`, ownership.py)
            return astutil.assign(d, astutil.binop(astutil.name(d), gast.Add, value))
        full = primal in self.facts.needs_full.get(stmt, ())
        if self.facts.spread and prim.kind == RULE and templates.is_spread(value, value_name) \
                and primal not in self.facts.in_loops:
            value = value.args[1]                       # left compact
        if full and (prim.kind != RULE or primal in self.facts.same_shape.get(stmt, ())):
            value = astutil.call(f"{self._rt}.expand", [value, astutil.name(
                self.facts.witness(stmt, stmt.targets[0].id))])
        elif prim.kind == RULE and prim.rule.elementwise and \
                primal not in self.facts.same_shape.get(stmt, ()):
            negated = isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub)
            inner = value.operand if negated else value     # sum first, negate less
            like = self.facts.witness(stmt, primal) if value_name == primal else value_name
            args = [inner, astutil.name(like)]
            if full:
                args.append(astutil.name(self.facts.witness(stmt, stmt.targets[0].id)))
            value = astutil.call(f"{self._rt}.unbroadcast", args)
            if negated:
                value = astutil.neg(value)
        if primal in self.live:
            value = astutil.binop(astutil.name(d), gast.Add, value)
        self.live.add(primal)
        return astutil.assign(d, value)

    def _zero(self, primal: str) -> gast.stmt:
        self.live.add(primal)
        return astutil.assign(self.adjoint_name(primal), astutil.call(
            f"{self._rt}.zeros_like", [astutil.name(primal)]))

    def _if(self, stmt) -> list:
        before, outer = set(self.live), self._enclosing
        self._enclosing = self.norm.origin.get(stmt, stmt)
        body = self.backward(stmt.body)
        after_body, self.live = self.live, set(before)
        orelse = self.backward(stmt.orelse)
        self._enclosing = outer
        after_else = self.live
        joined = after_body | after_else
        self.live = set()
        body += [self._zero(p) for p in sorted(joined - after_body)]
        self.live = set()
        orelse += [self._zero(p) for p in sorted(joined - after_else)]
        self.live = joined
        if not body and not orelse:
            return []
        test = astutil.clone(stmt.test)
        if not body:
            test, body, orelse = astutil.unary(gast.Not, test), orelse, []
        return [astutil.if_(test, body, orelse)]

    def _loop(self, loop) -> list:
        if not self._loop_reversed(loop):
            return []
        entry = set(self.live)
        head = set(entry)
        self.depth += 1
        names = self.namer.snapshot()
        outer, self._enclosing = self._enclosing, self.norm.origin.get(loop, loop)
        for _ in range(100):                    # fixpoint of live adjoints
            self.live = set(head)
            body = self.backward(loop.body)
            if self.live <= head:
                break
            head |= self.live
            # the next round regenerates the body's names; the adjoint
            # names chosen stay chosen (`adj` hands them out again)
            self.namer.restore(names | set(self.adj.values()))
        else:       # (reported as a located InternalError by the driver)
            raise RuntimeError("the live adjoints of a loop reached no fixpoint in 100 rounds")
        self._enclosing = outer
        exit_live = self.live
        self.live = set()
        body += [self._zero(p) for p in sorted(head - exit_live)]
        self.depth -= 1
        self.live = set()
        pre = [self._zero(p) for p in sorted(head - entry)]
        counter = self.counters.get(loop)
        if counter and self.depth:              # nested: its count was taped
            pre.append(astutil.assign(counter, self._pop()))
        self.live = head
        return pre + [self._reverse_header(loop, body)]

    def _reverse_header(self, loop, body) -> gast.stmt:
        counter = self.counters.get(loop)
        if isinstance(loop, gast.While):
            target = self.namer.fresh("_")
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
        return templates.Contribution(item.primal, _rename(item.value, old, new))
    return _rename(item, old, new)


def _flat(primals):
    for p in primals:
        if isinstance(p, tuple):
            yield from _flat(p)
        else:
            yield p


def _rename(node, old: str, new: str):
    node = astutil.clone(node)
    for sub in traversal.walk(node):
        if isinstance(sub, gast.Name) and sub.id == old:
            sub.id = new
    return node


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
