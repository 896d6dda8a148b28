"""The alias analysis: which names may share memory.

Functions over the normalizer's state `nz` (__init__.py).  Two relations are tracked in
program order while the function is normalized:

- *aliases*: names bound to one object by plain copies (`y = x`);
- *parts*: `v` is a part of `b` when it was bound to a view of `b` (any
  subscript `b[i]`, `b.T`, `b.reshape(...)`, `b.ravel()`, `np.asarray(b)`,
  the rows a `for` loop reads: normalize/views.py) or is an item of a
  display `b = [v, w]`.  The result of a helper of the user's, or of any
  NumPy function or array method not known to make a new array
  (`np.moveaxis(b, ...)`, `np.split(b, 2)`, `b.astype(t, copy=False)`), is
  an *uncertain* part of its arguments.

A relation bound inside an `if` or a loop is *uncertain* after it (the
index it was bound with is not known), and so is one whose index variable
was rebound; names that only may be one object are *maybe-aliases*.  What
an in-place update emits from these relations is normalize/writebacks.py; which names hold
a list, tuple or dict built here, and what its items are shared with, is
normalize/sequences.py.
`Normalized.heirs` maps each rebinding to the names that still share memory
with the object it unbinds (recorded by reference, that old value changes
with them), and `Normalized.passes` each call of a helper to what its
arguments may share memory with.
"""
from __future__ import annotations

import dataclasses
import types

import gast

from .. import astutil, fresh_results
from .alias_parts import Part, items_of, may_be_slot
from ..rules import registry
from ..ir import OPERATORS, RUNTIME
from . import masks, sequences, slot_items, views


# -- binding -------------------------------------------------------------
def bind(nz, stmt: gast.Assign) -> None:
    """Update the relations for an emitted `target = value`."""
    target, value = stmt.targets[0].id, _same_object(nz, stmt.value)
    if keeps_object(nz, stmt):
        if isinstance(value, gast.Name) and value.id == target:     # `z = z`
            nz.heirs[stmt] = frozenset(related(nz, target))
        if _updates_in_place(value, target):
            _index_changed(nz, target)     # `j += 1` rebinds an int
            slot_items.forget_updated(nz, value, nz.aliases.get(target, {target}) |
                                      maybe_one(nz, {target}) | {target})
            if astutil.dotted_name(value.func.value) == OPERATORS:
                nz.loose.add(target)  # ...and `r *= c` a float: still one object?
            sequences.note_items(nz, target, value, in_place=True)
        return                      # the object, and its relations, stay
    old = _holders_of_old(nz, target)         # (`v = v[1:]` views the old object)
    _keep_old(nz, target, stmt)
    _rebind(nz, target, stmt)
    sequences.note_items(nz, target, value, in_place=False)
    masks.note_mask(nz, target, stmt.value)
    nz.loose.discard(target)
    _bind_alias(nz, target, value)
    _bind_parts(nz, target, value, stmt.value, old)
    _bind_chosen(nz, target, value)
    if _views_its_old(nz, target, value):    # `z = z[:]`: the old object lives on
        nz.heirs[stmt] = nz.heirs.get(stmt, frozenset()) | frozenset(related(nz, target))


def _views_its_old(nz, target: str, value) -> bool:
    """Whether `target = value` binds `target` to what may view the object
    it held (`z = z[:]`, `z.reshape(2, 2)`, `np.asarray(z)`): that old
    value, recorded by reference, changes with an update of `target`
    after (its heir, as the `z` of `z = z` is)."""
    view = views.view_of(nz, value)
    return view.base == target if view is not None else \
        target in _viewed_arguments(nz, value)


def _bind_alias(nz, target: str, value) -> None:
    """Relate `target` to what it was bound to as one object: a copy of
    a name, or the item at a literal slot of a display (normalize/
    slot_items.py: not for a name updated by `op=`, which makes a number a
    new object, so the two would be only maybe one and their relations
    uncertain; their parts relate them).  One that holds a list or dict
    built here makes `target` hold it too."""
    slot_items.note_display(nz, target, value)
    if isinstance(value, gast.Name) and value.id != target and is_local(nz, value.id):
        group = nz.aliases.setdefault(value.id, {value.id})
        group.add(target)
        nz.aliases[target] = group
        _inherit_maybe(nz, target, value.id)
        if value.id in nz.loose:      # one with `value`, loosely with the rest
            nz.loose.add(target)
        for part in nz.parts.get(value.id):   # the same view of the same base
            nz.parts.add(target, dataclasses.replace(
                part, view=astutil.clone(part.view), reread=target in nz.locals))
    item = None if target in nz.augmented else slot_items.item_at(nz, value)
    if item is not None and item != target:     # `t = pair[0]` is that item
        group = nz.aliases.setdefault(item, {item})
        group.add(target)
        nz.aliases[target] = group
        _inherit_maybe(nz, target, item)
    held = sorted(nz.aliases.get(target, {target}) & nz.sequences - {target})
    if held:                        # the same list or dict: its stores are an item's
        nz.sequences.add(target)
        nz.joined[target] = set(nz.joined.get(held[0], ()))


