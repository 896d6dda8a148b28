"""Which primitive each ANF assignment applies, with its rule bound.

`classify` returns a side table `id(stmt) -> Prim` for every `Name = rhs`
and `Expr(rhs)` statement of an ANF body (nested blocks included).  Later
passes read operands, rule and binding from it instead of re-deriving them.

Invariants: `Prim.operands` are the names in positions that can carry a
gradient (those the template writes `d[...]` for); a problem that only
matters if the statement is active (no rule, arguments that do not fit the
rule) is kept in `Prim.problem` and raised by the reverse transform, so
inactive code may call anything.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import gast

from . import astutil, templates
from .errors import NoRuleError, RuleError, S2SADError
from .frontend import Source, is_resolved
from .normalize import Normalized, is_opaque
from .rules import registry

COPY, CONST, RULE, UNKNOWN = "copy", "const", "rule", "unknown"

BINOPS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.Pow: operator.pow,
    gast.MatMult: operator.matmul, gast.Mod: operator.mod,
    gast.FloorDiv: operator.floordiv,
}
UNARYOPS = {gast.USub: operator.neg, gast.UAdd: operator.pos}


@dataclass
class Prim:
    kind: str                            # COPY, CONST, RULE or UNKNOWN
    key: object = None                   # registry key of the primitive
    rule: registry.Rule | None = None
    binding: dict = field(default_factory=dict)
    operands: tuple = ()                 # names that may carry a gradient
    problem: S2SADError | None = None    # raised only if the statement is active
    shape_hint: str | None = None        # "scalar" if known to be a scalar

    def reads(self, varied) -> tuple[frozenset, bool]:
        """(primal names whose values the adjoint reads, whether it reads the
        result), counting only the contributions to `varied` operands."""
        if self.rule is None:
            return frozenset(), False
        tpl = self.rule.template
        written = {p for p in tpl.writes if p in self.binding
                   and any(n in varied for n in _names_of(self.binding[p]))}
        params = tpl.reads_for(written)
        names = set()
        for param in params:
            node = self.binding.get(param)
            if node is not None:
                names.update(astutil.load_names(node))
        return frozenset(names), tpl.result in params


def classify(norm: Normalized, src: Source) -> dict[int, Prim]:
    table: dict[int, Prim] = {}
    for stmt in _statements(norm.tree.body):
        if isinstance(stmt, gast.Assign):
            table[id(stmt)] = _classify(stmt.value, stmt, src, norm.locals)
        elif isinstance(stmt, gast.Expr):
            table[id(stmt)] = _classify(stmt.value, stmt, src, norm.locals)
    return table


def _statements(body):
    for stmt in body:
        yield stmt
        for child in ("body", "orelse"):
            yield from _statements(getattr(stmt, child, []) or [])


def _classify(rhs, stmt, src: Source, locals_) -> Prim:
    if isinstance(rhs, gast.Name):
        return Prim(COPY, operands=(rhs.id,))
    if is_opaque(rhs, src, locals_) or not _names_in(rhs):
        return Prim(CONST, shape_hint=_opaque_shape(rhs, src, locals_))
    key, args, kwargs = _primitive(rhs, src, locals_)
    if key is operator.floordiv:
        return Prim(CONST)
    rule = registry.lookup(key)
    if rule is None:
        return Prim(UNKNOWN, key, operands=tuple(_names_in(rhs)),
                    problem=_no_rule(key, rhs, stmt, src))
    try:
        binding = templates.bind(rule.template, args, kwargs)
    except TypeError as exc:
        return Prim(UNKNOWN, key, operands=tuple(_names_in(rhs)), problem=RuleError(
            f"the call does not fit the rule for {registry.display_name(key)}: {exc}",
            src.locate(stmt), hint="check the arguments against the function's signature"))
    operands = tuple(dict.fromkeys(
        n for p in rule.template.writes if p in binding
        for n in _names_of(binding[p])))
    return Prim(RULE, key, rule, binding, operands)


def _opaque_shape(rhs, src: Source, locals_) -> str | None:
    """"scalar" for `stop_gradient(np.max(x))` and the like, else None."""
    if not (isinstance(rhs, gast.Call) and len(rhs.args) == 1 and not rhs.keywords):
        return None
    inner = rhs.args[0]
    if not isinstance(inner, gast.Call) or inner.keywords:
        return None
    rule = registry.lookup(src.resolve(inner.func, locals_))
    if rule is not None and rule.shape in (registry.SCALAR, registry.REDUCTION) \
            and len(inner.args) == 1:
        return "scalar"
    return None


def _names_of(node) -> list[str]:
    if isinstance(node, gast.Name):
        return [node.id]
    if isinstance(node, (gast.Tuple, gast.List)):
        return [n for e in node.elts for n in _names_of(e)]
    return []


def _names_in(rhs) -> list[str]:
    return list(dict.fromkeys(astutil.load_names(rhs)))


def _primitive(rhs, src: Source, locals_):
    """(registry key, positional atoms, keyword atoms) of a primitive rhs."""
    if isinstance(rhs, gast.BinOp):
        return BINOPS.get(type(rhs.op)), [rhs.left, rhs.right], {}
    if isinstance(rhs, gast.UnaryOp):
        return UNARYOPS.get(type(rhs.op)), [rhs.operand], {}
    if isinstance(rhs, gast.Subscript):
        return operator.getitem, [rhs.value, index_value(rhs.slice)], {}
    if isinstance(rhs, gast.Attribute):
        return registry.Attr(rhs.attr), [rhs.value], {}
    if isinstance(rhs, (gast.Tuple, gast.List)):
        return type(rhs).__name__.lower(), list(rhs.elts), {}
    if isinstance(rhs, gast.Call):
        kwargs = {k.arg: k.value for k in rhs.keywords}
        callee = src.resolve(rhs.func, locals_)
        if is_resolved(callee):
            return callee, list(rhs.args), kwargs
        if isinstance(rhs.func, gast.Attribute):
            return registry.Method(rhs.func.attr), [rhs.func.value, *rhs.args], kwargs
        return None, list(rhs.args), kwargs
    return None, [], {}


def index_value(index) -> gast.expr:
    """An expression that evaluates to the index object of a subscript."""
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else astutil.const(None)
                 for p in (index.lower, index.upper, index.step)]
        return astutil.call(astutil.name("slice"), parts)
    if isinstance(index, gast.Tuple):
        return astutil.tuple_([index_value(e) for e in index.elts])
    return index


def _no_rule(key, rhs, stmt, src: Source) -> S2SADError:
    what = registry.display_name(key) if key is not None else astutil.unparse(
        rhs.func if isinstance(rhs, gast.Call) else rhs)
    return NoRuleError(
        f"no derivative rule for {what}", src.locate(stmt),
        hint=f"register one with @s2s_ad.adjoint({what}), declare it with "
             f"s2s_ad.nondifferentiable({what}), or wrap the call in "
             "stop_gradient(...) if no gradient should flow through it")
