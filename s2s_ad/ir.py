"""The intermediate representation: what passes between the stages.

The stages (frontend -> normalize -> primitives and analysis -> reverse ->
optimize -> codegen; docs/architecture.md) take and return these types and
depend on this module and `astutil`, never on each other for a type, so a
stage can be read, printed (`s2s-ad dump --stage`) and replaced alone:

- the reserved names through which normalized and generated code reach
  s2s_ad's own modules (`RUNTIME`, `OPERATORS`, `NUMPY`, and `BUILTINS`
  from naming.py), which no user code can mention;
- `Source`: a function's parsed source and the scope its names resolve in;
- `is_opaque`: the expressions nothing in which is differentiated, which
  normalization keeps verbatim and the primitives take for constants;
- `Normalized`: the A-normal-form function and its alias tables;
- `Prim`: what one ANF assignment computes (its kind, `COPY` ... `CALL`);
- `Facts` and its `ShapeFacts`: the analyses' results;
- `Request`, `PairRef`, `Adjoint`: what the reverse transform is asked
  for and returns;
- `Block` and `Split` (gast statements, built in astutil): the structure
  of generated code.

Invariant: side tables are dicts keyed by the gast node itself (nodes hash
by identity); nothing is ever stored on a node.
"""
from __future__ import annotations

import builtins
import functools
import operator
import types
from dataclasses import dataclass, field
from typing import Callable

import gast
import numpy

from . import astutil, runtime, scopes
from .astutil import Block, Split
from .errors import Location, S2SADError
from .naming import BUILTINS, Namer
from .rules import registry, stop_gradient_like

__all__ = ["BUILTINS", "Block", "NUMPY", "OPERATORS", "RUNTIME", "Split", "Source",
           "Normalized", "Prim", "Facts", "ShapeFacts", "Request", "PairRef", "Adjoint", "Site",
           "COPY", "CONST", "RULE", "UNKNOWN", "CALL", "DYNAMIC", "INPLACE",
           "CLOSURE", "GLOBAL", "IMPORTED", "SEQUENCE_OPERATORS", "is_resolved",
           "names_of", "with_marker", "Star", "StarStar", "member"]


# -- reserved names and the scope of a function ---------------------------
_UNRESOLVED = object()

# where `Source.resolve` found a name's head (see `Source.resolved`)
CLOSURE, GLOBAL, IMPORTED = "closure", "global", "imported"

# Names that normalized code uses to call s2s_ad's own primitives and the
# builtins (they never appear in generated source: the reverse transform
# prints them as imports, see reverse_plan.py).
RUNTIME, OPERATORS, NUMPY = "__s2s_ad_rt__", "__s2s_ad_op__", "__s2s_ad_np__"
_RESERVED = {RUNTIME: runtime, OPERATORS: operator, NUMPY: numpy, BUILTINS: builtins}


@dataclass
class Source:
    """A function's parsed source and the scope its names resolve in."""

    func: types.FunctionType
    tree: gast.FunctionDef
    filename: str
    lines: list[str]          # the function's own source lines
    first_line: int           # line number of lines[0] in the file
    indent: int               # columns removed by dedent
    globals: dict
    closure: dict = field(default_factory=dict)
    cells: dict = field(default_factory=dict)     # closure variable -> its cell
    # names normalization bound at compile time: lifted nested functions
    # (see normalize/lift.py) and names imported inside the function
    lifted: dict = field(default_factory=dict)
    # alias -> (module name, attribute or None) for names imported inside
    imported: dict = field(default_factory=dict)
    # (where, head, dotted path) -> the callable it denoted at compile time;
    # where is CLOSURE, GLOBAL (globals, then builtins) or IMPORTED
    resolved: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def qualname(self) -> str:
        return f"{self.func.__module__}.{self.func.__qualname__}"

    def locate(self, node: gast.AST | None) -> Location:
        lineno = getattr(node, "lineno", None) or 1
        col = getattr(node, "col_offset", 0) or 0
        text = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        return Location(self.filename, lineno + self.first_line - 1,
                        col + self.indent, text)

    @functools.cached_property
    def user_names(self) -> frozenset:
        """Every name the user's function text mentions."""
        return frozenset(scopes.all_names(self.tree))

    def bind_import(self, alias: str, obj, module: str, attr: str | None = None) -> None:
        """`alias` is bound to `obj` by an import inside the function:
        `import module` or `from module import attr`."""
        self.lifted[alias] = obj
        self.imported[alias] = (module, attr)

    def resolve(self, node: gast.expr, local_names: set[str]):
        """The object a (dotted) name denotes at compile time, or `_UNRESOLVED`.

        A name that the function assigns or takes as a parameter is local,
        hence unknown at compile time.  A callable result is recorded in
        `resolved`.
        """
        path = astutil.dotted_name(node)
        if path is None:
            return _UNRESOLVED
        head, *rest = path.split(".")
        where = None
        if head in _RESERVED:
            obj = _RESERVED[head]
        elif head in self.lifted:
            obj, where = self.lifted[head], IMPORTED if head in self.imported else None
        elif head in local_names:
            return _UNRESOLVED
        elif head in self.closure:
            obj, where = self.closure[head], CLOSURE
        elif head in self.globals:
            obj, where = self.globals[head], GLOBAL
        elif hasattr(builtins, head):   # fixed, like the standard library
            obj = getattr(builtins, head)
        else:
            return _UNRESOLVED
        for attr in rest:
            try:
                obj = getattr(obj, attr)
            except Exception:           # a property may raise anything
                return _UNRESOLVED
        if where is not None and callable(obj) and head in self.user_names:
            self.resolved.setdefault((where, head, path), obj)
        return obj


