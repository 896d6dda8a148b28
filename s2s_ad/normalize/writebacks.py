"""What an in-place update emits, so that every name sharing memory with
the updated one stays true for the analyses.

Functions over the normalizer's state `nz` (__init__.py) and the relations of
normalize/aliasing.py.  After an in-place update of `n` (`n[i] = v`,
`n += e`, `n.append(v)`, ...) the normalizer emits, each guarded by a
run-time test that the relation still holds (`rt.shares`: a view still
shares memory with its base; an item is still `b[i]`), so a copy (`y[i]`
of a 1-d array is a scalar) is never mistaken for a view:
- for each alias `y`: `y = n` (a no-op rebinding; `if y is n: y = n` for
  maybe-aliases and for names updated by `op=`, which rebinds a number);
- for each `b` that `n` is a part of: `b = rt.sync_index(b, i, n)` (or
  `sync_transposed`, `sync_reshaped`): a no-op at run time and, for the
  analyses, the write of `n` into `b` - into every slot of a list, tuple
  or dict that holds the object at run time (`rt.slots`), whatever index
  it was read with; then `b`'s own relations, recursively;
- for each part `v` of `n`: `v = n[i]` again (the view now reads new values).

Where an update would have to go through an uncertain relation - writing
back through it, or re-reading a view that the program reads again - the
generated code checks at run time that the two do not share memory
(`rt.refuse_shared`), and raises a located error if they do: a float bound
in a loop never does.  `Normalized.shares` maps each in-place statement to
every name whose memory it may write, so that recording saves what the
reverse sweep needs.
"""
from __future__ import annotations

import dataclasses

import gast

from .. import astutil
from ..ir import RUNTIME
from .alias_parts import Part, distinct_slots
from . import aliasing, masks, realias, refusals, sequences


_SYNC = {"index": "sync_index", "T": "sync_transposed", "reshape": "sync_reshaped"}


def after_update(nz, stmt, name: str, always: bool, moves_items: bool = False,
                 last: bool = False) -> None:
    """Emit what keeps related names true after the in-place update
    `stmt` of `name`; record the names whose memory it may write.  (A
    write through a relation that cannot be followed is checked before
    the update, so a refused call changes nothing.)  An update that
    only `moves_items` of a list (`append`, `pop`) changes no item: the
    names bound to its items are not read again; nor are the temporaries
    of a user's statement done, or of this one where it is its `last`
    operation (`x[i] = v`)."""
    at = len(nz.out) - 1
    walk = _Walk(seen={name}, origin=name,
                 own_temps=frozenset(nz.temps[nz.statement_start:]) if last else frozenset())
    _step(nz, walk, name, always, items_kept=moves_items)
    while walk.later:                       # views re-read once every write is out
        _reread_views(nz, walk, *walk.later.pop(0))
    _check_maybe_ones(nz, walk)
    _check_partial_writers(nz, walk)
    nz.shares[stmt] = frozenset(walk.reached)
    checks = [s for s in nz.out[at + 1:] if refusals.is_refusal(s)]
    if checks:
        pairs = [(astutil.dotted_name(s.value.func), *(a.id for a in s.value.args[:2]),
                  *(k.arg for k in s.value.keywords))
                 for s in checks]           # (one of each kind for each pair of names)
        checks = [s for i, s in enumerate(checks) if pairs[i] not in pairs[:i]]
        nz.out[at:] = checks + [s for s in nz.out[at:] if not refusals.is_refusal(s)]


