"""Free arrays at their last use: `del` the generated function's dead locals.

A Python local keeps its array alive until the function returns, so a
gradient that names every intermediate holds all of them at once: the MLP
benchmark's reverse sweep held four 256x256 arrays it no longer needed while
allocating the 784x256 weight gradient, and glibc answered the larger peak
by trimming the heap after every call and page-faulting it back (1,000
minor faults per call against 8 for the hand-written gradient, a third of the
run time).  Deleting a local after its last top-level use returns its memory
before the next allocation, as an expert writing memory-conscious NumPy does.

Invariants: only names every store of which is a top-level assignment are
deleted (so each is bound wherever it is read), never a parameter or a local
known to hold a scalar (nothing to free), and only
where a later top-level assignment may allocate; statements keep their order
and every value computed is unchanged.
"""
from __future__ import annotations

import gast

from . import astutil, scopes, traversal


def release(fdef: gast.FunctionDef, scalars=frozenset()) -> None:
    """Insert one `del` per top-level `Block` of the reverse sweep, before
    the block's last allocating statement, naming the locals last read
    earlier (a local last read by that statement or later waits for the next
    block).  The forward sweep keeps the user's lines as they are, and
    `scalars` (locals known to hold numbers) are left to the return."""
    flat = list(astutil.flat(fdef.body))        # the statements of blocks in place
    position = {stmt: i for i, (stmt, _) in enumerate(flat)}
    names = [traversal.names(stmt) for stmt, _ in flat]     # (each statement's, once)
    candidates = _top_level_locals(flat, names, fdef.args) - scalars
    last_read = {n: i for n, i in scopes.last_reads([s for s, _ in flat], names).items()
                 if n in candidates}
    dying = sorted(last_read, key=lambda n: (last_read[n], n))
    first = 0                       # blocks come in order: `at` only grows
    for blk in (s for s in fdef.body if isinstance(s, astutil.Block)):
        at = _last_allocation(blk.body)
        if at is None:
            continue
        stmt, owner = flat[position[at]]
        end = first
        while end < len(dying) and last_read[dying[end]] < position[at]:
            end += 1
        if end > first:
            owner.insert(owner.index(stmt), astutil.delete(dying[first:end]))
        first = end


def _last_allocation(body: list):
    """The last assignment of a block (its nested blocks included, not its
    ifs and loops) that computes something (a call or an operator), or None."""
    for stmt, _ in reversed(list(astutil.flat(body))):
        if isinstance(stmt, (gast.Assign, gast.AugAssign)) and any(
                isinstance(n, (gast.Call, gast.BinOp)) for n in traversal.walk(stmt.value)):
            return stmt
    return None


def _top_level_locals(flat: list, names: list, args: gast.arguments) -> set[str]:
    """Names assigned only by top-level statements (those of top-level
    blocks included), minus the parameters (`names`: each statement's
    `Name` nodes)."""
    top, nested = set(), set()
    store = gast.Store
    for (stmt, _), held in zip(flat, names):
        split = 0                   # (the statement's first `split` names: its targets')
        if isinstance(stmt, (gast.Assign, gast.AugAssign)):     # (targets first, then value)
            targets = stmt.targets if isinstance(stmt, gast.Assign) else stmt.target
            split = len(traversal.names(targets))
        for i, node in enumerate(held):     # (a store in a value: a comprehension variable)
            if type(node.ctx) is store:
                (top if i < split else nested).add(node.id)
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    params |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    return top - nested - params