# expressions kept verbatim: nothing in them is differentiated
OPAQUE = (gast.Compare, gast.BoolOp, gast.JoinedStr)


def is_opaque(expr, src: Source, locals_: set[str]) -> bool:
    """Whether `expr` is kept verbatim because nothing in it is differentiated."""
    if isinstance(expr, OPAQUE):
        return True
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.Not):
        return True
    if isinstance(expr, gast.Call):
        func = expr.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Constant):
            callee = getattr(func.value.value, func.attr, _UNRESOLVED)   # `'{}'.format`
        else:
            callee = src.resolve(func, locals_)
        if is_resolved(callee):
            return stop_gradient_like(callee) or registry.is_nondifferentiable(callee)
        return isinstance(expr.func, gast.Attribute) and \
            registry.is_nondifferentiable(registry.Method(expr.func.attr))
    if isinstance(expr, gast.Attribute):
        return registry.is_nondifferentiable(registry.Attr(expr.attr))
    return False


def is_resolved(obj) -> bool:
    return obj is not _UNRESOLVED


# -- the normalized function --------------------------------------------------
@dataclass
class Normalized:
    """The ANF function and where each of its statements came from."""

    tree: gast.FunctionDef
    origin: dict            # ANF statement -> user statement
    locals: set[str]        # every name the function binds
    namer: Namer
    shares: dict            # in-place statement -> names whose memory it may write
    heirs: dict             # rebinding -> names sharing memory with the old value
    passes: dict            # call of a helper -> {argument: names it may share memory with}
    unbound: set            # names read where they may not be bound yet: None at entry
    while_tests: dict = field(default_factory=dict)   # While -> stmts recomputing its test


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
    "partition", "setfield", "byteswap"})

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


# Python's operators that join or repeat lists and tuples -> the runtime
# function whose rule differentiates them so (rules/operators.py): a `+` or
# `*` with an operand that may be a sequence gets that rule (primitives.py)
SEQUENCE_OPERATORS = {operator.add: runtime.join, operator.iadd: runtime.join,
                      operator.mul: runtime.repeat_items, operator.imul: runtime.repeat_items}

# primitives that update their first operand in place (and return it), with
# the augmented-assignment operator that prints them (None: printed otherwise)
INPLACE = {runtime.setitem: None, runtime.append: None, runtime.pop: None,
           runtime.sync_index: None,
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
        if self.rule is None:
            return frozenset(), False
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
    shapes: ShapeFacts = field(default_factory=ShapeFacts)


# -- the reverse transform -------------------------------------------------------
@dataclass
class Request:
    """What to generate: which parameters, which output, what to return."""

    wrt: list[str]
    mode: str = "grad"          # "grad", "value_and_grad", "vjp" or "pair"
    has_aux: bool = False
    seed: str | None = None     # name of the cotangent parameter (vjp, pair)
    single: bool = True         # return one gradient, not a tuple
    # (callee, variant, location) -> PairRef: the adjoint pair of a user
    # function called with the parameters `variant` varied (callee None: a
    # function value, whose pair a `PairRef.site` finds at run time)
    pairs: Callable | None = None


@dataclass(frozen=True)
class PairRef:
    """A callee's generated forward/backward functions, for a caller to use:
    the names they prefer to be imported under, and the functions.

    `objects` is None while the pair itself is being compiled (recursion):
    the caller is then that pair, and calls its own defs."""
    fwd: str | None
    bwd: str | None
    objects: tuple | None = None
    # a dispatch.CallSite that finds the pair when the call runs: for a
    # function value, and for helpers that call each other
    site: object = None


@dataclass
class Site:
    """A contribution the reverse sweep wrote, `d = v` or `d = d + v`
    (`accumulate`), for lower.py: `primal` gets it from the rule of
    `stmt`, taken as the adjoint of `value_name` (its old value when the
    statement rebinds it); `rule` (not a copy or a callee's) and
    `elementwise` say which shape decisions apply."""

    stmt: gast.Assign
    primal: str
    value_name: str
    rule: bool
    elementwise: bool
    accumulate: bool


@dataclass
class Adjoint:
    """The reverse transform's result: the adjoint function (pair mode: one
    def that pairs.py cuts at its `Split`) and what printing it needs."""

    tree: gast.FunctionDef
    imports: dict = field(default_factory=dict)   # name -> object
    seed_param: str | None = None                 # pair mode: the cotangent
    scalars: frozenset = frozenset()              # locals known to hold scalars
    pair_names: tuple | None = None               # pair mode: (fwd, bwd, saved)
    temp_adjoints: frozenset = frozenset()        # the adjoints of temporaries
    sites: dict = field(default_factory=dict)     # contribution statement -> Site
    rule_starts: dict = field(default_factory=dict)   # see lower.py
    rt: str = "rt"                                # the identifier of s2s_ad's runtime
