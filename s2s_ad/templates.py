"""Derivative-rule templates: parse once, bind call-site arguments, substitute.

A template is a Python function that is never called.  Its first parameter
names the primal result, the others mirror the primal function's signature:

    @adjoint(np.tanh)
    def tanh(z, x):
        d[x] += d[z] * (1.0 - z * z)

`d[x] += e` contributes `e` to the adjoint of `x`; `d[z]` reads the result's
adjoint.  Other assignments introduce template-local temporaries (renamed
fresh at each use).  An `if` whose test is a compile-time constant after
substitution (e.g. `if axis is None:`) is folded; others stay in the output.
So is a conditional expression `a if test else b` (a contribution may be one
whose test is known only at run time, where an `if` could not guard it).
`number_literal(p)` is such a constant: whether parameter `p` is bound to a
number literal (`x ** 2`), so a rule can write the plain formula where an
operand is known and a runtime helper elsewhere.
Free names (`np`, `rt`) resolve in the rule's module and are handed to code
generation as imports.

Invariants: a `Template` is immutable after parsing; `instantiate` returns
fresh nodes and never touches the template's own tree.
"""
from __future__ import annotations

import builtins
import inspect
import textwrap
import types
import warnings
from dataclasses import dataclass, field
from typing import Callable

import gast

from . import astutil, gastparse, traversal
from .errors import RuleError
from .naming import Namer


@dataclass(frozen=True)
class Contribution:
    """`d[primal] += value` after substitution: reverse.py decides = or +=.

    `primal` is a name, None (the parameter was bound to a constant), or a
    tuple of those when the parameter was bound to a tuple/list literal
    (`np.stack((a, b))`); then `value` is a sequence, one item per element.
    """

    primal: str | None | tuple
    value: gast.expr
    param: str | None = None            # the template parameter it is the adjoint of


@dataclass(frozen=True)
class Template:
    name: str
    result: str
    signature: inspect.Signature        # without the result parameter
    body: tuple
    namespace: dict = field(repr=False)
    # parameter that receives d[...] -> parameters (and possibly the result)
    # whose values computing that contribution reads, temporaries included
    reads: tuple = ()
    temporaries: tuple = ()             # names the template assigns, sorted
    # parameters whose contribution is `rt.spread(p, g)`: `g` spread over
    # p's shape, which the reverse may leave compact (see runtime.unbroadcast)
    spreads: frozenset = frozenset()

    @property
    def writes(self) -> frozenset:
        return frozenset(p for p, _ in self.reads)

    def reads_for(self, written) -> frozenset:
        """Names (parameters, result) read to compute the `written` adjoints."""
        return frozenset(n for p, names in self.reads if p in written for n in names)

    @property
    def params(self) -> list[str]:
        return list(self.signature.parameters)


