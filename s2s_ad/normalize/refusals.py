"""The run-time refusals an in-place update emits where the alias analysis
cannot follow a relation (normalize/writebacks.py): each is a call of
`rt.refuse_shared` or `rt.refuse_overlap` that raises a located
`UnsupportedSyntaxError` only if the values it is given share memory at
run time, placed before the update so that a refused program changes
nothing (`rt.refuse_overwrite`: a write from a view of its own target);
and which names such a check must cover (`holders`, `read_later`, and
`uncertain`: those that may read again a view the update does not follow).
Functions over the normalizer's state `nz` (__init__.py); and one refusal
at compile time, `outside_updates`: a global's object updated in place
through a local name.
"""
from __future__ import annotations

import gast

from .. import astutil, effects, scopes
from ..errors import UnsupportedSyntaxError, again
from ..ir import RUNTIME
from ..runtime.origins import origins
from . import aliasing, sequences
from .alias_parts import Part


def shared(nz, name: str, part: Part, how: str, unless_same: bool = False) -> None:
    """`rt.refuse_shared(name, base, ...)`: a located error at run time
    if `name` shares memory with `base` (it cannot be followed here);
    `unless_same`: not if it is `base` (followed: rebound to it)."""
    base = f"`{part.base}`" if part.base in nz.locals else "the array it was read from"
    what = f"`{name}`" if name in nz.locals else \
        "an intermediate value (such as the sequence a loop iterates)"
    message = (f"{what} may share memory with {base} and {how} after an "
               f"in-place update, but s2s_ad cannot tell which part of {base} it "
               f"is (it was bound in an `if` or a loop above, or returned by a "
               f"function, or what it was read with changed since)")
    hint = f"update {base} directly, or copy where {what} is bound (`.copy()`)"
    refusal(nz, name, part.base, message, hint, unless_same=unless_same)


def overlap(nz, item: str, container: str) -> None:
    """A located error at run time if another item of the list or dict
    `container` shares memory with `item` without being it (overlapping
    views: sliding windows).  Written at a slot not known here, `item`
    changes the other too, which is re-read from the container (its own
    slot) rather than from the memory they share."""
    held = f"`{container}`" if container in nz.locals else "the sequence a loop iterates"
    what = f"`{item}`" if item in nz.locals else f"an item of {held}"
    message = (f"{what} is updated in place at a slot of {held} chosen at run time, "
               f"and another item of {held} shares memory with it without being the "
               "same array (overlapping views, such as sliding windows): s2s_ad does "
               "not follow an update from one into the other")
    hint = ("update the array the items view directly (e.g. `x[i:i + 3] ...`), or copy "
            f"the items when building {held} (`.copy()`)")
    refusal(nz, item, container, message, hint, overlap=True)


def overwrite(nz, base: str, index, value: str) -> None:
    """`rt.refuse_overwrite(base, index, value, where)`: a located error at
    run time if `base[index] = value` writes slots that `value` views in
    an order NumPy does not promise (`y[2] = y[:, 3]`: it may read some
    after writing them, which no derivative follows).  A write NumPy reads
    whole first (`y[1:] = y[:-1]`, `M[...] = M.T`) passes."""
    what = f"`{value}`" if value in nz.locals else "the value written"
    message = (f"{what} shares memory with the part of `{base}` it is written to: "
               "NumPy may read an element after writing it, in an order it does not "
               "promise, so s2s_ad cannot tell what the assignment computes")
    hint = "write a copy (`.copy()` the value) or a new array"
    nz.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.refuse_overwrite", [
        astutil.name(base), astutil.clone(index), astutil.name(value),
        _where(nz, message, hint)])))


