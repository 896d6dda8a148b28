"""The function being compiled: the reserved names its code reaches s2s_ad
through, its parsed `Source` and scope, the expressions kept opaque, and
the `Normalized` (A-normal form) function with its alias tables."""
from __future__ import annotations

import builtins
import functools
import operator
import types
from dataclasses import dataclass, field

import gast
import numpy

from .. import astutil, runtime, scopes
from ..errors import Location
from ..naming import BUILTINS, Namer
from ..rules import registry, stop_gradient_like


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
    # for generated text (a lifted function's): (line, column) in it -> the
    # `Location` in the user's file of the code it was made from
    origins: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def qualname(self) -> str:
        return f"{self.func.__module__}.{self.func.__qualname__}"

    def locate(self, node: gast.AST | None) -> Location:
        lineno = getattr(node, "lineno", None) or 1
        col = getattr(node, "col_offset", 0) or 0
        if (lineno, col) in self.origins:
            return self.origins[lineno, col]
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
        `resolved`.  The path is read as parts (`astutil.dotted_parts`: the
        passes ask this of every call).
        """
        parts = astutil.dotted_parts(node)
        if parts is None:
            return _UNRESOLVED
        head, *rest = parts
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
            self.resolved.setdefault((where, head, ".".join([head, *rest])), obj)
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