def maybe_same(nz, a: str, b: str) -> None:
    """`a` and `b` may be one object (which only the run time knows)."""
    nz.maybe_aliases.setdefault(a, set()).add(b)
    nz.maybe_aliases.setdefault(b, set()).add(a)


def _inherit_maybe(nz, target: str, source: str) -> None:
    """`target` now holds `source`'s object, so it may be what `source`
    may be (`mu = v` made uncertain by an `if` that swaps them: a copy
    of either, taken in the `if`, may still be the other)."""
    for other in list(nz.maybe_aliases.get(source, ())):
        if other != target:
            maybe_same(nz, target, other)


def _bind_chosen(nz, target: str, value) -> None:
    """`y = max(a, b)`, `min(xs, key=f)`, `max(xs, default=d)`: `y` is
    one of the arguments (or the default), or an item of the one
    sequence, which is known only when the call runs."""
    callee = nz.src.resolve(value.func, nz.locals) \
        if isinstance(value, gast.Call) else None
    if callee is not max and callee is not min:     # (identity: a user's __eq__ may raise)
        return
    args = value.args + [k.value for k in value.keywords if k.arg == "default"]
    if len(value.args) == 1 and isinstance(value.args[0], (gast.List, gast.Tuple)):
        args = value.args[0].elts + args[1:]        # `max([a, b], key=f)`
    names = [a.id for a in args
             if isinstance(a, gast.Name) and a.id != target and is_local(nz, a.id)]
    if len(value.args) == 1 and names and names[0] == getattr(value.args[0], "id", None):
        nz.parts.add(target, Part(names.pop(0), "index", astutil.clone(value), certain=False))
    for name in names:
        maybe_same(nz, target, name)


def one_object(nz, name: str) -> dict:
    """{name: certain} for the names bound to `name`'s object: its
    aliases, and the names read from the slot of a list, tuple or dict
    built here that `name` was read from (`t = xs[1]` is the item `c` of
    `xs = [a, c]`), surely (True) or only maybe (False: a maybe-alias, or
    either relation uncertain)."""
    group = nz.aliases.get(name, {name})
    out = dict.fromkeys(group, True)
    slots: dict = {}        # base -> slot read -> [(name, part)]: each dumped once
    unique = {p.key: p for n in group for p in nz.parts.get(n)}    # (copies: once)
    for part in unique.values():
        if part.kind != "index" or not isinstance(part.view, gast.Subscript) or \
                part.base not in nz.sequences:
            continue
        if part.base not in slots:
            held_at = slots[part.base] = {}
            for other, held in views_of(nz, nz.aliases.get(part.base, {part.base})):
                if held.kind == "index" and isinstance(held.view, gast.Subscript):
                    held_at.setdefault(gast.dump(held.view.slice), []).append((other, held))
        for other, held in slots[part.base].get(gast.dump(part.view.slice), ()):
            out[other] = out.get(other, False) or part.certain and held.certain
    for other in maybe_one(nz, group):
        out.setdefault(other, False)
    return out


def _holders_of_old(nz, name: str) -> tuple:
    """(the other names bound to `name`'s object, the names it is a part
    of or may be), before `name` is rebound."""
    return (sorted(nz.aliases.get(name, {name}) - {name}),
            sorted({p.base for p in nz.parts.get(name)} |
                   maybe_one(nz, {name})))


