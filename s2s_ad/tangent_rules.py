"""The tangent of one active ANF assignment (forward mode, forward.py).

Where a primitive's tangent comes from, first found first:

1. its tangent template (`@tangent`, tangent_templates.py);
2. `linear`: the primitive applied to the tangents of those parameters,
   the others as they are (`np.sum(tx, axis=0)`, `tx[i]`, `tx + ty`), a
   static zero made zeros; an in-place primitive applied to a copy, or
   `+=` as `+`, so that no tangent is ever updated in place;
3. `multilinear`: the product rule, one term per varied parameter
   (`ta @ b + a @ tb`);
4. an elementwise (or pointwise) rule's adjoint template: its Jacobian is
   diagonal, so
   the adjoint's contribution to an operand, with `d[z]` read as that
   operand's tangent, is the operand's term (`d[x] += d[z] * cos(x)` gives
   `tx * cos(x)`); spread to the result's shape unless a varied operand
   is known to have it (ShapeFacts.same_shape);

and otherwise a located `NoRuleError` saying what to register.  Copies
pass the tangent on.
"""
from __future__ import annotations

import dataclasses
import operator

import gast
import numpy as np

from . import astutil, tangent_templates, templates, traversal
from .errors import NoRuleError, RuleError
from .ir import COPY, RULE, Prim
from .reverse_plan import Plan, imported
from .rules import registry

# an augmented assignment's operator -> the operator its tangent applies
_PLAIN = {operator.iadd: gast.Add, operator.isub: gast.Sub, operator.imul: gast.Mult,
          operator.itruediv: gast.Div, operator.ipow: gast.Pow, operator.imod: gast.Mod,
          operator.imatmul: gast.MatMult}


def reads_result(plan: Plan, stmt, prim: Prim) -> bool:
    """Whether the tangent of `prim` reads the primal's result (`exp`'s
    `tx * z`, or its shape to spread a term to): then it is computed after
    the primal statement."""
    rule = prim.rule if prim.kind == RULE else None
    if rule is None or rule.tangent_fn is None and (rule.linear or rule.multilinear):
        return False
    if rule.tangent_fn is not None:
        tpl = rule.tangent_template
        read = [s.value if isinstance(s, gast.AugAssign) else s for s in tpl.body]
        return any(isinstance(n, gast.Name) and n.id == tpl.result
                   and isinstance(n.ctx, gast.Load) for n in traversal.walk(read))
    tpl = rule.template
    if tpl is None:
        return False
    return tpl.result in tpl.reads_for(tpl.writes) or _spread(plan, stmt, prim)


def _spread(plan: Plan, stmt, prim: Prim) -> bool:
    """Whether an elementwise tangent may be smaller than the result: an
    operand that may broadcast it is a static zero, and no varied operand
    is known to have the result's shape."""
    varied = plan.facts.varied_before.get(stmt, frozenset())
    operands = [n for n in prim.binding.values() if not astutil.is_number(n)
                and not (isinstance(n, gast.Constant) and n.value is None)]
    if all(isinstance(n, gast.Name) and n.id in varied for n in operands):
        return False
    same = plan.facts.shapes.same_shape.get(stmt, frozenset())
    return not any(isinstance(n, gast.Name) and n.id in varied and n.id in same
                   for n in operands)


def tangent(plan: Plan, stmt: gast.Assign, prim: Prim, target: str, tangent_of,
            binding: dict | None = None) -> list:
    """Statements assigning `target`, the tangent of `stmt`'s target;
    `tangent_of` gives a bound operand's tangent (None: a static zero);
    `binding`, the operands as the tangent reads them (default: the
    statement's)."""
    if binding is not None:
        prim = dataclasses.replace(prim, binding=binding)
    if prim.kind == COPY:
        return [astutil.assign(target, tangent_of(stmt.value))]
    if prim.kind != RULE:
        raise prim.problem or NoRuleError("no tangent rule", plan.src.locate(stmt))
    rule = prim.rule
    try:
        _check_covered(prim, tangent_of, _covered(prim))
        if rule.tangent_fn is not None:
            stmts, value = _from_template(plan, stmt, prim, tangent_of)
        elif rule.linear:
            stmts, value = [], _linear(plan, stmt, prim, tangent_of)
        elif rule.multilinear:
            stmts, value = [], _sum(_multilinear(plan, stmt, prim, tangent_of))
        elif rule.diagonal and rule.template is not None:
            stmts, value = _elementwise(plan, stmt, prim, tangent_of)
        else:
            raise _missing(plan, stmt, prim)
    except RuleError as exc:
        if exc.location is not None:
            raise
        # (in derived code, driver._told_at_the_user tells it at the user's function)
        raise RuleError(exc.message, plan.src.locate(stmt), exc.hint) from None
    return stmts + [astutil.assign(target, value)]


