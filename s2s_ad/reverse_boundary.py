"""The boundary of an adjoint function (functions of the reverse
transform's `Plan`): the check that the output is a scalar, the seed of its
adjoint, and the returned gradients, each given its argument's type, shape
and dtype.

In "pair" mode (a callee's forward/backward functions) there is no check,
the seed is the backward function's parameter, and the adjoints are
returned raw, one per varied parameter.
"""
from __future__ import annotations

import gast

from . import astutil, scopes
from .ir import Request, Source
from .reverse_plan import Plan, adjoint_name


def seed(plan: Plan, output, req: Request, src: Source) -> list:
    if req.mode == "pair":
        return _pair_seed(plan, output)
    if not isinstance(output, gast.Name):
        return []
    out = []
    checked = _scalar_witness(plan, output.id, req)
    if req.mode != "vjp" and checked is not None:
        out.append(astutil.expr_stmt(astutil.call(
            f"{plan.rt}.check_scalar", [astutil.name(checked), astutil.const(src.name)])))
    if req.mode == "vjp":
        out.append(astutil.expr_stmt(astutil.call(f"{plan.rt}.check_seed", [
            astutil.name(req.seed), astutil.name(output.id), astutil.const(src.name)])))
    if output.id in plan.facts.varied_out:
        seed = astutil.name(req.seed) if req.seed else astutil.const(1.0)
        out.append(astutil.assign(adjoint_name(plan, output.id), seed))
        plan.live.add(output.id)
    return out


def _pair_seed(plan: Plan, output) -> list:
    """The backward half's cotangent parameter: the output's adjoint
    variable itself, or for a returned tuple one item per element."""
    if isinstance(output, gast.Name) and output.id in plan.facts.varied_out:
        plan.seed_param = adjoint_name(plan, output.id)
        plan.live.add(output.id)
        return []
    plan.seed_param = plan.namer.fresh("dresult")
    if not isinstance(output, gast.Tuple):
        return []
    out = []
    for i, elt in enumerate(output.elts):
        if isinstance(elt, gast.Name) and elt.id in plan.facts.varied_out:
            item = astutil.subscript(astutil.name(plan.seed_param), astutil.const(i))
            d = adjoint_name(plan, elt.id)
            value = astutil.binop(astutil.name(d), gast.Add, item) \
                if elt.id in plan.live else item
            out.append(astutil.assign(d, value))
            plan.live.add(elt.id)
    return out


def _scalar_witness(plan: Plan, output: str, req: Request) -> str | None:
    """The variable whose scalar-ness decides the output's: the output
    itself, or a parameter proven to have the output's shape (checking
    it lets the forward sweep drop a primal that only fed the check),
    or None when the output is a literal number."""
    cls = plan.facts.shapes.shape_out.get(output)
    if cls == "scalar":
        return None
    if cls in plan.params and req.mode == "grad":
        return cls
    return output


def capture(plan: Plan, body, output, aux, req: Request):
    """(statements, output, aux): the value and aux the user receives,
    bound before the reverse sweep restores anything.  A returned name
    that the reverse sweep rebinds is copied to a fresh name; when some
    array is restored in place, the copy is a deep one (an alias or a
    container item would see the restore otherwise)."""
    restored = [s for s in scopes.assignments(body) if s in plan.facts.recorded]
    rebound = {s.targets[0].id for s in restored} | {  # reversed loops count again
        s.target.id for s in scopes.statements(body) if isinstance(s, gast.For)}
    in_place = any(plan.prims[s].inplace for s in restored)
    out = []

    def keep(atom, stem):
        if not isinstance(atom, gast.Name) or not (in_place or atom.id in rebound):
            return atom
        kept = plan.namer.fresh(stem)
        value = astutil.call(f"{plan.rt}.keep", [astutil.name(atom.id)]) \
            if in_place else astutil.name(atom.id)
        out.append(astutil.assign(kept, value))
        return astutil.name(kept)
    value = keep(output, "value") if req.mode == "value_and_grad" else output
    if isinstance(aux, gast.Tuple):
        aux = astutil.tuple_(keep(e, "aux") for e in aux.elts)
    elif aux is not None:
        aux = keep(aux, "aux")
    return out, value, aux


def returns(plan: Plan, output, aux, req: Request) -> list:
    if req.mode == "pair":      # raw adjoints, one per varied parameter
        return [astutil.ret(astutil.tuple_(
            astutil.name(adjoint_name(plan, p)) if p in plan.live else
            astutil.call(f"{plan.rt}.zeros_like", [astutil.name(p)])
            for p in req.wrt))]
    # one call gives every gradient its argument's type, shape and dtype
    grads = [astutil.name(adjoint_name(plan, p)) if p in plan.live else astutil.const(0.0)
             for p in req.wrt]
    if req.single:
        result = astutil.call(f"{plan.rt}.like", [
            grads[0], astutil.name(req.wrt[0]), astutil.const(req.wrt[0])])
    else:
        result = astutil.call(f"{plan.rt}.like_each", [
            astutil.tuple_(grads), astutil.tuple_(astutil.name(p) for p in req.wrt),
            astutil.const(tuple(req.wrt))])
    value = astutil.clone(output)
    if aux is not None:
        value = astutil.tuple_([value, astutil.clone(aux)])
    if req.mode == "value_and_grad":
        result = astutil.tuple_([value, result])
    elif aux is not None:
        result = astutil.tuple_([result, astutil.clone(aux)])
    return [astutil.ret(result)]