def _bind_parts(nz, target: str, value, bound, old=((), ())) -> None:
    """Relate `target` to the memory it may share as a part (a view or a
    slot read from a local, masked if `bound` is `stop_gradient(value)`,
    or a helper's result), and a display's items to `target`.  A view of
    `target`'s own old object (`v = v[1:]`) is a view of `old`'s first
    other name for it, and an uncertain part of what the object was a
    part of or may be (`old`, from `_holders_of_old`)."""
    view = views.view_of(nz, value)
    if view is not None and view.base == target:
        others, bases = old
        if others and is_local(nz, others[0]):
            view.rebase(others[0])
        for base in [b for b in bases if b != target and is_local(nz, b)]:
            nz.parts.add(target, Part(base, "index", astutil.clone(value), certain=False))
    if view is not None and view.base != target and is_local(nz, view.base):
        # a temporary read by subscript is used once, before any update
        view.reread = target in nz.locals or not isinstance(value, gast.Subscript)
        view.masked = value is not bound
        nz.parts.add(target, view)
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        index = astutil.index_value(value.slice)
        container = nz.aliases.get(value.value.id, {value.value.id})
        for held, part in views_of(nz, container, items=True):     # `v = xs[i]` may be
            if held != target and may_be_slot(index, part.index):
                maybe_same(nz, target, held)
    for arg in [] if view is not None else _viewed_arguments(nz, value):
        # (a helper or NumPy function may return a view of its argument:
        # of `target`'s old object, which `old`'s names hold or view)
        for base in [arg] if arg != target else [*old[0], *old[1]]:
            if base != target and is_local(nz, base):
                nz.parts.add(target, Part(base, "index", astutil.clone(value), certain=False))
    for key, elt in items_of(value):
        if isinstance(elt, gast.Name) and elt.id != target and is_local(nz, elt.id):
            item = astutil.subscript(astutil.name(target), key)
            nz.parts.add(elt.id, Part(target, "index", item, item=True))


def keeps_object(nz, stmt: gast.Assign) -> bool:
    """Whether the emitted `stmt` binds its target to the object it held
    (whose relations stay): `x = x`, a view re-read after an update, an
    in-place update (`x = setitem(x, ...)`, `x = iadd(x, ...)`) or a
    write-back into a base (`b = sync_index(b, ..., x)`).  (`r *= c` of a
    float makes a new object, of no memory: `loose` tells them apart.)"""
    target, value = stmt.targets[0].id, _same_object(nz, stmt.value)
    return stmt in nz.rereads or isinstance(value, gast.Name) and value.id == target or \
        _updates_in_place(value, target)


def _same_object(nz, value):
    """`value`, or what it returns itself (the same object: updates
    through either reach both): the `e` of `stop_gradient(e)`, the
    default of `get_other(default, d, key)` (a dict's `get`)."""
    if masks.is_stop_gradient(nz, value) or isinstance(value, gast.Call) and \
            astutil.dotted_name(value.func) == f"{RUNTIME}.get_other":
        return value.args[0]
    return value


def _helper_arguments(nz, value) -> list:
    """The local names passed to a function of the user's (or a nested
    one, or a namedtuple class) called by `value`: its result may be one
    of them, or a view, or hold them."""
    if not isinstance(value, gast.Call):
        return []
    func = value.func
    callee = nz.src.resolve(func, nz.locals)
    nested = isinstance(func, gast.Name) and func.id in nz.nested
    if not nested and not _namedtuple(callee) and not (
            isinstance(callee, types.FunctionType) and registry.lookup(callee) is None
            and not registry.is_nondifferentiable(callee)):
        return []
    args = [*value.args, *(k.value for k in value.keywords)]
    return sorted({a.id for a in args if isinstance(a, gast.Name) and is_local(nz, a.id)})


def _namedtuple(callee) -> bool:
    """A namedtuple class: what it makes holds its arguments themselves
    (`p = Pair(1.0, b)`: `p.b` is `b`), as a helper's result may."""
    return isinstance(callee, type) and issubclass(callee, tuple) and hasattr(callee, "_fields")


def _viewed_arguments(nz, value) -> list:
    """The arguments of a helper called by `value` whose memory its
    result may share: none if every value it returns is new; the first
    arguments of a NumPy function or method that may return a view of them."""
    viewed = views.may_view(nz, value)
    if viewed:
        return sorted({v for v in viewed if is_local(nz, v)})
    args = _helper_arguments(nz, value)
    if args and fresh_results.returns_fresh(nz.src.resolve(value.func, nz.locals)):
        return []
    return args


def passed(nz, stmt) -> None:
    """For a call of a helper (which may update an argument in place):
    the names each local argument may share memory with."""
    args = _helper_arguments(nz, stmt.value)
    if args:
        nz.passes[stmt] = {a: frozenset(related(nz, a)) for a in args}