@dataclasses.dataclass
class _Walk:
    """One update's walk over the relations.  `seen`: the names claimed
    (reached, or to be re-read by the name that claimed them); `written`:
    the slots written so far, a view held in several slots is re-read from
    the one written; `origin`: the name the update wrote through;
    `own_temps`: the temporaries of the user's statement no code reads
    after this update, its last operation (with `nz.retired`);
    `reached`: the names whose values may change; `later`: the re-reads
    not yet emitted, one task per changed name; `maybe`: the names whose
    maybe-aliases are checked once the walk is done; `bases`: the names
    reached by a write into them; `stepped`: the names whose writes went
    up (a name claimed is seen before); `slot_writers`: who wrote each slot
    written; `writers`: for each base, the names that write it, with their
    groups; `written_as`: for each name of a group the walk stepped, the
    name it stepped (the one its aliases are rebound to after the writes:
    every write into the object goes through that name, so none is lost
    to the rebinding).  Writes go up at once and
    re-reads wait, first in first out, so that a base is written through
    every part the walk reaches before its views are read again
    (`_t1` and `_t2`, items of a list updated at slot `q`, both write into
    `a` before `a`'s views, or its aliases, are read again).  Each name is
    reached once: a base reached along two chains of different lengths
    (`m = x.reshape(2, 2)` written back from `m[0]`, `x` from `x[2:]`) may
    leave the longer chain's views stale: where two writers share memory
    that is refused (`_check_partial_writers`)."""
    seen: set
    origin: str
    own_temps: frozenset        # this statement's temporaries, read no more
    written: dict = dataclasses.field(default_factory=dict)
    reached: set = dataclasses.field(default_factory=set)
    later: list = dataclasses.field(default_factory=list)
    maybe: list = dataclasses.field(default_factory=list)
    bases: set = dataclasses.field(default_factory=set)
    stepped: set = dataclasses.field(default_factory=set)
    slot_writers: dict = dataclasses.field(default_factory=dict)
    writers: dict = dataclasses.field(default_factory=dict)
    written_as: dict = dataclasses.field(default_factory=dict)


def _step(nz, walk: _Walk, name: str, always: bool, source=None,
          items_kept: bool = False) -> None:
    """`name` got new values (re-read through the part `source`): emit
    its write-backs, following the bases reached, and queue the rebinding
    of its aliases and the re-read of its views.  The views of a changed
    object are all claimed before any is followed, so that a name that is
    both a view of it and an item of a container is re-read from the
    object and then written back into the container, never re-read from
    the container's stale item.  A write-back reaches every slot of a
    container that holds the object (`rt.slots`), so a view re-read from
    a base is never written back into it (its other relations to that
    base may be stale: `zs[-1]` after an `append`).  `items_kept`: the
    update of `name` changed no item (an `append`), whose names are not
    re-read."""
    group = nz.aliases.get(name, {name})
    if source is not None and not any(w.base in group for w in walk.written.values()):
        # re-read from a base: its object changed through another name
        # for it (`_t2 = xs[0]` of `_t1 = xs[0]`), at slots not known here
        walk.written[("any", name)] = Part(name, "whole", astutil.name(name))
    walk.seen |= group              # one object: nothing to write back between them
    walk.stepped |= group
    for member in group:
        walk.written_as.setdefault(member, name)
    own = {view for view, part in aliasing.views_of(nz, group)
           if not _untouched(part, group, walk.written, items_kept)} - walk.seen
    walk.seen |= own                # claimed: re-read later, from `name`
    walk.reached |= set(group) | aliasing.maybe_one(nz, group)
    _write_back_parts(nz, walk, name, group, source)
    walk.later.append((name, always, group, own, items_kept))


def _write_back_parts(nz, walk: _Walk, name: str, group: set, source) -> None:
    """Write the new values of `name` into every base its object is a
    part of (refusing an uncertain or masked relation), then follow the
    bases; a maybe-alias's bases are checked after the walk."""
    for member in sorted(group):
        for part in nz.parts.get(member):
            if part.base in group or source is not None and part.base == source.base:
                continue
            as_name = walk.written_as.get(part.base, part.base)
            if as_name != part.base:            # (`h = acc`, `_t2 = acc[1:]`: into `h`)
                part = dataclasses.replace(part, view=astutil.clone(part.view))
                part.rebase(as_name)
            if part.certain and not part.masked:
                walk.writers.setdefault(part.base, {}).setdefault(name, frozenset(group))
            if _slot(part) in walk.written:
                _written_twice(nz, walk, member, group, part)
                continue
            if not part.certain:
                refusals.shared(nz, member, part, "is written through")
                continue
            if part.masked:         # `member = stop_gradient(base[i])`
                refusals.masked(nz, part.base, member)
                continue
            walk.written[_slot(part)] = part
            walk.slot_writers[_slot(part)] = name
            _check_other_holders(nz, name, member, part)
            _guarded(nz, name, part, lambda slots: _write_back(name, part, slots),
                     part.base, "slots" if part.kind == "index" else "shares")
            if part.base not in walk.stepped:   # (claimed to be re-read, maybe:
                walk.seen.add(part.base)        # what it got goes up first)
                walk.bases.add(part.base)
                _step(nz, walk, part.base, True)
    walk.maybe.append((name, group))


