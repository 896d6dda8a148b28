"""Rebinding the aliases of a name updated in place (writebacks.py), so the
analyses see them change too.

After `n += e` (or any in-place update of `n`) every alias `y` of `n` is
rebound, `y = n`: a no-op for the primal, the update's write for the
analyses.  A name that only may be one object with `n` (bound in a branch
or a loop) is rebound where it is, `if y is n: y = n`, and keeps its parts
either way.  An alias holding what `stop_gradient` returned stays masked
(`masks.masked_as`); an update through one is refused.

Functions over the normalizer's state `nz` (__init__.py).
"""
from __future__ import annotations

import gast

from .. import astutil
from . import aliasing, compound, masks, refusals


def rebound_with(nz, name: str) -> set:
    """The names `realias` rebinds to `name` where they are one object
    with it."""
    aliases, groups = _realiased(nz, name)
    return set(aliases).union(*groups)


def realias(nz, name: str, always: bool) -> None:
    """Rebind the aliases of `name` to it (a no-op for the primal), so
    the analyses see them change too; names that only may be aliases
    (bound in a branch or loop, with their own aliases) are rebound if
    they still are.  An alias holding what `stop_gradient` returned
    stays masked; an update through one is refused (`_crossing`)."""
    aliases, maybe_groups = _realiased(nz, name)
    for other in aliases:
        how = masks.crossing(nz, masks.mask_of(nz, other), masks.mask_of(nz, name))
        if how == "refuse":
            refusals.masked(nz, other, name)
        elif always and other not in nz.loose and name not in nz.loose:
            nz.emit(astutil.assign(other, masks.masked_as(astutil.name(name), how)))
        else:               # (a number updated by `op=` is a new object)
            _if_same(nz, [other], name, how)
    for names in maybe_groups:
        nz.unbound.update(set(names) - nz.params)   # maybe not bound yet
        ways: dict = {}
        for n in names:
            ways.setdefault(masks.crossing(nz, masks.mask_of(nz, n), masks.mask_of(nz, name)), []).append(n)
        for n in ways.pop("refuse", []):
            refusals.masked(nz, n, name)
        for how, same in sorted(ways.items()):
            _if_same(nz, same, name, how)


def _realiased(nz, name: str) -> tuple[list, list]:
    """What `realias` rebinds to `name`: its aliases (but a temporary read
    once already, no base of views), and the groups of locals bound to what
    may be one object with it (each rebound where it is)."""
    group = set(nz.aliases.get(name, {name}))
    aliases = [o for o in sorted(group - {name}) if o in nz.locals or aliasing.views_of(nz, {o})]
    groups: list = []
    done: set = set()
    for other in sorted(aliasing.maybe_one(nz, group)):
        names = sorted(n for n in nz.aliases.get(other, {other}) if n in nz.locals)
        if names and names[0] not in done:
            done.update(names)
            groups.append(names)
    return aliases, groups


def _if_same(nz, others: list, name: str, how: str = "same") -> None:
    """`if others[0] is name: others... = name` (masked as `how` says).
    Either way each of `others` still holds the object it held, so it
    keeps its parts (`g` an item of `e = [g]`)."""
    kept = {o: nz.parts.get(o) for o in others}
    same = nz.namer.temp("same")
    nz.emit(astutil.assign(same, astutil.compare(
        astutil.name(others[0]), gast.Is, astutil.name(name))))
    body = nz.capture(lambda: [nz.emit(astutil.assign(
        o, masks.masked_as(astutil.name(name), how))) for o in others])
    guard = astutil.if_(astutil.name(same), body)
    nz.emit(guard)
    compound.leave_compound(nz, guard)     # still only maybe aliases
    for o, parts in kept.items():
        nz.parts.extend(o, parts)
