"""A statement's derivative rule, instantiated for the reverse sweep
(functions of the reverse transform's `Plan`, reverse_plan.py): the rule's
adjoint template bound at the statement (reverse.py then emits each
contribution), or a callee's backward function's gradients.

Invariant: an operand carrying a gradient into a parameter that the
template gives none (and the rule does not declare inert) is refused,
located, never given a silent zero.
"""
from __future__ import annotations

import gast

from . import astutil, runtime, templates, traversal
from .errors import NoRuleError, RuleError
from .ir import Prim, names_of
from .reverse_plan import Plan, imported
from .rules import registry


def rule_items(plan: Plan, stmt, prim: Prim, target: str, old, d_result: str) -> list:
    """The rule's template instantiated at `stmt` (the old value of a
    target it also reads read as `old`)."""
    if prim.rule.template is None:
        raise _no_adjoint(plan, stmt, prim)
    _check_covered(plan, stmt, prim)
    binding = prim.binding
    if old is not None:
        binding = {k: renamed(v, target, old) for k, v in binding.items()}
    try:
        items, _ = templates.instantiate(
            prim.rule.template, binding, target, d_result, plan.namer,
            lambda ident, obj: imported(plan, ident, obj))
    except RuleError as exc:
        raise RuleError(exc.message, plan.src.locate(stmt), exc.hint) from None
    return items


def _check_covered(plan: Plan, stmt, prim: Prim) -> None:
    """Refuse, rather than give a zero gradient, an operand that carries a
    derivative into a parameter the adjoint template gives none and the
    rule does not declare inert (`np.percentile`'s `q`)."""
    varied = plan.facts.varied_before.get(stmt, frozenset())
    covered = prim.rule.template.writes | frozenset(prim.rule.inert)
    for param, node in prim.binding.items():
        if param in covered:
            continue
        for name in names_of(node):
            if name in varied:
                raise RuleError(
                    f"the adjoint rule of {registry.display_name(prim.key)} gives no gradient "
                    f"to its parameter {param!r}, which carries one here (`{name}`)",
                    plan.src.locate(stmt),
                    hint=f"wrap `{name}` in stop_gradient(...) if no gradient should flow "
                         "through it")


def _no_adjoint(plan: Plan, stmt, prim: Prim) -> NoRuleError:
    what = registry.display_name(prim.key)
    if getattr(prim.key, "__module__", "").startswith(runtime.__name__):
        return NoRuleError(     # (told at the user's function: driver._told_at_the_user)
            f"its code calls rt.{prim.key.__name__}, whose rule is forward mode's only, "
            "in reverse mode", plan.src.locate(stmt),
            hint="use s2s_ad.hvp (forward over reverse), or differentiate this part "
                 "once only")
    return NoRuleError(f"{what} has no adjoint rule, which reverse mode needs (it has "
                       "forward mode's only)", plan.src.locate(stmt),
                       hint=f"register one with @s2s_ad.adjoint({what}), or use "
                            "s2s_ad.jvp")


def call_items(plan: Plan, prim: Prim, call, d_result: str) -> list:
    """`grads = g_bwd(saved, d_result)`, then one contribution per
    varied parameter of the callee."""
    saved, bwd, variant = call
    grads = plan.namer.temp("grads")
    items = [astutil.assign(grads, astutil.call(
        bwd, [astutil.name(saved), astutil.name(d_result)]))]
    for i, param in enumerate(variant):
        value = astutil.subscript(astutil.name(grads), astutil.const(i))
        items.append(templates.Contribution(templates.primal_of(prim.binding[param]),
                                            value))
    return items


def renamed(node, old: str, new: str):
    """A copy of `node` reading `new` where it read `old`."""
    node = astutil.clone(node)
    for sub in traversal.walk(node):
        if isinstance(sub, gast.Name) and sub.id == old:
            sub.id = new
    return node