def partial(nz, view: str, other: str, base: str) -> None:
    """A located error at run time if `view` shares memory with `other`:
    both write `base` after one update, and `view` holds only what a view
    of its own brought it, not what `other` brings."""
    what = [f"`{n}`" if n in nz.locals else "an intermediate view" for n in (view, other)]
    held = f"`{base}`" if base in nz.locals else "the array they view"
    message = (f"this update reaches {held} along two chains of views: {what[0]} and "
               f"{what[1]} both write it and share memory, and s2s_ad does not follow "
               "the change through one into the other")
    hint = f"update {held} directly, or copy the views you keep (`.copy()`)"
    refusal(nz, view, other, message, hint)


def written(nz, name: str, update: gast.Assign) -> None:
    """`rt.refuse_written(name, base, index, where)`: a located error at
    run time if `name` shares memory with what the in-place `update` of
    `base` writes (`base = rt.setitem(base, index, v)`: those elements),
    a relation made later in a loop body (normalize/carried.py)."""
    base = update.targets[0].id
    call = update.value
    index = astutil.clone(call.args[1]) if isinstance(call, gast.Call) and \
        astutil.dotted_name(call.func) == f"{RUNTIME}.setitem" else astutil.const(None)
    what = f"`{base}`" if base in nz.locals else "the array"
    message = (f"`{name}` shares memory with {what}, which this in-place update writes: "
               f"the loop binds `{name}` later in its body to a view or alias, so from "
               "the second iteration on the update changes what the previous one bound, "
               "a relation s2s_ad does not follow around a loop")
    hint = f"copy where `{name}` is bound in the loop (`.copy()`)"
    nz.unbound.update({name, base} - nz.params)     # maybe bound in a branch only
    nz.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.refuse_written", [
        astutil.name(name), astutil.name(base), index, _where(nz, message, hint)])))


def masked(nz, name: str, other: str) -> None:
    """A located error at run time if `name` shares memory with `other`
    and one holds what `stop_gradient` returned: an in-place update
    changed both, and which elements still carry gradient is not known."""
    what = [f"`{n}`" if n in nz.locals else "a value" for n in (name, other)]
    message = (f"{what[0]} shares memory with {what[1]}, and one of them was "
               "returned by `stop_gradient(...)`: an in-place update changes "
               "both, so s2s_ad cannot tell which of their values carry a gradient")
    hint = "copy the value stop_gradient masks (`stop_gradient(x.copy())`), " \
           "or update a copy"
    refusal(nz, name, other, message, hint)


def refusal(nz, name: str, base: str, message: str, hint: str,
            overlap: bool = False, unless_same: bool = False) -> None:
    """`rt.refuse_shared(name, base, where[, unless_same=True])`, or with
    `overlap` `rt.refuse_overlap(name, base, where)`."""
    nz.unbound.update({name, base} - nz.params)    # maybe bound in a branch only
    nz.emit(astutil.expr_stmt(astutil.call(
        f"{RUNTIME}.refuse_overlap" if overlap else f"{RUNTIME}.refuse_shared",
        [astutil.name(name), astutil.name(base), _where(nz, message, hint)],
        [("unless_same", astutil.const(True))] if unless_same else [])))


def flat_view(nz, base: str) -> gast.expr:
    """`rt.flat_view(base, where)`: the view `base.flat[i] = v` writes
    through, a located error at run time where there is none."""
    message = (f"`{base}.flat[...]` is written into, and the elements of `{base}` are "
               "not contiguous in memory (a transpose or a strided view): s2s_ad writes "
               f"through a flat view of `{base}`, which NumPy cannot make of it")
    hint = (f"make it contiguous where it is bound (`np.ascontiguousarray(...)`), or "
            f"write through an index of `{base}` itself")
    return astutil.call(f"{RUNTIME}.flat_view", [astutil.name(base), _where(nz, message, hint)])


def _where(nz, message: str, hint: str) -> gast.expr:
    """The located error a run-time refusal raises, as a constant:
    (message, hint, file, line, column, source line) of the user's statement;
    in derived code differentiated again, of the user's function it came
    from, the generated line quoted (as driver._told_at_the_user tells a
    compile-time refusal)."""
    loc = nz.src.locate(nz.user_stmt)
    user = origins.get(getattr(nz.src.func, "__code__", None))
    if user is not None:
        message, loc = again(message, loc.source_line), user
    return astutil.const((message, hint, loc.filename, loc.line, loc.col, loc.source_line))


