"""`with` blocks printed as `with` statements: the last step before code
generation.

Until here a `with M as v:` block is a bracket of two marker statements at
one level, `v = rt.enter(M)` ... `rt.exit(M)` (normalize/ makes the
forward one, reverse.py the reverse sweep's), so that every stage in
between sees plain statements.  `structure` turns each bracket into the
statement around what it holds; a manager not known to let exceptions pass
(not `rt.sets_state`) is entered through `rt.managed`, which refuses one it
swallows.  A bracket
left with nothing inside goes.

Invariant: markers come in properly nested pairs at one level of one body
(lowering a jump out of a block leaves its exit marker unguarded); anything else is a bug,
raised as such.
"""
from __future__ import annotations

import gast

from . import astutil
from .ir import Source, with_marker
from .runtime import sets_state


def structure(fdef: gast.FunctionDef, runtime_names: set, src: Source) -> None:
    """Replace the marker brackets in `fdef` (in place) by `with` statements."""
    fdef.body = _body(fdef.body, runtime_names, src)


def _body(body: list, rt: set, src: Source) -> list:
    out, i = [], 0
    while i < len(body):
        stmt = body[i]
        marker = with_marker(stmt, rt)
        if marker is None:
            if _nested(stmt, rt, src):
                out.append(stmt)
            i += 1
            continue
        if marker[0] != "enter":
            raise RuntimeError("a with block's end marker without its start")
        end = _end(body, i, rt)
        inner = _body(body[i + 1:end], rt, src)
        if any(not isinstance(s, astutil.Block) or s.body for s in inner):
            out.append(astutil.with_(_entered(marker[1], rt, src), marker[2], inner))
        i = end + 1
    return out


def _end(body: list, start: int, rt: set) -> int:
    depth = 0
    for j in range(start, len(body)):
        marker = with_marker(body[j], rt)
        if marker is not None:
            depth += 1 if marker[0] == "enter" else -1
            if depth == 0:
                return j
    raise RuntimeError("a with block's start marker without its end")


def _nested(stmt, rt: set, src: Source) -> bool:
    """Structure the bodies of `stmt`; False if it is a `Block` left empty
    (a statement whose body was only an empty bracket gets `pass`)."""
    had_body = bool(getattr(stmt, "body", None))
    for field in ("body", "orelse"):
        if isinstance(getattr(stmt, field, None), list):
            setattr(stmt, field, _body(getattr(stmt, field), rt, src))
    if isinstance(stmt, astutil.Block):
        return bool(stmt.body) or not had_body
    if had_body and not stmt.body:
        stmt.body = [astutil.pass_()]
    return True


def _entered(manager: gast.expr, rt: set, src: Source) -> gast.expr:
    """`manager`, or `rt.managed(manager)` unless it surely lets exceptions
    pass (one that sets state, or the guard of a `try`'s body)."""
    func = manager.func if isinstance(manager, gast.Call) else None
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
            func.value.id in rt and func.attr == "no_exception":
        return manager
    if sets_state(src.resolve(func, set()) if func is not None else None):
        return manager
    return astutil.call(f"{sorted(rt)[0]}.managed", [manager])
