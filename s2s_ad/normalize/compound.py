"""How the alias relations cross compound statements.

Functions over the normalizer's state `nz` (__init__.py) and the relations of
normalize/aliasing.py, which are tracked in one pass in program order:
- an `if`: each branch starts from the relations before it, and what
  either relates holds after it, uncertainly (`branches`);
- a loop: the relations of the names it rebinds are uncertain on entry
  (the next iteration) and after it, where those from before it are joined
  with the body's (it may run no times); an in-place update of a name the body
  rebinds later to a view or alias is refused (`_check_carried`), and the
  names the body copies into one another share their relations after it,
  an update of one checked at run time against them (`_carry_around`).
"""
from __future__ import annotations

import collections
import dataclasses

import gast

from .. import astutil, scopes, traversal
from ..errors import UnsupportedSyntaxError
from . import aliasing, refusals, sequences, slot_items, views
from .alias_parts import Part, extend_by_key, extend_new


def _relations(nz) -> tuple:
    """A copy of the alias and part relations (for the other branch)."""
    groups, aliases = {}, {}
    for name, group in nz.aliases.items():
        aliases[name] = groups.setdefault(id(group), set(group))
    maybe = {name: set(others) for name, others in nz.maybe_aliases.items()}
    parts = {name: [dataclasses.replace(p, view=astutil.clone(p.view)) for p in ps]
             for name, ps in nz.parts.items()}
    return aliases, maybe, parts


def branches(nz, body_fn, orelse_fn):
    """Normalize both branches of an `if` from the relations before it,
    and join them: what either branch relates holds after, uncertainly."""
    before, held = _relations(nz), dict(nz.slot_items)
    body = body_fn()
    after_body, held_after_body = _relations(nz), nz.slot_items
    nz.aliases, nz.maybe_aliases, nz.parts = before
    nz.slot_items = held
    orelse = orelse_fn()
    _join(nz, after_body)
    slot_items.join(nz, held_after_body)
    return body, orelse


def _join(nz, other: tuple) -> None:
    """Join the relations `other` (of another path to this point, from
    `_relations`) into the current ones: what either relates holds after,
    an alias of one path only as a maybe-alias."""
    aliases, maybe, parts = other
    for name, others in maybe.items():
        nz.maybe_aliases.setdefault(name, set()).update(others)
    for name, group in aliases.items():
        if nz.aliases.get(name) != group:
            for other_name in group - {name}:
                aliasing.maybe_same(nz, name, other_name)
    for name, ps in parts.items():
        extend_by_key(nz.parts.setdefault(name, []), ps)


def enter_compound(nz, stmt) -> tuple:
    """At the start of a compound statement: the relations of the names
    it rebinds become uncertain (a loop's next iteration), and a loop's
    containers may hold what its body stores into them; returns all the
    relations then, for `leave_compound`."""
    leave_compound(nz, stmt)
    if isinstance(stmt, (gast.For, gast.While)):
        _carried_stores(nz, stmt)
        slot_items.enter_loop(nz, stmt)
    return _relations(nz)


def _carried_stores(nz, loop) -> None:
    """The next iteration of `loop` may read from a list or dict built
    here what its body stores there later (`t = xs[0]; t *= 2; xs[0] = a`:
    in the second round `t` is `a`, which the update changes): on entry,
    each name the body stores at a literal slot, and does not rebind, is
    already that slot's item (the re-reads and write-backs check at run
    time that it is); a name stored at another slot, or rebound, or what a
    stored value may view or be an item of, may share memory with an item
    (uncertain: an update that would need it is refused where they do
    share memory)."""
    rebound, read = _rebound_names(loop), _items_read(loop)
    for stmt, viewing in _body_views(nz, loop):
        for base, index, value in _stores(stmt):
            if base not in nz.sequences or base in rebound or \
                    not read & set(aliasing.related(nz, base, upward=False)):
                continue            # (a comprehension's result: only stored into)
            literal = index if isinstance(index, gast.Constant) else astutil.const(...)
            name = value.id if isinstance(value, gast.Name) else None
            if name is not None and aliasing.is_local(nz, name) and name not in rebound:
                sequences.note_stored(nz, base, literal, value, literal is index)
            shared = viewing.get(name, set()) if name in viewing else \
                _viewed_names(nz, value) - ({name} - rebound)
            shared |= {held for seq in shared & nz.sequences     # (what it read them from)
                       for held, part in aliasing.views_of(nz, {seq} | nz.joined.get(seq, set()))
                       if part.item}
            for other in sorted(n for n in shared if n != base and aliasing.is_local(nz, n)):
                item = astutil.subscript(astutil.name(base), astutil.const(...))
                nz.parts.setdefault(other, []).append(
                    Part(base, "index", item, certain=False, item=True))


