"""Lower contributions: the compact-adjoint decisions, applied to the
reverse sweep as a pass of their own.

The reverse transform (reverse.py) writes each contribution as the textbook
does, `d_x = v` for the first and `d_x = d_x + v` for later ones, with `v`
as the rule gives it: an elementwise rule's contribution has the result's
shape, a spread one is `rt.spread(x, g)`.  It records where it wrote
them (`Adjoint.sites`) and where a rule starts (`Adjoint.rule_starts`),
and decides nothing about shapes.  This pass reads the shape facts
(`ShapeFacts`, shapes.py) and rewrites only those statements:

- *unbroadcast*: an elementwise rule's contribution to an operand of
  another shape is summed down to it, `rt.unbroadcast(v, x)`;
- *compact*: a spread `rt.spread(x, g)` stays `g`, broadcast where it
  is read (`rt.unbroadcast` and `rt.expand` accept it), unless `x` is
  bound in a loop;
- *expand*: a rule that reads `d_z` whole gets `d_z = rt.expand(d_z, z)`
  before its code, and a contribution that must be full-size is expanded.

Invariant: statements other than the recorded ones are not touched, and a
function whose shapes need none of this comes out as the reverse
transform wrote it.
"""
from __future__ import annotations

import gast

from . import astutil, templates
from .ir import Adjoint, ShapeFacts, Site


def lower(adj: Adjoint, shapes: ShapeFacts, rt: str) -> None:
    """Rewrite `adj.tree`'s recorded contributions (in place)."""
    _lower_body(adj.tree.body, adj, shapes, rt)


def _lower_body(body: list, adj: Adjoint, shapes: ShapeFacts, rt: str) -> None:
    out = []
    for stmt in body:
        start = adj.rule_starts.get(stmt)
        if start is not None and start[0] in shapes.expand:
            rule_stmt, target, d_result = start
            out.append(astutil.assign(d_result, astutil.call(f"{rt}.expand", [
                astutil.name(d_result), astutil.name(shapes.witness(rule_stmt, target))])))
        site = adj.sites.get(stmt)
        if site is not None:
            _lower_site(stmt, site, shapes, rt)
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                _lower_body(inner, adj, shapes, rt)
        out.append(stmt)
    body[:] = out


def _lower_site(assign: gast.Assign, site: Site, shapes: ShapeFacts, rt: str) -> None:
    """`d = v` or `d = d + v`, with `v` lowered (see the module docstring)."""
    if site.accumulate:
        assign.value.right = _lowered(assign.value.right, site, shapes, rt)
    else:
        assign.value = _lowered(assign.value, site, shapes, rt)


def _lowered(value, site: Site, shapes: ShapeFacts, rt: str):
    stmt, primal, rule = site.stmt, site.primal, site.rule
    full = primal in shapes.needs_full.get(stmt, ())
    same_shape = primal in shapes.same_shape.get(stmt, ())
    if shapes.spread and rule and templates.is_spread(value, site.value_name) \
            and primal not in shapes.in_loops:
        value = value.args[1]                       # left compact
    result = stmt.targets[0].id
    if full and (not rule or same_shape):
        return astutil.call(f"{rt}.expand", [value, astutil.name(shapes.witness(stmt, result))])
    if not (rule and site.elementwise and not same_shape):
        return value
    negated = isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub)
    inner = value.operand if negated else value     # sum first, negate less
    like = shapes.witness(stmt, primal) if site.value_name == primal else site.value_name
    args = [inner, astutil.name(like)]
    if full:
        args.append(astutil.name(shapes.witness(stmt, result)))
    value = astutil.call(f"{rt}.unbroadcast", args)
    return astutil.neg(value) if negated else value

