"""The reverse transform's state (`Plan`), and how the adjoint function
names what it uses.

A `Plan` is made once per function (`make_plan`) and threaded through the
functions of the forward sweep (reverse_forward.py), the boundary
(reverse_boundary.py) and the reverse sweep (reverse.py); it is the only
state they share.

Everything generated code reads that the user's code did not define is an
*import*: a value passed into the derived function's closure by code
generation (`rt`, `np`, `math`, the builtins, lifted nested functions, the
callees' adjoint pairs).  An import keeps its usual name (`np`, `range`)
when that name means the same object to the user's function, or when the
function cannot see the name at all; otherwise it gets a fresh alias
(`range_1` next to a parameter called `range`).  Because imports live in the
closure, a module global rebound later cannot capture them either.

The adjoint function's own name (`df`) and, for a callee, its pair's names
(`f_fwd`, `f_bwd`) and the backward function's parameter (`saved`) come from
the same `Namer`, so none of them captures a name the callee reads.
"""
from __future__ import annotations

import builtins
import operator
from dataclasses import dataclass, field

import gast
import numpy

from . import astutil, runtime, scopes, traversal
from .ir import NUMPY, OPERATORS, RUNTIME, Facts, Normalized, Request, Source
from .naming import BUILTINS, Namer

_RESERVED = {RUNTIME: ("rt", runtime), NUMPY: ("np", numpy),
             OPERATORS: ("operator", operator)}


@dataclass
class Plan:
    """What the reverse transform of one function knows and decides."""

    norm: Normalized
    src: Source
    prims: dict                     # ANF statement -> its Prim
    facts: Facts
    req: Request
    namer: Namer
    params: set                     # the function's parameter names
    imports: dict = field(default_factory=dict)     # identifier -> object (`imported`)
    name: str = ""                  # the adjoint function's name
    pair_names: tuple | None = None     # pair mode: (fwd, bwd, saved)
    rt: str = "rt"                  # the identifier of s2s_ad's runtime
    adj: dict = field(default_factory=dict)         # primal name -> adjoint variable
    live: set = field(default_factory=set)          # primal names with a nonzero adjoint
    seed_param: str | None = None   # the output's seed (boundary)
    calls: dict = field(default_factory=dict)       # stmt -> (saved name, bwd name, variant)
    saves: dict = field(default_factory=dict)       # stmt -> its save variable (forward)
    counters: dict = field(default_factory=dict)    # loop -> its trip counter (forward)
    unbound: set = field(default_factory=set)       # bound to None at entry (unbound_locals)
    sites: dict = field(default_factory=dict)       # contribution -> its Site (lower.py)
    rule_starts: dict = field(default_factory=dict)     # first stmt of a rule's code ->
    #                                                     (stmt, target, its adjoint)
    tape: str | None = None         # the tape's name, once a value is pushed
    depth: int = 0                  # loop nesting while generating
    branches: int = 0               # `if` nesting while generating the forward sweep
    enclosing: object = None        # origin of the `if` being reversed


def unbound_locals(plan: Plan, body: list) -> list[str]:
    """The names bound to None at the derived function's entry, as they may
    be read where they are not bound yet: those of `plan.unbound` that its
    `body` binds (its locals, not a comprehension's), never a global,
    closure variable or builtin the analyses related to them (a local
    `seed = None` would hide the module's `seed` from the whole function)."""
    if not plan.unbound:
        return []
    return sorted(plan.unbound & scopes.scoped_names(body)[0])


def make_plan(norm: Normalized, src: Source, prims: dict, facts: Facts, req: Request) -> Plan:
    """The plan of `norm`'s adjoint, its own names and `rt` chosen first."""
    args = norm.tree.args
    params = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs
              + ([args.vararg] if args.vararg else [])}
    plan = Plan(norm, src, prims, facts, req, norm.namer, params, unbound=set(norm.unbound))
    plan.name, plan.pair_names = own_names(plan, req.mode)
    plan.rt = imported(plan, "rt", runtime)
    for name, func in src.lifted.items():      # nested functions, lifted
        imported(plan, name, func)
    return plan


def adjoint_name(plan: Plan, primal: str) -> str:
    if primal not in plan.adj:
        plan.adj[primal] = plan.namer.fresh("d" + primal)
    return plan.adj[primal]


def imported(plan: Plan, preferred: str, obj) -> str:
    """The identifier under which the derived function reads `obj`."""
    for ident, known in plan.imports.items():
        if known is obj:
            plan.namer.reserve(ident)   # again: a loop's fixpoint may have
            return ident                # restored the namer since
    ident = preferred
    user = plan.src.resolve(astutil.name(preferred), plan.norm.locals)
    if ident in plan.imports or plan.namer.taken(ident) and user is not obj:
        ident = plan.namer.fresh(preferred)
    plan.namer.reserve(ident)
    plan.imports[ident] = obj
    return ident


def own_names(plan: Plan, mode: str) -> tuple:
    """(adjoint function name, pair names): the pair names are None
    outside "pair" mode, else (forward name, backward name, the backward
    function's saved-state parameter).  Chosen before any other name,
    so they read as the user's function's name plus a suffix."""
    stem = plan.src.tree.name if plan.src.tree.name != "<lambda>" else "lambda"
    if mode in ("jvp", "jvp_pair"):
        return plan.namer.fresh(stem + "_jvp"), None
    name = plan.namer.fresh("d" + stem)
    if mode != "pair":
        return name, None
    return name, (plan.namer.fresh(stem + "_fwd"), plan.namer.fresh(stem + "_bwd"),
                  plan.namer.fresh("saved"))


def name_reserved(plan: Plan, fdef) -> None:
    """Code that normalization and the sweeps wrote refers to s2s_ad's own
    modules and to builtins by reserved names (`__s2s_ad_np__.sort`,
    `__s2s_ad_builtins__.range`); print them as imports.  Only a `Name`
    holding a reserved name is rewritten (or is the base of an `Attribute`
    that is): without one, the rewrite, a callback per node, is skipped."""
    if not any(n.id in _RESERVED or n.id == BUILTINS for n in traversal.names(fdef)):
        return

    def printed(node):
        kind = type(node)
        if kind is gast.Name and node.id in _RESERVED:
            node.id = imported(plan, *_RESERVED[node.id])
        elif kind is gast.Attribute:
            ident = astutil.builtin_name(node)
            if ident is not None:
                return astutil.name(imported(plan, ident, getattr(builtins, ident)))
        return node
    traversal.rewrite_children(fdef, printed)