_INSERTS = ("append", "insert")     # methods that store an item at a run-time slot


def _items_read(loop) -> set:
    """The names `loop` reads other than to store an item into them (`xs[i]
    = v`, `xs.append(v)`)."""
    storing = {n.value for n in traversal.walk(loop) if isinstance(n, gast.Subscript)
               and isinstance(n.ctx, gast.Store)}
    storing |= {n.func.value for n in traversal.walk(loop) if isinstance(n, gast.Call)
                and isinstance(n.func, gast.Attribute) and n.func.attr in _INSERTS}
    return {n.id for n in traversal.walk(loop) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load) and n not in storing}


def _stores(stmt) -> list:
    """(container, index, value) for each item `stmt` stores into a
    name's container: `xs[i] = v` (also in a tuple of targets), and
    `xs.append(v)` or `xs.insert(i, v)` (at a slot known at run time)."""
    out = []
    if isinstance(stmt, gast.Assign):
        for target in stmt.targets:
            pairs = zip(target.elts, stmt.value.elts) if isinstance(target, (
                gast.Tuple, gast.List)) and isinstance(stmt.value, (gast.Tuple, gast.List)) \
                and len(target.elts) == len(stmt.value.elts) else [(target, stmt.value)]
            out += [(t.value.id, t.slice, v) for t, v in pairs
                    if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)]
    simple = not hasattr(stmt, "body")     # (a block's statements come on their own)
    calls = [n for n in traversal.walk(stmt) if simple and isinstance(n, gast.Call)
             and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name)
             and n.func.attr in _INSERTS and n.args]
    return out + [(c.func.value.id, astutil.const(...), c.args[-1]) for c in calls]


def _check_carried(nz, loop, rebound: set) -> None:
    """Refuse an in-place update, in a loop body, of a name the body
    rebinds later to a view or alias of another value (`prev *= 2;
    prev = row`), or of a view of one bound in the body (`cur = prev[:2];
    cur *= 2; prev = row`): from the second iteration on the update writes
    what the previous one bound, which the single pass of this analysis
    does not follow.  Called after the body, before its relations are
    joined."""
    carried = _carried_names(loop)
    for stmt, viewing in _body_views(nz, loop):
        for name in sorted(_augmented(stmt) | _written_through(stmt)):
            for held in sorted(({name} | viewing.get(name, set())) & carried):
                others = set(nz.aliases.get(held, ())) | nz.maybe_aliases.get(held, set())
                if nz.parts.get(held) or others - rebound - {held}:   # (names the loop
                    # rebinds too are copied into one another: see `_carry_around`)
                    raise _carried_update(nz, stmt, name, held)


def _check_kept_views(nz, loop) -> None:
    """Refuse a loop whose body appends a view of a value (`hist.append(
    a[1:])`) that it updates in place (`a *= 2`): from the second
    iteration on the update changes the views kept before, which the
    single pass of this analysis relates to `a` through names the body
    has rebound since."""
    kept: set = set()       # the names an appended value may view
    for stmt, viewing in _body_views(nz, loop):
        for call in (n for n in traversal.walk(stmt) if isinstance(n, gast.Call)):
            if isinstance(call.func, gast.Attribute) and call.func.attr == "append" \
                    and call.args:
                arg = call.args[0]      # (appending `a` itself keeps no view of it)
                kept |= viewing.get(arg.id, set()) if isinstance(arg, gast.Name) \
                    else _viewed_names(nz, arg)
    for stmt in scopes.statements(loop.body):       # (before or after the append)
        for name in sorted((_augmented(stmt) | _written_through(stmt)) & kept):
            raise UnsupportedSyntaxError(
                f"`{name}` is updated in place in this loop, which also keeps views of "
                "it in a list: from the second iteration on the update changes the "
                "views kept before, which s2s_ad does not follow around a loop",
                nz.src.locate(stmt), hint=f"append a copy (`.copy()`) of the view of `{name}`")


def _body_views(nz, loop):
    """Each statement of `loop`'s body, in order, with what the names bound
    in the body before it may view: name -> locals (transitively, `v =
    a[1:]; w = v[:1]`; a name rebound to a new value views nothing)."""
    viewing: dict = {}
    for stmt in scopes.statements(loop.body):
        yield stmt, viewing
        if isinstance(stmt, gast.Assign):
            bases = _viewed_names(nz, stmt.value)
            for target in scopes.stored_names(stmt):
                viewing[target] = bases.union(*(viewing.get(b, set()) for b in bases))


def _viewed_names(nz, value) -> set:
    """The locals whose memory `value` may share (none for a new value)."""
    if not _may_be_view(nz, value):
        return set()
    return {n for n in scopes.load_names(value) if aliasing.is_local(nz, n)}


