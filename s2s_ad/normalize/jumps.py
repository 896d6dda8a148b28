"""Lower `break`, `continue` and early `return` into flags and guards.

Runs on ANF right after normalization (`lower_jumps`, a stage of its own:
`s2s-ad dump --stage jumps`).  Afterwards:
- `return` appears once, as the last statement of the function;
- `continue` does not appear;
- `break` appears only as `if <flags>: break`, the last statement of a loop
  body, so the reverse sweep can treat every loop body as structured code
  and recover the trip count with a counter;
- loops have no `else` clause (it becomes a guarded block after the loop);
- a `while` loop's test is recomputed at the end of its body, outside any
  guard, so a lowered `continue` still re-evaluates it.

The statements after one that may set a flag are wrapped in
`if not <flag>:`, but for the exit marker of a `with` block the jump leaves
(`rt.exit(M)`, normalize/blocks.py), which runs, as Python leaves the block
on the way out; the statements after it are guarded in turn.  The flags are
ordinary variables; the reverse sweep reads the guards like any `if`, and
the to-be-recorded analysis keeps their values.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import gast

from .. import astutil, scopes, traversal
from ..ir import Normalized, with_marker
from ..naming import Namer


@dataclass
class _Loop:
    brk: str | None = None
    cont: str | None = None


@dataclass
class _Function:
    results: list = field(default_factory=list)     # one per item if `width`
    returned: str | None = None
    width: int | None = None        # every return returns a tuple of this many
    loops: list = field(default_factory=list)


def lower_jumps(norm: Normalized) -> Normalized:
    """`norm` with its jumps lowered: a new tree, the same side tables (the
    statements are kept, wrapped in guards)."""
    fdef = norm.tree
    body = lower(fdef.body, norm.namer, norm.origin, norm.while_tests)
    out = gast.copy_location(astutil.function_def(fdef.name, fdef.args, body), fdef)
    return dataclasses.replace(norm, tree=out)


def lower(body: list, namer: Namer, origin: dict, while_tests: dict) -> list:
    """`body` (ANF) with jumps lowered; see the module docstring."""
    lowerer = _Lowerer(namer, origin, while_tests)
    final = body[-1] if body and isinstance(body[-1], gast.Return) else None
    early = [s for s in scopes.statements(body)     # (ANF: no `def` left in it)
             if isinstance(s, gast.Return) and s is not final]
    if not early:
        out, _ = lowerer.block(body[:-1] if final is not None else body)
        return out + [final if final is not None else astutil.ret(astutil.const(None))]
    lowerer.fn.width = _tuple_width(early + [final])
    out, _ = lowerer.block(body)
    fn = lowerer.fn
    prologue = [astutil.assign(r, astutil.const(None)) for r in fn.results] + \
        [astutil.assign(fn.returned, astutil.const(False))]
    value = astutil.tuple_(astutil.name(r) for r in fn.results) if fn.width \
        else astutil.name(fn.results[0])
    return prologue + out + [astutil.ret(value)]


def _tuple_width(returns: list) -> int | None:
    """n if every `return` returns a tuple display of n items (then each
    item gets a result variable: `return value, aux` stays a pair)."""
    widths = {len(r.value.elts) if r is not None and isinstance(r.value, gast.Tuple) else None
              for r in returns}
    width = widths.pop() if len(widths) == 1 else None
    return width or None


class _Lowerer:
    def __init__(self, namer: Namer, origin: dict, while_tests: dict):
        self.namer, self.origin, self.while_tests = namer, origin, while_tests
        self.fn = _Function()

    def block(self, stmts: list) -> tuple[list, set]:
        """Lowered statements and the flags they may set."""
        out: list = []
        for i, stmt in enumerate(stmts):
            new, flags = self.statement(stmt)
            out.extend(new)
            if flags:
                rest, rest_flags = self._after(flags, stmts[i + 1:])
                return out + rest, flags | rest_flags
        return out, set()

    def _after(self, flags: set, stmts: list) -> tuple[list, set]:
        """`stmts`, which follow a statement that may set `flags`, lowered
        and guarded by them, but for the exit marker of a `with` block they
        close (the jump leaves it), which runs unguarded."""
        k = _closing_exit(stmts)
        rest, rest_flags = self.block(stmts if k is None else stmts[:k])
        out = self._guard(flags, rest) if rest else []
        if k is None:
            return out, rest_flags
        tail, tail_flags = self._after(flags | rest_flags, stmts[k + 1:])
        return out + [stmts[k]] + tail, rest_flags | tail_flags

    def statement(self, stmt) -> tuple[list, set]:
        if isinstance(stmt, gast.Break):
            flag = self._loop_flag("brk", "broke")
            return [self._at(astutil.assign(flag, astutil.const(True)), stmt)], {flag}
        if isinstance(stmt, gast.Continue):
            flag = self._loop_flag("cont", "skip")
            return [self._at(astutil.assign(flag, astutil.const(True)), stmt)], {flag}
        if isinstance(stmt, gast.Return):
            return self._return(stmt)
        if isinstance(stmt, gast.If):
            body, f1 = self.block(stmt.body)
            orelse, f2 = self.block(stmt.orelse)
            stmt.body, stmt.orelse = body, orelse
            return [stmt], f1 | f2
        if isinstance(stmt, (gast.For, gast.While)):
            return self._loop(stmt)
        return [stmt], set()

    def _guard(self, flags: set, body: list) -> list:
        """`if not <flags>: body`; the test goes through a fresh variable when
        the body may set a flag (an `if` test is never assigned in its `if`)."""
        test = astutil.not_(_any(flags))
        assigned = {n.id for n in traversal.names(body) if type(n.ctx) is gast.Store}
        if not assigned & flags:
            return [astutil.if_(test, body)]
        go = self.namer.fresh("go")
        return [astutil.assign(go, test), astutil.if_(astutil.name(go), body)]

    def _at(self, new, old):
        """`new` stands for the user statement `old` stood for."""
        gast.copy_location(new, old)
        if old in self.origin:
            self.origin[new] = self.origin[old]
        return new

    def _loop_flag(self, kind: str, stem: str) -> str:
        loop = self.fn.loops[-1]
        if getattr(loop, kind) is None:
            setattr(loop, kind, self.namer.fresh(stem))
        return getattr(loop, kind)

    def _return(self, stmt) -> tuple[list, set]:
        fn = self.fn
        if fn.returned is None:
            fn.results = [self.namer.fresh("result") for _ in range(fn.width or 1)]
            fn.returned = self.namer.fresh("returned")
        values = stmt.value.elts if fn.width else [stmt.value]
        return [self._at(astutil.assign(r, v), stmt) for r, v in zip(fn.results, values)] + \
            [self._at(astutil.assign(fn.returned, astutil.const(True)), stmt)], {fn.returned}

    def _loop(self, loop) -> tuple[list, set]:
        self.fn.loops.append(_Loop())
        body, flags = self.block(loop.body)
        ctx = self.fn.loops.pop()
        body += self.while_tests.get(loop, [])
        exits = [f for f in (ctx.brk, self.fn.returned) if f and f in flags]
        if ctx.cont:
            body.insert(0, astutil.assign(ctx.cont, astutil.const(False)))
        if exits:
            body.append(astutil.if_(_any(exits), [astutil.break_()]))
        loop.body = body
        pre = [astutil.assign(ctx.brk, astutil.const(False))] if ctx.brk else []
        orelse, else_flags = self.block(loop.orelse)
        loop.orelse = []
        after = (self._guard(set(exits), orelse) if exits else orelse) if orelse else []
        out_flags = ({self.fn.returned} & flags) | else_flags
        return pre + [loop] + after, out_flags


def _closing_exit(stmts: list) -> int | None:
    """The position of the first exit marker in `stmts` of a `with` block
    opened before them, or None."""
    depth = 0
    for i, stmt in enumerate(stmts):
        marker = with_marker(stmt)
        if marker is not None and marker[0] == "enter":
            depth += 1
        elif marker is not None:
            if depth == 0:
                return i
            depth -= 1
    return None


def _any(flags) -> gast.expr:
    names = [astutil.name(f) for f in sorted(flags)]
    return names[0] if len(names) == 1 else astutil.or_(names)



