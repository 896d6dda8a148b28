"""Which names hold a list, tuple or dict the function built, and what
their items are shared with: part of the alias analysis
(normalize/aliasing.py), over the normalizer's state `nz`.

`sequences` holds the names that may be such a container: in it an item
read (`xs[i]`) is the stored object itself, where an array's is a copy or
a view.  `joined[z]` holds the names whose items `z` may hold too (a join,
a repetition or a shallow copy), so an in-place update of an item checks
them at run time (writebacks.py).  `joined` is closed: one step reaches
every source.  An object stored into a slot of such a container is that
item under every name bound to it (`note_stored`).
"""
from __future__ import annotations

import gast

from .. import astutil, fresh, traversal
from ..ir import OPERATORS, RUNTIME
from . import aliasing
from .alias_parts import Part, distinct_slots

_COPIES = (list, tuple, sorted, dict)      # a new container holding the same items
_NUMBERS = (len, bool, int, float, str, repr, isinstance, id, hash, any, all, abs, round)


def note_items(nz, target: str, value, in_place: bool) -> None:
    """Track the names that may hold a list, tuple or dict the function
    built (`sequences`); `z = a + b`, `a * n` (or `+=`, `*=`) on one joins or
    repeats it: `z`'s items are its operands' (a repeated one's, each
    other's), which no relation follows; a shallow copy (`list(a)`,
    `tuple((x, y))`, `sorted(a)`, `dict(d)`) holds the items of what it
    copies, or the rows of an array.  `joined` keeps what the items are
    shared with, for the check an in-place update of an item makes
    (inplace.py, writebacks.py), and what those share them with: the
    check reads lists, not what a list was copied from through an
    iterator (`list(reversed(xs))`).  (A name bound to one, `q = xs` or
    an item of a tuple display, is one too: `aliasing._bind_alias`.)"""
    operands = _join_operands(value)
    copied = _copied(nz, value)
    built = isinstance(value, (gast.List, gast.Tuple, gast.Dict)) or copied is not None
    if copied:
        nz.sequences.add(target)
        nz.joined[target] = _with_sources(nz, copied) - {target}
    elif operands and any(o in nz.sequences for o in operands):
        nz.sequences.add(target)
        kept = nz.joined.get(target, set()) if in_place else set()
        nz.joined[target] = kept | _with_sources(
            nz, {o for o in operands if o != target and aliasing.is_local(nz, o)}) - {target}
    elif built:
        nz.sequences.add(target)
        nz.joined.pop(target, None)
    elif not in_place:
        nz.sequences.discard(target)
        nz.joined.pop(target, None)


def surely_built(nz) -> set[str]:
    """The names the user's function binds once, by `name = ` a list or
    dict display, comprehension, `list(...)` or `dict(...)`: whenever code
    runs that reads one, it holds that list or dict (an in-place update
    keeps the object).  A store into one (`params[k] = v`) replaces a
    slot and writes no array: the objects in its slots keep their values
    (inplace.setitem)."""
    out = set()
    for node in traversal.walk(nz.src.tree):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name) and \
                nz.store_counts[node.targets[0].id] == 1 and _makes_container(nz, node.value):
            out.add(node.targets[0].id)
    return out - nz.params


def _makes_container(nz, value) -> bool:
    if isinstance(value, (gast.List, gast.Dict, gast.ListComp, gast.DictComp)):
        return True
    if not isinstance(value, gast.Call):
        return False
    callee = nz.src.resolve(value.func, nz.locals)
    return callee is list or callee is dict


def _with_sources(nz, names: set) -> set:
    """`names` and what their items are shared with (`joined` is closed:
    one step reaches all)."""
    return set(names).union(*(nz.joined.get(n, ()) for n in names))


def joined_from(nz, name: str) -> list:
    """The lists made from `name`'s items by `+`, `*` or a shallow copy
    (`joined` read the other way)."""
    return sorted(c for c, sources in nz.joined.items() if name in sources)