def _check_other_holders(nz, name: str, member: str, part: Part) -> None:
    """Refuse, at run time where they share memory, what a write into
    `part.base` does not follow: a slot of a list chosen at run time whose
    other items may be the same object, and the lists holding the object
    that a shallow copy, `+` or `*` made."""
    if part.kind == "index" and part.base in nz.sequences and \
            not isinstance(part.index, gast.Constant):
        refusals.overlap(nz, member, part.base)
    for other in sorted(nz.joined.get(part.base, ())):    # a shallow copy's
        refusals.shared(nz, name, Part(other, "reshape", astutil.name(other)),
                        f"is updated in place, an item `{part.base}` shares with it,")
    for other in sequences.joined_from(nz, part.base):
        refusals.shared(nz, name, Part(other, "reshape", astutil.name(other)),
                        "is updated in place while a list made by `+`, `*` or "
                        "a copy holds it,")     # (`[a] * 2`: no relation follows)


def _written_twice(nz, walk: _Walk, member: str, group: set, part: Part) -> None:
    """`member` would write a slot another name wrote in this update (two
    names read from one slot that the alias analysis did not make one:
    read in a loop that changes the container, or updated by `op=`), each
    with part of the update, and one write would lose the other's.  Refused at
    run time where the two share memory."""
    other = walk.slot_writers.get(_slot(part))
    if other is not None and other not in group and part.certain and not part.masked:
        refusals.partial(nz, member, other, part.base)


def _check_maybe_ones(nz, walk: _Walk) -> None:
    """What holds a name that may be the updated object (`t = acc[q]` in
    a loop may be `_t1` or `_t2`) is checked at run time, not written,
    unless the walk reached it (`e = [r if c else s]`) and the two may
    still be in the slot that links them (not `unlinked`)."""
    for name, group in walk.maybe:
        for member in sorted(aliasing.maybe_one(nz, group)):
            # (one that left a container's slot is reached through none)
            unlinked = any(frozenset((member, g)) in nz.unlinked for g in group)
            for part in nz.parts.get(member):
                if part.base not in (group if unlinked else group | walk.seen):
                    refusals.shared(nz, name, part, "is written through")


def _check_partial_writers(nz, walk: _Walk) -> None:
    """A base written by a view that got its new values from a view of
    its own (`res` of `res[1:]`: the walk reached it by a write) and by
    another name is right only where the two do not share memory: the
    first misses what the second writes (`res = w[1:]` and `w[1:]`, items
    reached from `p = [res[1:], w[1:]]`).  Each such pair is checked at run
    time: a located error if they share memory.  (A container's slots are
    written by object, one each: no pair there; but a name that only may
    hold a list may hold an array: `acc = m + v`, `m` a list, `v` an array.)"""
    for base, writers in sorted(walk.writers.items()):
        if nz.aliases.get(base, {base}) & nz.containers:
            continue
        for view, group in sorted(writers.items()):
            if group & walk.bases:
                for other in sorted(n for n, g in writers.items() if g != group):
                    refusals.partial(nz, view, other, base)


def _views_to_reread(nz, group: set, seen: set, own: set, written: dict,
                     items_kept: bool) -> dict:
    """The views of the object (and, uncertain, of what may be it) whose
    values changed, each by the part to re-read it through: a view held
    in several slots by the one written."""
    views: dict = {}
    maybe = aliasing.maybe_one(nz, group) - seen
    for view, part in aliasing.views_of(nz, group) + [   # and views of what may be it:
            (v, dataclasses.replace(p, certain=False)) for v, p in aliasing.views_of(nz, maybe)]:
        if _untouched(part, group, written, items_kept):
            continue
        if (view in own or view not in seen) and \
                (view not in views or _slot(part) in written):
            views[view] = part
    return views


