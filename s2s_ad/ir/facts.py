"""The analyses' results: `Facts` (activity, recording) and its `ShapeFacts`."""
from __future__ import annotations

from dataclasses import dataclass, field


# -- analysis ------------------------------------------------------------------
@dataclass
class ShapeFacts:
    """What shapes.py finds: shape classes, and where adjoints may stay
    compact (smaller than their value, standing for its broadcast)."""

    same_shape: dict = field(default_factory=dict)         # stmt -> frozenset of names
    shape_out: dict = field(default_factory=dict)          # name -> class at the return
    scalars: set = field(default_factory=set)              # names only ever bound to scalars
    classes: dict = field(default_factory=dict)            # stmt -> {name: class}
    stable: frozenset = frozenset()                        # wrt parameters never reassigned
    spread: bool = False                                   # compact adjoints allowed
    expand: set = field(default_factory=set)               # stmt: spread d[target] first
    needs_full: dict = field(default_factory=dict)         # stmt -> operands: see compact
    in_loops: frozenset = frozenset()                      # names a loop assigns: never compact

    def witness(self, stmt, name: str) -> str:
        """A name with `name`'s shape at `stmt` whose value never changes:
        a wrt parameter of the same shape class, else `name` itself."""
        if name in self.stable:
            return name
        cls = self.classes.get(stmt, {}).get(name)
        return cls if cls in self.stable else name


@dataclass
class Facts:
    """The analyses' side tables for one function: activity and recording
    (analysis.py), and `shapes` (shapes.py)."""

    active: set = field(default_factory=set)               # stmt
    varied_before: dict = field(default_factory=dict)      # stmt -> varied names it reads
    recorded: set = field(default_factory=set)             # stmt
    shape_recorded: set = field(default_factory=set)       # stmt: its shape is enough
    varied_out: frozenset = frozenset()                    # varied at the return
    carriers: frozenset = frozenset()                      # names that may have an adjoint
    kills: set = field(default_factory=set)                # stmt: inactive, kills an adjoint
    # a call of a helper that updates an argument in place -> the names it
    # may update whose values the reverse sweep reads from before the call
    clobbered: dict = field(default_factory=dict)
    shapes: ShapeFacts = field(default_factory=ShapeFacts)
