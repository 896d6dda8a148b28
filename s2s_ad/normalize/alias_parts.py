"""The relation the alias analysis (normalize/aliasing.py) keeps between a
name and what it is a part of, and the questions asked of two slots.

A `Part` says that a name was bound to a view or an item of `base`: how a
write through it reaches the base (`kind`), the expression that reads it
from the base (`view`), and whether that is known for sure (`certain`).
"""
from __future__ import annotations

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


def extend_by_key(known: list, parts) -> None:
    """Append to `known` each of `parts` saying what none in it says
    already (`Part.key`), in one pass.  A copy of a part is another object
    that says the same: telling parts apart by identity let a long chain
    of `if`s add the same relations again and again, and let a name that
    inherits the parts of another it was copied from (`_rebind`'s heir)
    double its list with each copy (2^16 parts in a derived pair)."""
    keys = {p.key for p in known}
    for p in parts:
        if p.key not in keys:
            keys.add(p.key)
            known.append(p)


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