def header(fn):
    """What `check_signature` reads of a rule function, without parsing it:
    its `name` and its `signature` without the result parameter."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if not params:
        raise RuleError(f"rule {fn.__name__!r} needs a first parameter naming the result")
    return types.SimpleNamespace(name=fn.__name__, signature=sig.replace(parameters=params[1:]))


def parse(fn) -> Template:
    """Parse a rule function into a `Template`; `RuleError` if malformed."""
    try:
        text = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        raise RuleError(f"cannot read the source of rule {fn.__name__!r}: {exc}") from None
    fdef = gastparse.parse(text).body[0]
    head = header(fn)
    result = next(iter(inspect.signature(fn).parameters))
    body = [s for s in fdef.body if not _is_docstring(s)]
    reads = _scan(body, {result, *head.signature.parameters})
    return Template(fn.__name__, result, head.signature,
                    tuple(body), fn.__globals__,
                    tuple(sorted((p, frozenset(n)) for p, n in reads.items())),
                    tuple(sorted(_locals(body))), _spreads(body))


def _spreads(body) -> frozenset:
    found = set()
    for stmt in body:
        if isinstance(stmt, gast.AugAssign) and _is_adjoint_ref(stmt.target) \
                and is_spread(stmt.value, stmt.target.slice.id):
            found.add(stmt.target.slice.id)
    return frozenset(found)


def is_spread(expr, primal: str) -> bool:
    """Whether `expr` is `rt.spread(primal, g)` (the runtime under any name)."""
    return (isinstance(expr, gast.Call) and len(expr.args) == 2 and not expr.keywords
            and isinstance(expr.func, gast.Attribute) and expr.func.attr == "spread"
            and isinstance(expr.func.value, gast.Name)
            and isinstance(expr.args[0], gast.Name) and expr.args[0].id == primal)


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant)


def _scan(body, params: set[str]) -> dict[str, set[str]]:
    """For each parameter given a `d[p] +=`, the parameters its value reads.

    Reads through template temporaries count; both arms of a static `if`
    count (which one survives is known only at a call site).
    """
    temps: dict[str, set[str]] = {}
    reads: dict[str, set[str]] = {}

    def names_in(expr) -> set[str]:
        refs = [n for n in traversal.walk(expr) if _is_adjoint_ref(n)]
        skip = {n.value for n in refs} | {n.slice for n in refs}
        found = set()
        for node in traversal.walk(expr):
            if isinstance(node, gast.Name) and node not in skip:
                found |= temps.get(node.id, {node.id} & params)
        return found

    def visit(stmts, context: set[str]) -> None:
        for stmt in stmts:
            if isinstance(stmt, gast.If):
                inner = context | names_in(stmt.test)
                visit(stmt.body, inner)
                visit(stmt.orelse, inner)
            elif isinstance(stmt, gast.AugAssign) and _is_adjoint_ref(stmt.target):
                reads.setdefault(stmt.target.slice.id, set()).update(
                    names_in(stmt.value) | context)
            elif isinstance(stmt, gast.Assign):
                deps = names_in(stmt.value) | context
                for target in stmt.targets:
                    for node in traversal.walk(target):
                        if isinstance(node, gast.Name):
                            temps[node.id] = temps.get(node.id, set()) | deps
    visit(body, set())
    return reads


def _is_adjoint_ref(node) -> bool:
    return (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == "d" and isinstance(node.slice, gast.Name))


def bind(tpl: Template, args: list, kwargs: dict) -> dict[str, gast.expr]:
    """Map each template parameter to a call-site node or its default.

    Raises TypeError (as `inspect.Signature.bind`) when the call does not fit.
    """
    bound = tpl.signature.bind(*args, **kwargs)
    out = {}
    for pname, param in tpl.signature.parameters.items():
        if param.kind is param.VAR_KEYWORD:
            continue
        if pname in bound.arguments:
            value = bound.arguments[pname]
            if param.kind is param.VAR_POSITIONAL:
                value = astutil.tuple_(value)
            out[pname] = value
        elif param.default is not inspect.Parameter.empty:
            out[pname] = astutil.const(param.default)
        elif param.kind is param.VAR_POSITIONAL:
            out[pname] = astutil.tuple_([])
    return out


def instantiate(tpl: Template, binding: dict[str, gast.expr], result: str,
                d_result: str, namer: Namer,
                imported: Callable[[str, object], str] | None = None
                ) -> tuple[list, dict[str, object]]:
    """Substitute a bound template.

    Returns the statements (gast statements and `Contribution`s, in order)
    and the imports they need (identifier -> object).  Template locals are
    renamed with `namer`; `d[result]` becomes `d_result`.  A free name of
    the template (`np`, `rt` from its module, or a builtin such as `sum`)
    becomes `imported(name, object)`, the identifier the generated code reads
    it by; only those nodes are renamed, never the call site's arguments.
    """
    renames = {n: namer.temp(n.strip("_") or "t") for n in tpl.temporaries}
    imports: dict[str, object] = {}
    subst = _Substituter(tpl, binding, result, d_result, renames, imports,
                         imported or (lambda ident, obj: ident))
    out = []
    for stmt in tpl.body:
        out.extend(subst.statement(stmt))
    return out, imports


def number_literal(arg) -> bool:
    """In a rule template, `number_literal(p)`: whether parameter `p` is
    bound to a number literal at the call site (`x ** 2`, not `x ** n`),
    decided when the rule is instantiated (`literal_test`)."""
    raise RuleError("number_literal() is read in rule templates, never called")


def literal_test(node, tpl, binding: dict):
    """`number_literal(p)` in template `tpl` as the constant it is at a call
    site (`binding`), or None where `node` is no such call."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and tpl.namespace.get(node.func.id) is number_literal):
        return None
    if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], gast.Name):
        raise RuleError(f"rule {tpl.name!r}: number_literal() takes one parameter name")
    bound = binding.get(node.args[0].id)
    return astutil.const(bound is not None and astutil.is_number(bound))


def static_value(expr: gast.expr):
    """The value of an expression built from literals only (`None is None`).

    Raises ValueError if the expression reads a name or calls anything.
    """
    for node in traversal.walk(expr):
        if isinstance(node, (gast.Name, gast.Call, gast.Attribute, gast.Subscript,
                             gast.Lambda, gast.NamedExpr)) or \
                type(node).__name__.endswith("Comp"):
            raise ValueError("not static")
    tree = gast.fix_missing_locations(astutil.expression(expr))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)     # `1.0 is None`
        code = compile(gast.gast_to_ast(tree), "<template>", "eval")
    return eval(code, {"__builtins__": {}})


def _partial_test(test):
    """`test`'s value (a bool) if it is a compile-time constant, else the
    test without the operands of its `and`/`or` that are constants and do
    not decide it."""
    try:
        return bool(static_value(test))
    except ValueError:
        if not isinstance(test, gast.BoolOp):
            return test
    decisive = isinstance(test.op, gast.Or)         # True decides an `or`
    kept = []
    for operand in test.values:
        value = _partial_test(operand)
        if value is decisive:
            return decisive
        if isinstance(value, gast.expr):
            kept.append(value)
    if not kept:
        return not decisive
    test.values = kept          # (`test` is a fresh copy)
    return kept[0] if len(kept) == 1 else test