def _reread_views(nz, walk: _Walk, name: str, always: bool, group: set, own: set,
                  items_kept: bool) -> None:
    """Rebind the aliases of `name` to it, and re-read each changed view
    from it (refusing an uncertain one that is read again, or a crossing
    of masks), then follow its own relations.  An uncertain one is not
    followed: what holds it, or what that is a part of in turn (`r_1` of
    `rows = [r for r in M]` is a row of `M`), must not share memory with
    the object the update wrote (`walk.origin`) if the program reads it
    again."""
    realias.realias(nz, name, always)
    views = _views_to_reread(nz, group, walk.seen, own, walk.written, items_kept)
    walk.seen.update(views)
    for view, part in views.items():
        walk.reached.add(view)      # its values change: record them if needed
        if _dead_temporary(nz, view, part, walk):
            if not nz.parts.is_base(view):
                continue            # no code reads it again: its values need no name
        if not part.certain:
            _check_uncertain(nz, walk, view, part, group)
            continue
        fresh = dataclasses.replace(part, view=astutil.clone(part.view))
        fresh.rebase(name)          # read from the name holding the new value
        how = masks.crossing(nz, masks.view_mask(nz, view, part), masks.mask_of(nz, name))
        if how == "refuse":
            refusals.masked(nz, view, name)
            continue
        reread = astutil.assign(view, masks.masked_as(astutil.clone(fresh.view), how))
        nz.rereads.add(reread)    # the same object: its relations stay
        _guarded(nz, view, fresh, lambda slots: reread, view)
        _step(nz, walk, view, True, part)


def _check_uncertain(nz, walk: _Walk, view: str, part: Part, group: set) -> None:
    """`view`, an uncertain part of the changed object, is not followed:
    what may read it again is checked at run time (refusals.uncertain)."""
    origin = walk.origin
    through = part.item and part.base in nz.sequences and \
        part.base not in nz.aliases.get(origin, {origin})
    refusals.uncertain(nz, view, part, group, origin, walk.seen, through,
                       realias.rebound_with(nz, origin) if through else set())


def _dead_temporary(nz, view: str, part: Part, walk: _Walk) -> bool:
    """Whether `view`, surely `part` of a base, may go without a re-read:
    a temporary no code reads again (of a statement done, or this one's
    after its last operation) that has no alias and is a part of nothing
    but `part`'s base; in a loop too, whose next iteration binds it again
    before reading it (a temporary is never read before its statement
    binds it).  The caller also asks that nothing be a view or an item of
    it."""
    return part.certain and (view in nz.retired or view in walk.own_temps) and \
        nz.aliases.get(view, {view}) == {view} and \
        not nz.maybe_aliases.get(view) and all(p is part for p in nz.parts.get(view))


def _guarded(nz, view: str, part: Part, stmt, binds: str, helper: str = "shares") -> None:
    """`if test := rt.<helper>(view, base[, index]): stmt(test)`, which
    binds `binds`; nothing where that is a global or closure name (a
    re-read of one a display holds, a write-back into one): the user's
    function never rebinds it, and a binding would make it a local of the
    derived function, unbound where the function read it before."""
    if not aliasing.is_local(nz, binds):
        return
    args = [astutil.name(view), astutil.name(part.base)]
    if part.kind == "index":
        args.append(part.index)
    nz.unbound.update({view, part.base} - nz.params)    # maybe bound in a branch only
    test = nz.namer.temp(helper)
    nz.emit(astutil.assign(test, astutil.call(f"{RUNTIME}.{helper}", args)))
    nz.emit(astutil.if_(astutil.name(test), nz.capture(lambda: nz.emit(stmt(test)))))


def _write_back(view: str, part: Part, slots: str) -> gast.stmt:
    """`base = rt.sync_*(base[, slots], view)`: `view`, holding the new
    value, written into `base` - into every slot that holds the object
    (`rt.Slots`, found by the guard `slots`)."""
    args = [astutil.name(part.base)]
    if part.kind == "index":
        args.append(astutil.name(slots))
    return astutil.assign(part.base, astutil.call(
        f"{RUNTIME}.{_SYNC[part.kind]}", args + [astutil.name(view)]))


def _slot(part: Part) -> tuple:
    """Where a part sits in its base: (base, how it is read from it)."""
    return part.base, part.kind, gast.dump(part.view)


def _untouched(part: Part, group: set, written: dict, items_kept: bool = False) -> bool:
    """Whether `part` is an item a display (or `append`) put into one of
    `group`, in a slot no write reached: an update of a list, tuple or dict
    replaces slots, or writes one through a view of it (`written`), and
    never changes the objects in the others; or any item of a list whose
    update only moved its items (`items_kept`)."""
    if items_kept and part.kind == "index" and part.base in group:
        return True
    if not part.item:
        return False
    return all(w.kind == "index" and distinct_slots(w.index, part.index)
               for w in written.values() if w.base in group)     # ("whole": any slot)
