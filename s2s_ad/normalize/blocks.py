"""Statements around a block that stays at its level: `with` and `try`.

Functions over the normalizer's state `nz` (__init__.py has the grammar).  `with M as
v: body` becomes a bracket of markers, `v = rt.enter(M)`, the body, then
`rt.exit(M)` (runtime/context.py: withblocks.py prints it as the statement
again, the reverse sweep brackets the body's reverse where `M` only sets
state).  `try: body ... else: e finally: f` is the path on which the body
raises nothing: `with rt.no_exception(where): body`, then `e` and `f`.
"""
from __future__ import annotations

import contextlib

import gast

from .. import astutil, scopes, traversal
from ..ir import RUNTIME
from .exprs import binds


def s_With(nz, stmt: gast.With) -> None:
    """`with M as v: body` -> `v = rt.enter(M)`, body, `rt.exit(M)`, at
    this level (codegen prints the bracket as the `with` statement; the
    reverse sweep brackets the body's reverse with `M` evaluated again).
    `M` carries no gradient: it may read no local name, so evaluating it
    again gives the same manager.  A `return`, `break` or `continue` out of
    the body leaves it through its exit marker (normalize/jumps.py)."""
    for item in stmt.items:
        local = sorted(set(scopes.load_names(item.context_expr)) & nz.locals)
        if local or binds(item.context_expr) or any(
                isinstance(n, (gast.Lambda, gast.ListComp, gast.DictComp, gast.SetComp,
                               gast.GeneratorExp)) for n in traversal.walk(item.context_expr)):
            nz.unsupported(item.context_expr, "a with statement whose context manager "
                              "reads " + (f"`{local[0]}`, a local variable" if local
                                          else "what it binds"))
        manager = item.context_expr.func if isinstance(item.context_expr, gast.Call) else None
        if manager is not None and nz.src.resolve(manager, nz.locals) is \
                contextlib.suppress:
            nz.unsupported(item.context_expr, "a with statement that suppresses "
                              "exceptions (the block may stop part way)")
        if item.optional_vars is not None and not isinstance(item.optional_vars, gast.Name):
            nz.unsupported(item.optional_vars, "a with statement binding "
                              + astutil.describe(item.optional_vars))
    for item in stmt.items:
        enter = astutil.call(f"{RUNTIME}.enter", [astutil.clone(item.context_expr)])
        nz.emit(astutil.expr_stmt(enter) if item.optional_vars is None
                  else astutil.assign(item.optional_vars.id, enter))
    nz.out.extend(nz.block(stmt.body))
    for item in reversed(stmt.items):
        nz.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.exit",
                                                 [astutil.clone(item.context_expr)])))


def s_Try(nz, stmt: gast.Try) -> None:
    """`try: body except ...: ... else: e finally: f`: the path on which
    the body raises nothing, `with rt.no_exception(where): body`, then
    `e` and `f`; an exception in the body is a located error then.  A
    jump out of the body skips `e` as Python does (normalize/jumps.py
    guards what follows it); one past a `finally` block, which runs on
    the way out, is refused."""
    jump = scopes.jump_out(stmt.body)
    if jump is not None and stmt.finalbody:
        nz.unsupported(jump, f"{astutil.describe(jump)} out of a try statement's body "
                          "past its `finally` block (which runs on the way out)")
    jump = scopes.jump_out(stmt.finalbody) or \
        (scopes.jump_out(stmt.orelse) if stmt.finalbody else None)
    if jump is not None:
        nz.unsupported(jump, f"{astutil.describe(jump)} in a `finally` block, or out "
                          "of an `else` block before one (the `finally` block runs "
                          "after it, and its own `return` wins)")
    loc = nz.src.locate(stmt)
    where = astutil.const((loc.filename, loc.line, loc.col, loc.source_line))
    guard = astutil.with_(astutil.call(f"{RUNTIME}.no_exception", [where]), None, stmt.body)
    s_With(nz, gast.copy_location(guard, stmt))
    nz.out.extend(nz.block(stmt.orelse))
    nz.out.extend(nz.block(stmt.finalbody))