def _covered(prim: Prim) -> frozenset:
    """The parameters the strategy that will be used gives a tangent term."""
    rule = prim.rule
    if rule.tangent_fn is not None:
        found = rule.tangent_template.operands
    elif rule.linear:
        found = frozenset(rule.linear)
    elif rule.multilinear:
        found = frozenset(rule.multilinear)
    else:
        found = rule.template.writes if rule.template is not None else frozenset()
    return found | frozenset(rule.inert)


def _check_covered(prim: Prim, tangent_of, covered: frozenset) -> None:
    """Refuse, rather than drop, the derivative of an operand no term covers
    (a parameter the rule's tangent, or its linearity, leaves out): it would
    be a silent zero."""
    for param, node in prim.binding.items():
        if param in covered:
            continue
        for leaf in _leaves(node):
            if isinstance(leaf, gast.Name) and tangent_of(leaf) is not None:
                raise RuleError(
                    f"the tangent rule of {registry.display_name(prim.key)} gives no "
                    f"term for its parameter {param!r}, which carries a derivative here "
                    f"(`{leaf.id}`)",
                    hint=f"wrap `{leaf.id}` in stop_gradient(...) if no derivative should "
                         "flow through it, or use s2s_ad.grad / vjp")


def _from_template(plan: Plan, stmt, prim: Prim, tangent_of) -> tuple:
    _check_parameters(prim)
    stmts, terms = tangent_templates.instantiate(
        prim.rule.tangent_template, prim.binding, stmt.targets[0].id, tangent_of,
        lambda node: zeros_of(plan, node), plan.namer,
        lambda ident, obj: imported(plan, ident, obj))
    return stmts, _sum(terms)


def _check_parameters(prim: Prim) -> None:
    """Refuse a call that gives the adjoint template's parameter a value the
    tangent template does not take (it would be ignored: `where=` added to
    an adjoint and not to its tangent)."""
    ours = prim.rule.tangent_template.signature.parameters
    theirs = prim.rule.signature_template.signature.parameters
    for param, node in prim.binding.items():
        if param in ours or param not in theirs:
            continue
        default = theirs[param].default
        if isinstance(node, gast.Constant) and node.value is default or \
                isinstance(node, gast.Constant) and node.value == default:
            continue
        raise RuleError(f"the tangent rule of {registry.display_name(prim.key)} does not take "
                        f"its parameter {param!r}, given here",
                        hint="use s2s_ad.grad / vjp for this call, or pass the parameter's "
                             "default")


def _linear(plan: Plan, stmt, prim: Prim, tangent_of) -> gast.expr:
    """The primitive applied to the tangents of its linear parameters."""
    swap = {}
    for param in prim.rule.linear:
        node = prim.binding.get(param)
        if node is None:
            continue
        for leaf in _leaves(node):
            found = tangent_of(leaf)
            swap[leaf] = found if found is not None else \
                (zeros_of(plan, leaf) if isinstance(leaf, gast.Name) else _zero_constant(leaf))
    value = astutil.clone(stmt.value, swap.get)
    if prim.inplace:
        value = _not_in_place(plan, value, prim)
    return value


def _leaves(node) -> list:
    """The operand nodes a bound parameter holds: itself, or a display's items."""
    if isinstance(node, (gast.Tuple, gast.List)):
        return [leaf for e in node.elts for leaf in _leaves(e)]
    return [node]


def _zero_constant(node) -> gast.expr:
    """A constant operand of a linear parameter: its tangent is zero."""
    return astutil.const(0.0) if astutil.is_number(node) else astutil.clone(node)


