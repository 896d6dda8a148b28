"""The relation the alias analysis (normalize/aliasing.py) keeps between a
name and what it is a part of, and the questions asked of two slots.

A `Part` says that a name was bound to a view or an item of `base`: how a
write through it reaches the base (`kind`), the expression that reads it
from the base (`view`), and whether that is known for sure (`certain`).
The normalizer keeps every name's parts in one `PartTable`, indexed by
base and by the names a view reads (its invariants are the class's).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import gast

from .. import astutil, traversal


@dataclass
class Part:
    """A name bound to `view`, a view or an item of `base`."""
    base: str
    kind: str                   # "index", "T" or "reshape": how a write reaches base
    view: gast.expr             # the expression that reads it from `base`
    certain: bool = True
    reread: bool = True         # re-read it when `base` changes (not a temporary)
    item: bool = False          # an item a display or `append` put there
    masked: bool = False        # bound by `stop_gradient(view)`: no gradient to `base`
    _reads: frozenset = field(default=None, init=False, compare=False, repr=False)
    _dump: str = field(default=None, init=False, compare=False, repr=False)

    @property
    def index(self):
        return astutil.index_value(self.view.slice) if self.kind == "index" else None

    @property
    def key(self) -> tuple:
        """What the part says, for telling two copies of it apart from two
        parts (its `view` is a node: copies are other objects)."""
        if self._dump is None:
            self._dump = gast.dump(self.view)
        return (self.base, self.kind, self._dump, self.certain, self.reread,
                self.item, self.masked)

    def reads(self) -> frozenset:
        """The names `view` reads (its base, and what it is indexed with)."""
        if self._reads is None:
            self._reads = frozenset(n.id for n in traversal.names(self.view)
                                    if type(n.ctx) is gast.Load)
        return self._reads

    def rebase(self, base: str) -> None:
        for node in traversal.walk(self.view):
            if isinstance(node, gast.Name) and node.id == self.base:
                node.id = base
        self.base = base
        self._reads = self._dump = None


class PartTable:
    """Each name's parts (what it is a view or an item of), indexed by base
    and by the names their views read: "the views of `x`" and "the views
    indexed with `i`" cost what they find, not a scan of every relation
    (n views of one array cost n^2 when every rebinding scanned them).

    Invariants: `_by_base[b]` counts, per name, the parts it holds whose base
    is `b` (`_items_of[b]`: those that are items), and `_by_read[r]` those
    whose view reads `r`; every change goes
    through the methods (`get` gives a tuple), and a part held here is
    rebased only by `rebase`.  A part object may be held by several names
    (a loop's carried names share theirs)."""

    def __init__(self):
        self._of: dict = {}         # name -> [Part], in the order related
        self._by_base: dict = {}    # base -> {name: how many of its parts}
        self._items_of: dict = {}   # base -> {name: how many of its parts are items}
        self._by_read: dict = {}    # a name a view reads -> {name: how many}

    def get(self, name: str, default=()) -> tuple:
        parts = self._of.get(name)
        return tuple(parts) if parts else default

    def items(self) -> list:
        return [(name, tuple(parts)) for name, parts in self._of.items()]

    def values(self) -> list:
        return [tuple(parts) for parts in self._of.values()]

    def is_base(self, name: str) -> bool:
        """Whether something is a view or an item of `name`."""
        return name in self._by_base

    def add(self, name: str, part: Part) -> None:
        self._of.setdefault(name, []).append(part)
        self._index(name, part, 1)

    def extend(self, name: str, parts) -> None:
        """Add to `name`'s each of `parts` saying what none of its own says
        already (`Part.key`).  A copy of a part is another object that
        says the same: telling parts apart by identity let a long chain of
        `if`s add the same relations again and again, and let a name that
        inherits the parts of another it was copied from (`_rebind`'s heir)
        double its list with each copy (2^16 parts in a derived pair)."""
        known = self._of.get(name, [])
        keys = {p.key for p in known}
        for part in parts:
            if part.key not in keys:
                keys.add(part.key)
                self.add(name, part)

    def pop(self, name: str) -> list:
        parts = self._of.pop(name, [])
        for part in parts:
            self._index(name, part, -1)
        return parts

    def views_of(self, names, items: bool = False) -> list:
        """(view, part) of each part of a name in `names`, by view name (a
        view's parts in their order); `items`: only the items."""
        index = self._items_of if items else self._by_base
        holders = sorted({view for base in names for view in index.get(base, ())})
        return [(view, part) for view in holders for part in self._of[view]
                if part.base in names and (part.item or not items)]

    def reading(self, name: str) -> list:
        """The parts whose view reads `name`."""
        return [part for view in self._by_read.get(name, ()) for part in self._of[view]
                if name in part.reads()]

    def rebase(self, base: str, new: str) -> None:
        """The parts of `base` are parts of `new` (its object lives on as it)."""
        held = self.views_of({base})
        for view, part in held:
            self._index(view, part, -1)
        for part in {id(part): part for _, part in held}.values():
            part.rebase(new)
        for view, part in held:
            self._index(view, part, 1)

    def copy(self) -> "PartTable":
        """Another table of copies of the parts (a branch's relations)."""
        out = PartTable()
        for name, parts in self._of.items():
            for part in parts:
                out.add(name, dataclasses.replace(part, view=astutil.clone(part.view)))
        return out

    def _index(self, name: str, part: Part, step: int) -> None:
        for table, key in [(self._by_base, part.base),
                           *[(self._items_of, part.base)] * part.item,
                           *((self._by_read, read) for read in part.reads())]:
            counts = table.setdefault(key, {})
            count = counts.get(name, 0) + step
            if count:
                counts[name] = count
            else:
                del counts[name]
                if not counts:
                    del table[key]


def items_of(value) -> list:
    """(key, item) of a tuple, list or dict display (dict keys: literals)."""
    if isinstance(value, (gast.Tuple, gast.List)):
        return [(astutil.const(i), e) for i, e in enumerate(value.elts)]
    if isinstance(value, gast.Dict):
        return [(astutil.clone(k), v) for k, v in zip(value.keys, value.values)
                if isinstance(k, gast.Constant)]
    return []


def distinct_slots(a, b) -> bool:
    """Whether the indices `a` and `b` surely name two slots: two different
    literals of one type, not an index from the end and one from the start
    (`-1` may be `0`: a list's length changes)."""
    if not (isinstance(a, gast.Constant) and isinstance(b, gast.Constant)) or \
            type(a.value) is not type(b.value):
        return False
    x, y = a.value, b.value
    return x != y and not (type(x) is int and (x < 0) != (y < 0))


def may_be_slot(read, held) -> bool:
    """Whether the index `read` may name the slot of the item at `held`
    other than as the same literal (which the part relation follows)."""
    same = isinstance(read, gast.Constant) and isinstance(held, gast.Constant) and \
        type(read.value) is type(held.value) and read.value == held.value
    return not same and not distinct_slots(read, held)