def _locals(body) -> set[str]:
    found = set()
    for stmt in body:
        for node in traversal.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                found.add(node.id)
    return found


def primal_of(node):
    """The primal a bound argument names: a name, None for a constant, or a
    tuple of those for a tuple/list literal."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, (gast.Tuple, gast.List)):
        return tuple(primal_of(e) for e in node.elts)
    return None


class _Substituter:
    """Copies of a template's statements with its parameters, result,
    temporaries and free names replaced (the template is never changed)."""

    def __init__(self, tpl, binding, result, d_result, renames, imports, imported):
        self.tpl, self.binding, self.renames = tpl, binding, renames
        self.result, self.d_result, self.imports = result, d_result, imports
        self.imported = imported

    def statement(self, stmt) -> list:
        if isinstance(stmt, gast.AugAssign) and _is_adjoint_ref(stmt.target):
            if not isinstance(stmt.op, gast.Add):
                raise RuleError(f"rule {self.tpl.name!r}: only `d[x] += ...` may update an adjoint")
            return [Contribution(self._primal_of(stmt.target.slice.id),
                                 self.copy(stmt.value), stmt.target.slice.id)]
        if isinstance(stmt, gast.If):
            test = self.copy(stmt.test)
            try:
                taken = bool(static_value(test))
            except ValueError:
                body = [s for b in stmt.body for s in self.statement(b)]
                orelse = [s for b in stmt.orelse for s in self.statement(b)]
                if any(isinstance(s, Contribution) for s in body + orelse):
                    raise RuleError(
                        f"rule {self.tpl.name!r}: its `if {astutil.unparse(stmt.test)}` "
                        "guards a `d[x] +=` but is not a compile-time constant here",
                        hint="in the rule, compute the contribution without the `if` "
                             "(np.where, or a runtime helper)") from None
                return [astutil.if_(test, body, orelse)]
            branch = stmt.body if taken else stmt.orelse
            return [s for b in branch for s in self.statement(b)]
        if isinstance(stmt, (gast.Assign, gast.Expr)):
            return [self.copy(stmt)]
        raise RuleError(f"rule {self.tpl.name!r}: unsupported statement "
                        f"{type(stmt).__name__} in a template")

    def _primal_of(self, param: str):
        """The primal variable a parameter is bound to (None: a constant)."""
        return primal_of(self.binding.get(param))

    def copy(self, node):
        return astutil.clone(node, self._substitute)

    def _substitute(self, node):
        """What replaces a template node in the copy, or None: copy it."""
        kind = type(node)
        if kind is gast.Name:
            return self._name(node)
        if kind is gast.IfExp:
            return self._conditional(node)
        if kind is gast.Call:
            return literal_test(node, self.tpl, self.binding)
        if kind is gast.Subscript and _is_adjoint_ref(node):
            if node.slice.id != self.tpl.result:
                raise RuleError(f"rule {self.tpl.name!r}: only d[{self.tpl.result}] "
                                "may be read")
            return astutil.name(self.d_result)
        return None

    def _conditional(self, node):
        """`a if test else b` after substitution: the copy of the branch
        taken where the test is a compile-time constant, as for an `if`
        statement; else with the constant operands of an `and`/`or` test
        left out (`v is None and True is True` is `v is None`)."""
        test = _partial_test(self.copy(node.test))
        if not isinstance(test, gast.expr):
            return self.copy(node.body if test else node.orelse)
        copied = astutil.clone(
            node, lambda n: None if n is node else self._substitute(n))
        copied.test = test
        return copied

    def _name(self, node):
        return substituted_name(node, self.tpl, self.result, self.renames, self.binding,
                                self._import, "rule")

    def _import(self, name: str, obj) -> str:
        ident = self.imported(name, obj)
        self.imports[ident] = obj
        return ident


def substituted_name(node, tpl, result: str, renames: dict, binding: dict, imported,
                     kind: str):
    """What a name in a template (adjoint or tangent) becomes at a call
    site: the result's name, a temporary's fresh one, the bound argument,
    or a free name (`np`, `rt`, a builtin) as `imported(name, object)`
    names it; `RuleError` for a name the rule cannot see."""
    if node.id == tpl.result:
        return astutil.name(result)
    if node.id in renames:
        return astutil.name(renames[node.id], isinstance(node.ctx, gast.Store))
    if node.id in binding:
        return astutil.clone(binding[node.id])
    if node.id in tpl.namespace:
        obj = tpl.namespace[node.id]
    elif hasattr(builtins, node.id):
        obj = getattr(builtins, node.id)
    else:
        raise RuleError(f"{kind} {tpl.name!r}: unknown name {node.id!r}")
    return astutil.name(imported(node.id, obj))