def _not_in_place(plan: Plan, call: gast.Call, prim: Prim) -> gast.expr:
    """An in-place primitive's tangent as a fresh value: `a += b` as
    `ta + tb`, an update of the first operand applied to a copy of its
    tangent."""
    plain = _PLAIN.get(prim.key)
    if plain is not None:
        return astutil.binop(call.args[0], plain, call.args[1])
    call.args[0] = astutil.call(f"{plan.rt}.copy", [call.args[0]])
    return call


def _multilinear(plan: Plan, stmt, prim: Prim, tangent_of) -> list:
    """One term per varied factor: the primitive with that factor replaced
    by its tangent.  A factor is a parameter's operand, or each operand of
    a `*operands` parameter; a display operand is one factor (its items are
    linear in it jointly: `[ta, tb]`, zeros where static)."""
    terms = []
    params = prim.rule.signature_template.signature.parameters
    for param in prim.rule.multilinear:
        bound = prim.binding.get(param)
        if bound is None:
            continue
        starred = params[param].kind is params[param].VAR_POSITIONAL
        for node in bound.elts if starred and isinstance(bound, gast.Tuple) else [bound]:
            found = tangent_of(node)
            if found is None:
                continue
            term = astutil.clone(
                stmt.value, lambda n, node=node, found=found: found if n is node else None)
            terms.append(_not_in_place(plan, term, prim) if prim.inplace else term)
    return terms


def _elementwise(plan: Plan, stmt, prim: Prim, tangent_of) -> tuple:
    """Each varied operand's term from the adjoint template (see the module
    docstring), summed, spread to the result's shape where needed."""
    stmts, terms = [], []
    target = stmt.targets[0].id
    prim = _float_exponent(prim)
    for param in sorted(prim.rule.template.writes):
        node = prim.binding.get(param)
        leaves = node.elts if isinstance(node, (gast.Tuple, gast.List)) else [node]
        for i, leaf in enumerate(leaves):
            found = tangent_of(leaf) if isinstance(leaf, gast.Name) else None
            if found is None:
                continue
            items, _ = templates.instantiate(
                prim.rule.template, prim.binding, target, found.id,
                plan.namer, lambda ident, obj: imported(plan, ident, obj))
            stmts += [s for s in items if not isinstance(s, templates.Contribution)]
            for c in items:             # (a display's: item i of the sequence it adds)
                if isinstance(c, templates.Contribution) and c.param == param:
                    terms.append(c.value if leaf is node else
                                 astutil.subscript(c.value, astutil.const(i)))
    value = _sum(terms)
    if _spread(plan, stmt, prim):
        value = astutil.call(f"{plan.rt}.expand", [value, astutil.name(target)])
    return stmts, value


def _float_exponent(prim: Prim) -> Prim:
    """A power's int literal exponent read as a float in its derivative:
    `x ** 3` gives `tx * 3.0 * x ** 2.0`, a float tangent's float coefficient
    (a float times an int is no fast float multiplication in CPython)."""
    exponent = prim.binding.get("b")
    if prim.key not in _POWERS or type(astutil.number_value(exponent)) is not int:
        return prim
    binding = dict(prim.binding, b=astutil.const(float(astutil.number_value(exponent))))
    return dataclasses.replace(prim, binding=binding)


_POWERS = (operator.pow, operator.ipow, np.power)


def zeros_of(plan: Plan, node) -> gast.expr:
    """Zeros like the value of `node` (a static zero made a value)."""
    return astutil.call(f"{plan.rt}.zero_tangent", [astutil.clone(node)])


def _sum(terms: list) -> gast.expr:
    """The terms added up; tuple displays (a multi-output primitive's
    terms) item by item."""
    if not terms:
        return astutil.const(0.0)
    if all(isinstance(t, gast.Tuple) for t in terms) and \
            len({len(t.elts) for t in terms}) == 1:
        return astutil.tuple_(_sum([t.elts[i] for t in terms])
                              for i in range(len(terms[0].elts)))
    value = terms[0]
    for term in terms[1:]:
        value = astutil.binop(value, gast.Add, term)
    return value


def _missing(plan: Plan, stmt, prim: Prim) -> NoRuleError:
    what = registry.display_name(prim.key)
    return NoRuleError(
        f"{what} has an adjoint rule but no tangent rule, which forward mode needs",
        plan.src.locate(stmt),
        hint=f"register one with @s2s_ad.tangent({what}) (t[z] += ... per operand), or "
             "use s2s_ad.grad / vjp")