def _may_be_view(nz, value) -> bool:
    """Whether `value` may share memory with a name it reads (a name, a
    subscript, an attribute, a call not known to make a new value)."""
    return isinstance(value, gast.Name) or views.view_of(nz, value) is not None or \
        bool(views.may_view(nz, value))


def _carried_update(nz, stmt, name: str, held: str) -> UnsupportedSyntaxError:
    what = f"`{name}` is updated in place in this loop and" if name == held else \
        f"`{name}`, which may be a view of `{held}`, is updated in place in this " \
        f"loop, and `{held}` is"
    return UnsupportedSyntaxError(
        f"{what} rebound later in it to a view or alias of another value, so from "
        "the second iteration on the update writes that value; s2s_ad does not "
        "follow a relation around a loop",
        nz.src.locate(stmt),
        hint=f"copy where `{held}` is rebound (`{held} = ....copy()`), or update the "
             "value it is bound to directly")


def leave_compound(nz, stmt, before: tuple | None = None, emitted=None) -> None:
    """Relations of names a compound statement rebinds (in the user's
    code, or in `emitted`, its A-normal form) are uncertain after it;
    `before` (from `enter_compound`) holds the relations on entry, which
    hold on the paths that did not rebind them: for a loop, all of them
    (it may run no times); for an `if`, those of the names it rebinds
    (`branches` joined its two paths)."""
    looped = emitted is not None and isinstance(stmt, (gast.For, gast.While))
    rebound = _rebound_names(stmt) | (_rebound_by(nz, emitted) if emitted else set())
    stored = _rebound_names(stmt) | scopes.stored_names(emitted) if looped else rebound
    if looped:
        _check_carried(nz, stmt, stored)  # (the body's relations, before the joins)
        _check_kept_views(nz, stmt)
    # (the objects the names share at the end of the body, for `_carry_around`)
    ones = {n: frozenset(nz.aliases.get(n, {n})) for n in stored} if looped else {}
    if before is not None and looped:
        _join(nz, before)
    elif before is not None:
        for name in rebound:
            extend_by_key(nz.parts.setdefault(name, []), before[2].get(name, []))
    for name in rebound:
        group = nz.aliases.pop(name, None)
        if group is not None:
            group.discard(name)
            for other in group:
                aliasing.maybe_same(nz, name, other)
        for part in nz.parts.get(name, []):
            part.certain = False
    for _, part in aliasing.views_of(nz, rebound):
        part.certain = False
    if looped:
        _carry_around(nz, emitted, stored, ones)


def _carry_around(nz, loop, rebound: set, ones: dict) -> None:
    """A loop's next iteration reads what this one bound: names the body
    copies into one another (`a, b = b, a`) may each hold, after the
    loop, what any of them held in some iteration.  They become
    maybe-aliases of each other and share their (uncertain) parts.
    `ones`: each name's aliases at the end of the body (two names one
    object there hold it in every pass)."""
    group = {name: {name} for name in sorted(rebound)}   # (sorted: the code is deterministic)
    carried = _carried_names(loop)
    for stmt in scopes.assignments(loop.body):
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, gast.Name) and isinstance(value, gast.Name) \
                and {target.id, value.id} <= rebound and group[target.id] is not group[value.id]:
            merged = group[target.id] | group[value.id]
            for name in merged:
                group[name] = merged
    for members in {id(g): g for g in group.values() if len(g) > 1}.values():
        shared = [p for name in sorted(members) for p in nz.parts.get(name, [])]
        outside = {p.base for p in shared} | {
            a for name in members for a in nz.aliases.get(name, ())} - members
        # and views of what a member held taken before the loop, which the
        # body never re-reads (the sequence a loop over one reads each
        # pass), where the members hold two objects (swapped: the view's
        # base name holds the other one in the next pass)
        outside |= {v for v, p in aliasing.views_of(nz, members)
                    if v not in members and v not in rebound
                    and members - ones.get(p.base, {p.base})}
        if members & carried:       # a value held around the loop
            _refuse_carried_updates(nz, loop, members, sorted(outside), carried)
        for name in sorted(members):
            extend_new(nz.parts.setdefault(name, []), shared)
            nz.maybe_aliases.setdefault(name, set()).update(members - {name})
        for part in shared:
            part.certain = False


def _carried_names(loop) -> set:
    """Names the body of `loop` may read before it rebinds them: each
    iteration's value of such a name is the previous iteration's.  Paths
    through ifs are followed; a name is bound after an `if` only if both
    branches bind it, and never by a nested loop (it may not run)."""
    bound = set()
    if isinstance(loop, gast.For):
        bound |= {n.id for n in traversal.walk(loop.target) if isinstance(n, gast.Name)}
    carried: set = set()
    _reads_before_binding(loop.body, bound, carried)
    return carried & _rebound_names(loop)


