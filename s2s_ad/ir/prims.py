"""What one ANF assignment computes: `Prim` and its kinds, the in-place
primitives, and the small predicates stages share about them."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import gast

from .. import runtime, scopes
from ..errors import S2SADError
from .program import RUNTIME


# -- primitives ----------------------------------------------------------------
COPY, CONST, RULE, UNKNOWN, CALL = "copy", "const", "rule", "unknown", "call"
# a call of a function value (a parameter, a callable object, ...): its
# binding is keyed by argument position and keyword, its pair found at run
# time (dispatch.py)
DYNAMIC = "dynamic"
# methods of lists, dicts, sets and arrays that update their receiver
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "fill",
    "update", "setdefault", "popitem", "add", "discard", "difference_update",
    "intersection_update", "symmetric_difference_update", "put", "resize", "itemset",
    "partition", "setfield", "byteswap", "__setitem__", "__delitem__", "__iadd__",
    "__isub__", "__imul__", "__imatmul__", "__itruediv__", "__ifloordiv__", "__imod__",
    "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"})
# the operator module's functions that update their first argument in place
INPLACE_OPERATORS = frozenset({
    "setitem", "delitem", "iadd", "isub", "imul", "imatmul", "itruediv", "ifloordiv",
    "imod", "ipow", "iand", "ior", "ixor", "ilshift", "irshift", "iconcat"})


def member(obj, table) -> bool:
    """`obj in table` for a set or dict keyed by objects, False for an
    unhashable `obj` (a user's object that defines `__eq__` only) or one
    whose comparison raises."""
    try:
        return obj in table
    except Exception:       # (a user's __eq__ or __hash__ may raise anything)
        return False


def with_marker(stmt, runtime_names=(RUNTIME,)):
    """("enter" or "exit", the manager expression, the `as` name or None)
    for a statement marking a `with` block (runtime/context.py), else None;
    `runtime_names` are the names the code reads the runtime under."""
    value = stmt.value if isinstance(stmt, (gast.Expr, gast.Assign)) else None
    func = getattr(value, "func", None)
    if not (isinstance(value, gast.Call) and isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name) and func.value.id in runtime_names
            and func.attr in ("enter", "exit") and len(value.args) == 1):
        return None
    target = stmt.targets[0].id if isinstance(stmt, gast.Assign) else None
    return func.attr, value.args[0], target


@dataclass(frozen=True)
class Star:
    """The key, in a DYNAMIC call's binding and variant, of its `*args`
    argument (the last positional one, at `index`): its items are the
    callee's arguments from there on, counted when the call runs."""
    index: int


@dataclass(frozen=True)
class StarStar:
    """The key, in a DYNAMIC call's binding and variant, of its `**kwargs`
    argument; `written`: the keywords the call names itself (the others
    the callee gets come from the dict, counted when the call runs)."""
    written: tuple


@dataclass(frozen=True)
class Callee:
    """The key, in a DYNAMIC call's binding and variant, of the function
    value called: its gradient is that of the values a nested function
    made here captured (`rt.bind`), a `Tree` by name (dispatch.py)."""


CALLEE = Callee()


# Python's operators that join or repeat lists and tuples -> the runtime
# function whose rule differentiates them so (rules/operators.py): a `+` or
# `*` with an operand that may be a sequence gets that rule (primitives.py)
SEQUENCE_OPERATORS = {operator.add: runtime.join, operator.iadd: runtime.join,
                      operator.mul: runtime.repeat_items, operator.imul: runtime.repeat_items}

# primitives that update their first operand in place (and return it), with
# the augmented-assignment operator that prints them (None: printed otherwise)
INPLACE = {runtime.setitem: None, runtime.append: None, runtime.pop: None,
           runtime.sync_index: None, runtime.mutated: None,     # (an opaque update: np.put)
           runtime.sync_transposed: None, runtime.sync_reshaped: None,
           **{update: None for update in runtime.SCATTERS.values()},
           operator.iadd: gast.Add, operator.isub: gast.Sub, operator.imul: gast.Mult,
           operator.itruediv: gast.Div, operator.ipow: gast.Pow, operator.imod: gast.Mod,
           operator.imatmul: gast.MatMult, operator.ifloordiv: gast.FloorDiv}


@dataclass
class Prim:
    kind: str                            # COPY, CONST, RULE, CALL, DYNAMIC or UNKNOWN
    key: object = None                   # registry key of the primitive
    rule: object = None                  # the registry's Rule (rules/registry.py)
    binding: dict = field(default_factory=dict)
    operands: tuple = ()                 # names that may carry a gradient
    problem: S2SADError | None = None    # raised only if the statement is active
    shape_hint: str | None = None        # "scalar" if known to be a scalar
    mutates: frozenset = frozenset()     # CALL: parameters the callee updates in place
    augments: frozenset = frozenset()    # CALL: parameters it updates with `p += v` only
    writes: frozenset = frozenset()      # CONST: locals a helper called inside may update
    pure: bool = False                   # DYNAMIC: a known callee updating no argument

    @property
    def inplace(self) -> bool:
        """Whether the primitive updates its first operand in place."""
        try:
            return self.key in INPLACE
        except TypeError:
            return False

    @property
    def keeps_values(self) -> bool:
        """The write-back of an update through a view (done already): it
        destroys no value at run time, so nothing is recorded."""
        return self.key in (runtime.sync_index, runtime.sync_transposed,
                            runtime.sync_reshaped)

    @property
    def is_sync(self) -> bool:
        """The write-back of an update through a view: prints nothing."""
        return self.key in (runtime.sync_index, runtime.sync_transposed,
                            runtime.sync_reshaped)

    @property
    def updated_names(self) -> frozenset:
        """The locals the call may update in place (besides an in-place
        primitive's own target): the arguments of a helper's parameters it
        updates, and those passed to one inside a verbatim expression."""
        return self.writes | frozenset(n for p in self.mutates | self.augments
                                       for n in names_of(self.binding.get(p)))

    def variant(self, varied) -> tuple:
        """For a CALL: the callee's parameters bound to varied names (for a
        DYNAMIC call: argument positions and keywords)."""
        return tuple(p for p, node in self.binding.items()
                     if any(n in varied for n in names_of(node)))

    def reads(self, varied) -> tuple[frozenset, bool]:
        """(primal names whose values the adjoint reads, whether it reads the
        result), counting only the contributions to `varied` operands.  A
        CALL's adjoint reads what its forward function saved, which may be
        any argument or the result it returned, by reference (so each must
        hold its value then: `r = g(x); r += 1` must not change what g's
        adjoint reads)."""
        if self.kind in (CALL, DYNAMIC):    # its forward may save any argument
            return frozenset(n for node in self.binding.values()
                             for n in scopes.load_names(node)), True
        if self.rule is None or self.rule.template is None:
            return frozenset(), False       # (no adjoint: refused where active)
        tpl = self.rule.template
        written = {p for p in tpl.writes if p in self.binding
                   and any(n in varied for n in names_of(self.binding[p]))}
        params = tpl.reads_for(written)
        names = set()
        for param in params:
            node = self.binding.get(param)
            if node is not None:
                names.update(scopes.load_names(node))
        return frozenset(names), tpl.result in params


def names_of(node) -> list[str]:
    if isinstance(node, gast.Name):
        return [node.id]
    if isinstance(node, (gast.Tuple, gast.List)):
        return [n for e in node.elts for n in names_of(e)]
    return []
