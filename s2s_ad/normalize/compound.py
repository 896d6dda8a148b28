"""How the alias relations cross compound statements.

Functions over the normalizer's state `nz` (__init__.py) and the relations of
normalize/aliasing.py, which are tracked in one pass in program order:
- an `if`: each branch starts from the relations before it, and what
  either relates holds after it, uncertainly (`branches`);
- a loop: the relations of the names it rebinds are uncertain on entry
  (the next iteration) and after it, where those from before it are joined
  with the body's (it may run no times), and the names the body copies
  into one another share their relations after it (`_carry_around`); what
  keeps that true around the loop (the relations the body makes after an
  update the next iteration's update changes) is checked in carried.py.
"""
from __future__ import annotations

import collections

import gast

from .. import scopes, traversal
from . import aliasing, carried, carried_views, slot_items


def _relations(nz) -> tuple:
    """A copy of the alias and part relations (for the other branch)."""
    groups, aliases = {}, {}
    for name, group in nz.aliases.items():
        aliases[name] = groups.setdefault(id(group), set(group))
    maybe = {name: set(others) for name, others in nz.maybe_aliases.items()}
    return aliases, maybe, nz.parts.copy()


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
        nz.parts.extend(name, ps)


def enter_compound(nz, stmt) -> tuple:
    """At the start of a compound statement: the relations of the names
    it rebinds become uncertain (a loop's next iteration), and a loop's
    containers may hold what its body stores into them; returns all the
    relations then, for `leave_compound`."""
    leave_compound(nz, stmt)
    if isinstance(stmt, (gast.For, gast.While)):
        carried.carried_stores(nz, stmt)
        slot_items.enter_loop(nz, stmt)
    return _relations(nz)


def leave_compound(nz, stmt, before: tuple | None = None, emitted=None) -> None:
    """Relations of names a compound statement rebinds (in the user's
    code, or in `emitted`, its A-normal form) are uncertain after it;
    `before` (from `enter_compound`) holds the relations on entry, which
    hold on the paths that did not rebind them: for a loop, all of them
    (it may run no times); for an `if`, those of the names it rebinds
    (`branches` joined its two paths)."""
    looped = emitted is not None and isinstance(stmt, (gast.For, gast.While))
    rebound = carried.rebound_names(stmt) | (_rebound_by(nz, emitted) if emitted else set())
    stored = carried.rebound_names(stmt) | scopes.stored_names(emitted) if looped else rebound
    if looped:
        carried.check_carried(nz, stmt, stored)  # (the body's relations, before the joins)
        carried.check_kept_views(nz, stmt)
        carried_views.check(nz, stmt, emitted)
    # (the objects the names share at the end of the body, for `_carry_around`)
    ones = {n: frozenset(nz.aliases.get(n, {n})) for n in stored} if looped else {}
    if before is not None and looped:
        _join(nz, before)
    elif before is not None:
        for name in rebound:
            nz.parts.extend(name, before[2].get(name))
    for name in rebound:
        group = nz.aliases.pop(name, None)
        if group is not None:
            group.discard(name)
            for other in group:
                aliasing.maybe_same(nz, name, other)
        for part in nz.parts.get(name):
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
    held = carried.carried_names(loop)
    for stmt in scopes.assignments(loop.body):
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, gast.Name) and isinstance(value, gast.Name) \
                and {target.id, value.id} <= rebound and group[target.id] is not group[value.id]:
            merged = group[target.id] | group[value.id]
            for name in merged:
                group[name] = merged
    for members in {id(g): g for g in group.values() if len(g) > 1}.values():
        shared = [p for name in sorted(members) for p in nz.parts.get(name)]
        # (and what a member may be: `hid = b` before a loop swapping `b, w`
        # leaves `w` maybe `hid` at the end of the body, and `b` is it in the
        # next pass; fuzz seed 202348, a wrong gradient)
        outside = {p.base for p in shared} | {
            a for name in members for a in nz.aliases.get(name, ())} - members | \
            aliasing.maybe_one(nz, members)
        # and views of what a member held taken before the loop, which the
        # body never re-reads (the sequence a loop over one reads each
        # pass), where the members hold two objects (swapped: the view's
        # base name holds the other one in the next pass)
        outside |= {v for v, p in aliasing.views_of(nz, members)
                    if v not in members and v not in rebound
                    and members - ones.get(p.base, {p.base})}
        if members & held:       # a value held around the loop
            carried.refuse_carried_updates(nz, loop, members, sorted(outside), held)
        for name in sorted(members):
            nz.parts.extend(name, shared)
            nz.maybe_aliases.setdefault(name, set()).update(members - {name})
        for part in shared:
            part.certain = False


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