def related(nz, name: str, upward: bool = True) -> set:
    """`name`, its aliases and the views of them, transitively; `upward`:
    also maybe-aliases and the bases of parts - every name that may
    share memory with `name`."""
    out, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in out:
            continue
        out.add(n)
        todo.extend(nz.aliases.get(n, ()))
        todo.extend(view for view, _ in views_of(nz, {n}))
        if upward:
            todo.extend(nz.maybe_aliases.get(n, ()))
            todo.extend(p.base for p in nz.parts.get(n))
            todo.extend(nz.joined.get(n, ()))     # holds their items
    return out


def is_local(nz, name: str) -> bool:
    """A name the function binds, or a temporary (a name of s2s_ad's;
    not a lifted function's, which is bound at compile time)."""
    return name in nz.locals or name not in nz.src.user_names and \
        name not in nz.src.lifted


def _keep_old(nz, name: str, stmt) -> None:
    """Before `stmt` rebinds `name` while views of its object live on
    (`res = y.T; y = 0.5`) and no other name holds it: bind a temporary
    to it (`_y1 = y`, the heir of `_rebind`), so that an update through
    one view still reaches the others through their common base."""
    if nz.aliases.get(name, {name}) - {name} or maybe_one(nz, {name}) \
            or not views_of(nz, {name}) or name not in nz.locals:
        return              # (a name that may be another is left uncertain)
    nz.out.remove(stmt)
    nz.emit(astutil.assign(nz.namer.temp(name), astutil.name(name)))
    nz.out.append(stmt)


def _rebind(nz, name: str, stmt) -> None:
    """`name` now holds a new object (bound by `stmt`): its relations end.
    The names still sharing memory with the old object are its heirs: an
    update through them changes the old value that `stmt` may record."""
    maybe = nz.maybe_aliases.pop(name, set())
    for other in maybe:
        nz.maybe_aliases.get(other, set()).discard(name)
    group = nz.aliases.pop(name, None)
    if group is not None:
        group.discard(name)
    own = nz.parts.pop(name)
    heirs = maybe | set(group or ()) | {p.base for p in own} | \
        {view for view, _ in views_of(nz, {name})}
    if heirs:
        nz.heirs[stmt] = frozenset(heirs)
    heir = min(group) if group else None
    if heir is not None:        # what the object is a part of, it still is as `heir`
        nz.parts.extend(heir, own)
        nz.parts.rebase(name, heir)     # the old object lives on as `heir`
    for view, part in views_of(nz, {name}):
        part.certain = False
        # (the old object may live on as what `name` only may have been: its
        # views may be theirs, unless `name` is bound to one of those, as a
        # re-read after an update does; fuzz seed 503752, a view of `c` lost
        # when `c` was rebound, which `e` updated after)
        for other in sorted(o for o in maybe if heir is None and is_local(nz, o)
                            and getattr(stmt.value, "id", None) not in maybe):
            moved = dataclasses.replace(part, view=astutil.clone(part.view))
            moved.rebase(other)
            nz.parts.extend(view, [moved])
    _index_changed(nz, name)


def _index_changed(nz, name: str) -> None:
    """Views read with `name` (`B[:, name]`) are no longer known."""
    for part in nz.parts.reading(name):
        if part.base != name:
            part.certain = False


def view_base(nz, expr) -> gast.Name:
    """An atom for the base of `x.T[0] = v` or `x[1][2] = v`: a view of
    `x` the update writes through."""
    base = nz.atom(expr)
    view = views.view_of(nz, expr)
    if view is not None:
        nz.parts.add(base.id, view)
    return base


def views_of(nz, names: set, items: bool = False) -> list:
    """(view, part) of each part of a name in `names`, by view name;
    `items`: only the items a display or an update put there."""
    return nz.parts.views_of(names, items)


def _updates_in_place(value, target: str) -> bool:
    """`x = setitem(x, ...)` or `x = iadd(x, ...)`: the object stays."""
    return (isinstance(value, gast.Call) and value.args
            and isinstance(value.args[0], gast.Name) and value.args[0].id == target
            and isinstance(value.func, gast.Attribute)
            and astutil.dotted_name(value.func.value) in (RUNTIME, OPERATORS))


def maybe_one(nz, group: set) -> set:
    """The names that may be one object with `group`, through chains of
    maybe-aliases and aliases (`t = w` in a branch, then `s = t`)."""
    out, todo = set(), list(group)
    while todo:
        for other in nz.maybe_aliases.get(todo.pop(), ()):
            for n in nz.aliases.get(other, {other}):
                if n not in out and n not in group:
                    out.add(n)
                    todo.append(n)
    return out
