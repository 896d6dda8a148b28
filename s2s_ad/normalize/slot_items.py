"""Which name a literal slot of a tuple, list or dict display still holds:
part of the alias analysis (normalize/aliasing.py), over the normalizer's
state `nz`.

`nz.slot_items[h]` is (whether the display is a tuple, a map from each
literal slot of the display `h` was bound to - `h = [a, b]`: 0, 1, -2, -1;
`h = {"w": a}`: "w" - to the name the display put there).  A read of that
slot (`t = h[0]`, or through another name for the same object) is that
name's object: `aliasing` makes it an alias.  The entry holds only while
no slot can have changed, so it is forgotten when
- `h` or an item name is rebound (`_bind_alias`);
- anything that may be the object is updated in place (`x = setitem(x, ...)`,
  `append`, `+=`; not a write-back `rt.sync_*`, which stores the object the
  slot already holds): `forget_updated`;
- a loop's body may update a container or rebind `h` or an item (on entry:
  its next iteration reads what the body changed): `enter_loop`;
- the two branches of an `if` disagree (`branches`, compound.py).
"""
from __future__ import annotations

import gast

from .. import astutil, scopes, traversal
from ..ir import RUNTIME

_WRITE_BACKS = {f"{RUNTIME}.{name}" for name in ("sync_index", "sync_transposed",
                                                  "sync_reshaped")}


def note_display(nz, target: str, value) -> None:
    """`target` was rebound to `value`: forget what held it, and record the
    slots of a display."""
    for holder in [h for h, (_, slots) in nz.slot_items.items()
                   if h == target or target in slots.values()]:
        del nz.slot_items[holder]
    slots: dict = {}
    if isinstance(value, (gast.Tuple, gast.List)):
        if any(isinstance(elt, gast.Starred) for elt in value.elts):
            return                      # `[*xs, a]`: the slots are not known
        for i, elt in enumerate(value.elts):
            if isinstance(elt, gast.Name):
                slots[i] = slots[i - len(value.elts)] = elt.id
    elif isinstance(value, gast.Dict):
        for key, elt in zip(value.keys, value.values):
            if key is None:             # `{**d}`: the slots are not known
                return
            if isinstance(key, gast.Constant):
                slots.pop(key.value, None)      # (a later equal key holds the slot)
                if isinstance(elt, gast.Name):
                    slots[key.value] = elt.id
            else:
                return
    else:
        return
    nz.slot_items[target] = (isinstance(value, gast.Tuple), slots)


def item_at(nz, value) -> str | None:
    """For `h[c]`, the name a display bound to `h` (or to another name for
    its object) put at the literal slot `c`, while it still holds it."""
    if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
            and isinstance(value.slice, gast.Constant)):
        return None
    for holder in sorted(nz.aliases.get(value.value.id, {value.value.id})):
        _, slots = nz.slot_items.get(holder, (None, None))
        if slots is not None:
            try:
                return slots.get(value.slice.value)
            except TypeError:           # (an unhashable literal)
                return None
    return None


def forget_updated(nz, value, names: set) -> None:
    """`value` updated in place an object `names` may hold (not a
    write-back of an object into the slot that holds it)."""
    if isinstance(value, gast.Call) and astutil.dotted_name(value.func) in _WRITE_BACKS:
        return
    for name in names:
        nz.slot_items.pop(name, None)


def enter_loop(nz, loop) -> None:
    """On entry to `loop`: forget the displays whose slots its body may
    change - every list's and dict's if it updates any container (a store
    into a slot, an `op=`, a method call on a local, a `del`), and any whose
    holder or item it rebinds."""
    rebound = {n for s in scopes.statements(loop.body) for n in scopes.stored_names(s)}
    if isinstance(loop, gast.For):
        rebound |= {n.id for n in traversal.walk(loop.target) if isinstance(n, gast.Name)}
    updates = any(_updates(nz, node) for node in traversal.walk(loop))
    for holder, (is_tuple, slots) in list(nz.slot_items.items()):
        if holder in rebound or rebound & set(slots.values()) or updates and not is_tuple:
            del nz.slot_items[holder]


def _updates(nz, node) -> bool:
    return isinstance(node, (gast.AugAssign, gast.Delete)) or \
        isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) or \
        isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        isinstance(node.func.value, gast.Name) and node.func.value.id in nz.locals


def join(nz, other: dict) -> None:
    """After an `if`: the entries both paths agree on."""
    nz.slot_items = {h: s for h, s in nz.slot_items.items() if other.get(h) == s}
