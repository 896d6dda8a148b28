"""Tangent-rule templates (forward mode): parse once, bind, substitute.

A tangent template is a function that is never called.  Its first
parameter names the primal result, the others mirror the primal
function's signature (as an adjoint template's do, templates.py):

    @tangent(np.linalg.inv)
    def inv(z, a):
        t[z] += -(z @ t[a] @ z)

`t[z] += e` adds a term to the result's tangent.  A term reads the tangent
of one operand, `t[x]` (the tangent of a tuple operand is the tuple of its
items' tangents), and is left out where that tangent is a static zero, so
each term must be linear in it.  A term may also read several operands'
tangents jointly (`t[z] += rt.setitem(rt.copy(t[x]), index, t[value])`):
it is left out only where all of them are static zeros, the others read
as zeros.  Other assignments are template-local
temporaries (renamed fresh at each use), and an `if` whose test is a
compile-time constant after substitution is folded, as in an adjoint
template; any other `if` is kept, where its branches only compute
temporaries.  A multi-output primitive's terms are tuple displays, one item
per output.

Invariant: a `TangentTemplate` is immutable after parsing; `instantiate`
returns fresh nodes and never touches the template's own tree.
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Callable

import gast

from . import astutil, gastparse, templates, traversal
from .errors import RuleError
from .naming import Namer


@dataclass(frozen=True)
class TangentTemplate:
    name: str
    result: str
    signature: inspect.Signature        # without the result parameter
    body: tuple
    namespace: dict = field(repr=False)
    temporaries: tuple = ()             # names the template assigns, sorted
    operands: frozenset = frozenset()   # parameters whose tangent a term reads


def parse(fn) -> TangentTemplate:
    """Parse a tangent rule function; `RuleError` if malformed."""
    try:
        text = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        raise RuleError(f"cannot read the source of tangent rule {fn.__name__!r}: "
                        f"{exc}") from None
    fdef = gastparse.parse(text).body[0]
    head = templates.header(fn)
    result = next(iter(inspect.signature(fn).parameters))
    body = tuple(s for s in fdef.body if not (isinstance(s, gast.Expr)
                                               and isinstance(s.value, gast.Constant)))
    operands, temps = set(), set()
    terms = [s for s in traversal.walk(list(body))
             if isinstance(s, gast.AugAssign) and _is_tangent_ref(s.target)]
    for node in traversal.walk([s.value for s in terms]):
        if _is_tangent_ref(node):
            operands.add(node.slice.id)
    read_outside = sum(_is_tangent_ref(n) for n in traversal.walk(list(body))) \
        - len(terms) - sum(_is_tangent_ref(n) for n in traversal.walk([s.value for s in terms]))
    if read_outside:
        raise RuleError(f"tangent rule {fn.__name__!r}: t[...] is read outside a "
                        f"`t[{result}] += ...` term", hint="write each term whole")
    for node in traversal.walk(list(body)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            temps.add(node.id)
    unknown = operands - set(head.signature.parameters)
    if unknown:
        raise RuleError(f"tangent rule {fn.__name__!r} reads t[{sorted(unknown)[0]}], "
                        "which is not one of its parameters")
    return TangentTemplate(fn.__name__, result, head.signature, body, fn.__globals__,
                           tuple(sorted(temps)), frozenset(operands))


def _is_tangent_ref(node) -> bool:
    return (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == "t" and isinstance(node.slice, gast.Name))


def instantiate(tpl: TangentTemplate, binding: dict, result: str,
                tangent: Callable[[gast.expr], gast.expr | None],
                zeros: Callable[[gast.expr], gast.expr], namer: Namer,
                imported: Callable[[str, object], str]) -> tuple[list, list]:
    """(statements, terms) of `tpl` bound at a call site: the terms whose
    operand has a tangent (`tangent(bound node)`, None for a static zero;
    `zeros(bound node)` where a joint term needs one), each an expression,
    to be summed by the caller."""
    renames = {n: namer.temp(n.strip("_") or "t") for n in tpl.temporaries}
    sub = _Substituter(tpl, binding, result, tangent, zeros, renames, imported)
    stmts, terms = [], []
    for stmt in tpl.body:
        sub.statement(stmt, stmts, terms)
    return stmts, terms


class _Substituter:
    def __init__(self, tpl, binding, result, tangent, zeros, renames, imported):
        self.tpl, self.binding, self.result = tpl, binding, result
        self.tangent, self.zeros, self.renames, self.imported = tangent, zeros, renames, imported

    def statement(self, stmt, stmts: list, terms: list) -> None:
        if isinstance(stmt, gast.AugAssign) and _is_tangent_ref(stmt.target):
            self._term(stmt, terms)
        elif isinstance(stmt, gast.If):
            test = self.copy(stmt.test)
            try:
                taken = bool(templates.static_value(test))
            except ValueError:      # decided when it runs: no term may depend on it
                stmts.append(self._runtime_if(stmt, test))
                return
            for inner in stmt.body if taken else stmt.orelse:
                self.statement(inner, stmts, terms)
        elif isinstance(stmt, (gast.Assign, gast.Expr)):
            stmts.append(self.copy(stmt))
        else:
            raise RuleError(f"tangent rule {self.tpl.name!r}: unsupported statement "
                            f"{type(stmt).__name__} in a template")

    def _runtime_if(self, stmt, test) -> gast.If:
        """`if test:` in the generated code, for an `if` whose branches only
        compute temporaries (as in an adjoint template)."""
        branches = []
        for body in (stmt.body, stmt.orelse):
            stmts, terms = [], []
            for inner in body:
                self.statement(inner, stmts, terms)
            if terms:
                raise RuleError(f"tangent rule {self.tpl.name!r}: its `if "
                                f"{astutil.unparse(stmt.test)}` guards a `t[...] +=` but "
                                "is not a compile-time constant here",
                                hint="compute the term without the `if` (np.where, or a "
                                     "runtime helper)")
            branches.append(stmts)
        return astutil.if_(test, branches[0] or [astutil.pass_()], branches[1])

    def _term(self, stmt, terms: list) -> None:
        if stmt.target.slice.id != self.tpl.result or not isinstance(stmt.op, gast.Add):
            raise RuleError(f"tangent rule {self.tpl.name!r}: only `t[{self.tpl.result}] "
                            "+= ...` adds a term")
        read = {n.slice.id for n in traversal.walk(stmt.value) if _is_tangent_ref(n)}
        if any(self._tangent(operand) is not None for operand in read):
            terms.append(self.copy(stmt.value))

    def _tangent(self, operand: str):
        node = self.binding.get(operand)
        return self.tangent(node) if node is not None else None

    def copy(self, node):
        return astutil.clone(node, self._substitute)

    def _substitute(self, node):
        kind = type(node)
        if kind is gast.Subscript and _is_tangent_ref(node):
            found = self._tangent(node.slice.id)
            node = self.binding.get(node.slice.id)
            return found if found is not None else \
                self.zeros(node) if node is not None else astutil.const(0.0)
        if kind is gast.Call:
            return templates.literal_test(node, self.tpl, self.binding)
        if kind is not gast.Name:
            return None
        return templates.substituted_name(node, self.tpl, self.result, self.renames,
                                          self.binding, self.imported, "tangent rule")