def _reads_before_binding(body: list, bound: set, carried: set) -> set:
    """Add to `carried` the names `body` reads while not in `bound`; return
    the names bound after it on every path."""
    bound = set(bound)
    for stmt in body:
        if isinstance(stmt, gast.If):
            carried |= set(scopes.load_names(stmt.test)) - bound
            bound |= _reads_before_binding(stmt.body, bound, carried) & \
                _reads_before_binding(stmt.orelse, bound, carried)
        elif isinstance(stmt, (gast.For, gast.While)):
            header = stmt.iter if isinstance(stmt, gast.For) else stmt.test
            carried |= set(scopes.load_names(header)) - bound
            inner = bound | (scopes.all_names(stmt.target) if isinstance(stmt, gast.For) else set())
            _reads_before_binding(stmt.body + stmt.orelse, inner, carried)
        else:
            carried |= (set(scopes.load_names(stmt)) | _augmented(stmt)) - bound
            bound |= _rebound_names(stmt)
    return bound


def _augmented(stmt) -> set:
    """Names `stmt` updates with `op=` (`x += v`, `x[i] += v`)."""
    return {n.id for node in traversal.walk(stmt) if isinstance(node, gast.AugAssign)
            for n in traversal.walk(node.target) if isinstance(n, gast.Name)}


def _written_through(stmt) -> set:
    """Names `stmt` writes into by subscript (`x[i] = v`)."""
    return {node.value.id for node in traversal.walk(stmt)
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
            and isinstance(node.value, gast.Name)}


def _rebound_by(nz, emitted) -> set:
    """The names the A-normal form `emitted` of an `if` or a loop binds to
    new objects: all it stores but those only ever bound to the object they
    held (`aliasing.keeps_object`: `row *= 0.5` on one path, or in any
    iteration, and the write-back into `row`'s base leave the relations
    of both as they were on entry)."""
    stores, kept = collections.Counter(), collections.Counter()
    for node in traversal.walk(emitted):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] += 1
        elif isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name) and aliasing.keeps_object(nz, node):
            kept[node.targets[0].id] += 1
    return scopes.stored_names(emitted) - {n for n, k in kept.items() if k == stores[n]}


def _rebound_names(stmt) -> set:
    """Names a statement binds to new objects (an augmented assignment keeps
    an array: it is an in-place update, tracked where it happens)."""
    names = set()
    for node in traversal.walk(stmt):
        if isinstance(node, gast.Assign):
            targets = node.targets
        elif isinstance(node, (gast.AnnAssign, gast.For, gast.NamedExpr)):
            targets = [node.target]
        else:
            continue
        names |= {n.id for t in targets for n in traversal.walk(t)
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return names


def _refuse_carried_updates(nz, loop, members: set, outside: list, carried: set) -> None:
    """Before each in-place update in `loop` of one of `members` - names
    the body copies into one another, so that from the second iteration
    on each may hold what another held in the one before - check at run
    time that it shares no memory with `outside`, the objects they were
    related to by the end of the body: the single pass of this analysis
    saw the update before those relations.  Not where the name holds a
    value of this iteration made from no member: it is not `carried` (the
    body binds it before any read), and no binding of it before the update
    reads a member (`for p in params: p -= g`, whose write-back copies `p`
    into a member afterwards)."""
    order = list(scopes.statements(loop.body))
    updates = [s for s in order if s in nz.shares and s.targets[0].id in members]
    for update in updates:
        name = update.targets[0].id
        if name not in carried and not any(
                isinstance(s, gast.Assign) and name in scopes.stored_names(s) and
                set(scopes.load_names(s.value)) & members
                for s in order[:order.index(update)]):
            continue
        what = f"`{name}`" if name in nz.locals else "a value"
        saved, nz.user_stmt = nz.user_stmt, nz.origin.get(update, update)
        checks = nz.capture(lambda: [refusals.refusal(nz,
            name, base, f"{what} is updated in place in this loop, where the names "
            "copied into one another (`a, b = b, a`) may hold, from the second "
            f"iteration on, what the others held in the one before: here, memory "
            f"shared with {f'`{base}`' if base in nz.locals else 'a value read before'}, "
            "which s2s_ad does not follow around a loop",
            f"copy where {what} is bound in the loop (`.copy()`)") for base in outside])
        nz.user_stmt = saved
        _insert_before(loop, update, checks)


def _insert_before(node, stmt, new: list) -> None:
    """Insert `new` before `stmt`, in whichever block under `node` holds it."""
    for field in ("body", "orelse"):
        block = getattr(node, field, None) or []
        if stmt in block:
            at = block.index(stmt)
            block[at:at] = new
            return
        for child in block:
            _insert_before(child, stmt, new)