def _copied(nz, value) -> set | None:
    """For `list(a)`, `tuple(a)`, `sorted(a)`, `dict(a)` (or of a display
    `(x, y)`): the local names whose items (or rows) it holds; for any
    other call given a list or tuple built here (`xs.copy()`,
    `copy.copy(xs)`, `reversed(xs)`, a helper's result), those it may
    hold the items of (unknown means shared; NumPy's calls copy the
    items into an array, and `len(xs)` and the like make a number); None
    for any other value."""
    if not isinstance(value, gast.Call):
        return None
    callee = nz.src.resolve(value.func, nz.locals)
    if not any(callee is f for f in _COPIES):
        if fresh.is_numpy(callee) or any(callee is f for f in _NUMBERS) or \
                (astutil.dotted_name(value.func) or "").partition(".")[0] in (RUNTIME, OPERATORS):
            return None         # (s2s_ad's own calls: their relations are followed)
        receiver = [value.func.value] if isinstance(value.func, gast.Attribute) else []
        held = {a.id for a in receiver + value.args + [k.value for k in value.keywords]
                if isinstance(a, gast.Name) and a.id in nz.sequences}
        return held or None
    if len(value.args) != 1:
        return set()
    names, todo = [], [value.args[0]]
    while todo:             # (the items of displays in it: `dict(((k, v),))`)
        arg = todo.pop()
        if isinstance(arg, (gast.List, gast.Tuple)):
            todo.extend(arg.elts)
        else:
            names.append(arg)
    return {n.id for n in names if isinstance(n, gast.Name) and aliasing.is_local(nz, n.id)}



def _join_operands(value) -> list:
    """The names `a + b`, `a * b`, `a += b` or `a *= b` reads (empty for
    anything else)."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)):
        args = [value.left, value.right]
    elif isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            astutil.dotted_name(value.func.value) == OPERATORS and \
            value.func.attr in ("iadd", "imul"):
        args = value.args
    else:
        return []
    return [a.id for a in args if isinstance(a, gast.Name)]


def slot_replaced(nz, base: str, index) -> None:
    """After `base[index] = v` into what may be a list or dict (`index`
    None: any slot, `xs.pop()`, `xs.insert(0, v)`): the names read from
    or put into a slot the store may have replaced (`old = xs[0]`, the
    item `a` of `xs = [a, b]`) were one object through that slot, and
    stay maybe one object with no slot between them (`unlinked`): the
    store replaced the object in the slot, not its values, so an update
    of `old` changes `a`, while a write-back into `xs` reaches neither
    (`rt.slots` finds the object in no slot) - the write-backs of such
    a pair are checked at run time (writebacks._check_maybe_ones)."""
    group = nz.aliases.get(base, {base})
    if not group & nz.sequences:
        return
    held = [(name, _slot_of(part)) for name, part in aliasing.views_of(nz, group)
            if part.kind == "index" and not distinct_slots(_slot_of(part), index)]
    for i, (a, at) in enumerate(held):
        for b, bt in held[i + 1:]:
            if a != b and not distinct_slots(at, bt):
                aliasing.maybe_same(nz, a, b)
                nz.unlinked.add(frozenset((a, b)))


def _slot_of(part: Part):
    """The index an item was read with; None where it is not known: one
    chosen when the program runs (`max(xs, key=f)`), or an uncertain
    relation (items moved by a `pop`: which index is which?)."""
    return part.index if part.certain and isinstance(part.view, gast.Subscript) else None


def note_stored(nz, base: str, index, value, certain: bool = True) -> None:
    """After `base[index] = value` into a list or dict built here: the
    object itself is the item now, as in a display (an array copies the
    values), for every name bound to it (`aliasing.one_object`: `t = xs[1];
    xs[0] = t` stores the item `c` of `xs = [a, c]` too).  A name that
    only may be it gets an uncertain relation, which an update through
    the slot checks at run time (writebacks.py); so is every name where
    the slot is not `certain`."""
    if not (isinstance(value, gast.Name) and value.id != base and base in nz.sequences
            and aliasing.is_local(nz, value.id)):
        return
    for name, same in sorted(aliasing.one_object(nz, value.id).items()):
        if name != base and aliasing.is_local(nz, name):
            nz.parts.add(name, Part(base, "index", astutil.subscript(
                astutil.name(base), astutil.clone(index)), item=True, certain=same and certain))