def is_refusal(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
        astutil.dotted_name(stmt.value.func) in (f"{RUNTIME}.refuse_shared",
                                                 f"{RUNTIME}.refuse_overlap",
                                                 f"{RUNTIME}.refuse_written")


def holders(nz, view: str, group: set, part: Part) -> set:
    """The names (a list, with its aliases) holding `view` or a view of
    it (`c.append(e[1])`, `e` the uncertain view), and what those are
    parts of or may be, transitively (`rows` of `[r for r in M]` is read
    from `M`): what an update of `group` may change through them."""
    below = aliasing.related(nz, view, upward=False)
    holders = {p.base for v in below for p in nz.parts.get(v)}
    holders -= below | group | {part.base}
    out, todo = set(), sorted(holders)
    while todo:                         # and what they are parts of, or may be
        h = todo.pop()
        if h not in out and h not in group:
            out.add(h)
            todo.extend(nz.aliases.get(h, ()))
            todo.extend(nz.maybe_aliases.get(h, ()))
            todo.extend(p.base for p in nz.parts.get(h))
            todo.extend(sequences.joined_from(nz, h))   # (a copy holds its items)
    return out


def uncertain(nz, view: str, part: Part, group: set, origin: str, seen: set,
              through: bool, rebound: set) -> None:
    """`view` is an uncertain part of the object an update of `group`
    wrote through `origin`, not followed: what is read again and may share
    memory with it - its views, what holds it, and the other views of those,
    which may be `view` itself (`ret` of `for ret in [1.0, e]`, read from the
    display holding `e`) - must not share memory with what the update wrote.
    An item of a list or dict (`through`: the container is not what was
    written) changed only if it shares memory with `origin`, and not if it
    is `origin` and `rebound` to it; a view of what only may be the object
    changed if it shares memory with `origin`.  Names `seen` by the update
    are re-read from the object."""
    held = holders(nz, view, group, part)
    below = aliasing.related(nz, view, upward=False)
    below |= {v for h in held for v in aliasing.related(nz, h, upward=False)} - \
        held - group - seen
    written = Part(origin, "reshape", astutil.name(origin)) \
        if through or part.base not in group else Part(part.base, part.kind, part.view)
    for other in read_later(nz, sorted(below)):
        shared(nz, other, written, "is read again", other in rebound)
    for holder in read_later(nz, sorted(held - {origin})):
        shared(nz, origin, Part(holder, "reshape", astutil.name(holder)),
               f"is updated while `{holder}` holds a view of it, read again")


def read_later(nz, names: list) -> list:
    """Those of `names` the user's code reads after the statement being
    normalized, or anywhere in a loop around it."""
    here = nz.user_stmt
    end = (getattr(here, "end_lineno", 0) or 0, getattr(here, "end_col_offset", 0) or 0)
    looped = {n for loop in nz.loops for n in scopes.load_names(loop)}
    return [n for n in names if nz.last_read.get(n, (0, 0)) > end or n in looped]


def outside_updates(src) -> None:
    """A located error where the function updates a global or closure
    array in place through a local name bound to it (effects.py): the
    derived function would change it too, and its reverse sweep would
    read the changed values."""
    found = effects.outside_updates(src.tree, {**src.globals, **src.closure})
    if not found:
        return
    name, local = next(iter(found.items()))
    where = next((s for s in scopes.statements(src.tree.body)
                  if not hasattr(s, "body") and local in effects.updated_roots([s])), src.tree)
    raise UnsupportedSyntaxError(
        f"`{local}` may be `{name}`, a value from outside the function, and is "
        "updated in place here; s2s_ad differentiates the function's own values",
        src.locate(where), hint=f"copy it where `{local}` is bound "
        f"(`{local} = ....copy()`), or pass `{name}` as an argument")
