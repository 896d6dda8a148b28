"""Forward mode: ANF function -> tangent function (`jvp`).

The generated function takes the primal's parameters and a tangent for each
differentiated one, runs the primal's statements in order and, after each
active assignment, the statements computing its target's tangent (`tx` for
`x`; tangent_rules.py), mirroring the primal's structure: an `if` for an
`if`, a loop for a loop.  Nothing is recorded and nothing runs backward.
It returns the output and its tangent.

Zero is a static fact: only a name that may be varied has a tangent
variable.  An inactive assignment to a name whose tangent may be read
later (`Facts.carriers`: a loop's next round, a join after an `if`) sets it
to zeros.  Tangent code never updates a tangent in place (an in-place
primitive's tangent is a fresh value), so tangents never alias in ways
the primal's values do not: normalization made every effect of an update
through a view or alias an assignment (writebacks.py), and the tangents
follow those assignments one by one.

Modes: "jvp" is the user's (tangents after the parameters, keyword-only
when the function has defaults, `*args` or keyword-only parameters; the
output's tangent given the output's type, shape and dtype); "jvp_pair" is
a callee's, called by other generated code with the tuple of its varied
parameters' tangents first and returning the raw tangent.
"""
from __future__ import annotations

import gast

from . import astutil, runtime, scalar_types, scopes, tangent_rules
from .tangent_rules import zeros_of
from .ir import CALL, CALLEE, DYNAMIC, Adjoint, Facts, Normalized, Prim, Request, Source, names_of
from .optimize_fold import squares
from .param_copies import param_copies
from .reverse_forward import check_mutating_call, inplace_statement
from .reverse_plan import Plan, imported, make_plan, name_reserved, unbound_locals


def tangents(norm: Normalized, src: Source, prims: dict[gast.stmt, Prim], facts: Facts,
             req: Request, output: gast.expr, aux: gast.expr | None) -> Adjoint:
    """The tangent function of `norm` (see the module docstring)."""
    plan = make_plan(norm, src, prims, facts, req)
    params = [tangent_name(plan, p) for p in req.wrt]
    if req.mode == "jvp_pair":
        plan.seed_param = plan.namer.fresh("tangents")
    body = norm.tree.body[:-1]
    copies = [astutil.assign(p, astutil.call(f"{plan.rt}.copy", [astutil.name(p)]))
              for p in param_copies(body, prims, plan.params, norm.shares)]
    # a parameter not differentiated whose tangent a loop's next round may
    # read (`a, b = b, a`): zero at entry, as an inactive assignment's is
    zeros = [_zeros(plan, p) for p in sorted(plan.params - set(req.wrt))
             if p in facts.carriers]
    body = sweep(plan, body)
    # a name that may be unbound where it is read (None at entry; the sweep's
    # checks read some too) may have its tangent read there too (`follow`
    # after a restore reads both): None too
    unbound = unbound_locals(plan, body)
    rest = [astutil.assign(n, astutil.const(None)) for n in unbound] + zeros
    rest += [astutil.assign(plan.adj[n], astutil.const(None)) for n in unbound if n in plan.adj]
    tangent = _output_tangent(plan, output)
    floats = _floats_flag(plan, params, copies + rest + body, [output, tangent])
    ret = _returns(plan, output, aux, tangent, floats)
    fdef = astutil.function_def(plan.name, _arguments(plan, params),
                                copies + _prologue(plan, params, floats) + rest + body + ret)
    name_reserved(plan, fdef)
    scalars = facts.shapes.scalars | {plan.adj[n] for n in facts.shapes.scalars if n in plan.adj}
    temp_tangents = {t: p for p, t in plan.adj.items() if p in norm.namer.temps}
    return Adjoint(fdef, plan.imports, scalars=frozenset(scalars),
                   temp_adjoints=temp_tangents, rt=plan.rt)


def tangent_name(plan: Plan, primal: str) -> str:
    """The tangent variable of `primal` (`tx` for `x`), chosen once."""
    if primal not in plan.adj:
        plan.adj[primal] = plan.namer.fresh("t" + primal)
    return plan.adj[primal]


def _arguments(plan: Plan, params: list) -> gast.arguments:
    args = astutil.clone(plan.norm.tree.args)
    if plan.req.mode == "jvp_pair":         # (tangents, *the primal's parameters)
        args.posonlyargs.insert(0, astutil.param(plan.seed_param))
    elif args.defaults or args.kwonlyargs or args.vararg or args.kwarg:
        args.kwonlyargs.extend(astutil.param(p) for p in params)
        args.kw_defaults.extend([None] * len(params))
    else:
        args.args.extend(astutil.param(p) for p in params)
    return args


def _prologue(plan: Plan, params: list, floats: str | None) -> list:
    """The tangents of the parameters: unpacked from the callee's tuple, or
    checked against their primals (structure, shape, real dtype); with a
    `floats` flag, only unless all of them and their primals are floats."""
    if plan.req.mode == "jvp_pair":
        if not params:
            return []
        target = astutil.tuple_([astutil.name(p, store=True) for p in params], store=True)
        return [astutil.assign(target, astutil.name(plan.seed_param))]
    checks = [astutil.assign(t, astutil.call(f"{plan.rt}.check_tangent", [
        astutil.name(t), astutil.name(p), astutil.const(p)]))
        for p, t in zip(plan.req.wrt, params)]
    if floats is None:
        return checks
    types = [astutil.call(astutil.builtin("type"), [astutil.name(n)])
             for p, t in zip(plan.req.wrt, params) for n in (p, t)]
    return [astutil.assign(floats, astutil.chain(types + [astutil.builtin("float")], gast.Is)),
            astutil.if_(astutil.not_(astutil.name(floats)), checks)]


def _floats_flag(plan: Plan, params: list, stmts: list, values: list) -> str | None:
    """The name of a flag saying that the differentiated arguments and their
    tangents are Python floats, where the code then computes a float output
    and a float tangent (scalar_types.py): the boundary's helpers are needed
    only when the flag is false.  None where that does not hold."""
    floats = set(plan.req.wrt) | set(params)
    if plan.req.mode != "jvp" or not params or \
            not scalar_types.float_closed(stmts, floats, values, _resolver(plan)):
        return None
    return plan.namer.fresh("floats")


def _resolver(plan: Plan):
    """`resolve(call)`: the object a generated call calls, or None."""
    def resolve(call):
        path = astutil.dotted_name(call.func)
        if path is None:
            return None
        head, *rest = path.split(".")
        if head not in plan.imports:
            found = plan.src.resolve(call.func, plan.norm.locals)
            return found if callable(found) else None
        obj = plan.imports[head]
        for attr in rest:
            obj = getattr(obj, attr, None)
        return obj
    return resolve


def sweep(plan: Plan, body: list, enclosing=None) -> list:
    """`body` with its tangent statements: those of one user statement, with
    its primal statements, in a `# jvp of:` block (none again inside the
    `if` of an update's write-back, which comes from the same statement:
    `enclosing`)."""
    out, last_origin = [], enclosing
    pending = list(reversed(body))
    while pending:
        stmt = pending.pop()
        origin = plan.norm.origin.get(stmt, stmt)
        code, has_tangent = _statement(plan, stmt, origin)
        if pending and _pops(plan, stmt, pending[-1]):
            code, has_tangent = _popped(plan, stmt, code, has_tangent, pending.pop())
        if origin is last_origin and (out and isinstance(out[-1], astutil.Block)
                                      or origin is enclosing):
            (out[-1].body if out and isinstance(out[-1], astutil.Block) else out).extend(code)
        elif has_tangent:
            out.append(astutil.block("jvp of: " + _header(origin), code))
            last_origin = origin
        else:
            out.extend(code)
            last_origin = None
    return out


def _statement(plan: Plan, stmt, origin) -> tuple[list, bool]:
    """(statements, whether they compute a tangent) for one ANF statement;
    a compound statement is its own, its bodies swept."""
    if isinstance(stmt, gast.Assign):
        code, has_tangent = _assign(plan, stmt)
        return check_mutating_call(plan, stmt) + code, has_tangent
    if isinstance(stmt, gast.If):
        return [astutil.if_(astutil.clone(stmt.test), sweep(plan, stmt.body, origin) or
                            [astutil.pass_()], sweep(plan, stmt.orelse, origin))], False
    if isinstance(stmt, gast.For):
        loop = astutil.for_(astutil.clone(stmt.target), astutil.clone(stmt.iter),
                            sweep(plan, stmt.body, origin) or [astutil.pass_()])
        return [gast.copy_location(loop, stmt)], False
    if isinstance(stmt, gast.While):
        loop = astutil.while_(astutil.clone(stmt.test),
                              sweep(plan, stmt.body, origin) or [astutil.pass_()])
        return [gast.copy_location(loop, stmt)], False
    return check_mutating_call(plan, stmt) + [astutil.clone(stmt)], False


def _assign(plan: Plan, stmt: gast.Assign) -> tuple[list, bool]:
    """The primal statement and its tangent's, primal first.  A tangent
    reading an operand the statement overwrites (`x = f(x)`, an in-place
    update) comes first; where it reads the result too, it comes after,
    reading that operand from a copy taken before."""
    prim = plan.prims[stmt]
    target = stmt.targets[0].id
    varied = plan.facts.varied_before.get(stmt, frozenset())
    if stmt not in plan.facts.active:       # a carrier's tangent may be read later
        if target in plan.facts.carriers:
            return _primal(stmt, prim) + [_zeros(plan, target)], True
        return _primal(stmt, prim), False
    if prim.kind in (CALL, DYNAMIC) and not prim.inplace:
        return _call(plan, stmt, prim, varied), True
    tangent = tangent_name(plan, target)

    def code(binding=None, of=lambda node: tangent_of(plan, node, varied)):
        stmts = tangent_rules.tangent(plan, stmt, prim, tangent, of, binding)
        squares(stmts)
        return stmts
    overwrites = prim.inplace or target in {
        n for node in prim.binding.values() for n in names_of(node)}
    if not overwrites:
        return _primal(stmt, prim) + code(), True
    if not tangent_rules.reads_result(plan, stmt, prim):
        return code() + _primal(stmt, prim), True
    old = plan.namer.fresh(target + "_old")
    value = astutil.call(f"{plan.rt}.snapshot", [astutil.name(target)]) if prim.inplace \
        else astutil.name(target)
    renamed = {p: _renamed(node, target, old) for p, node in prim.binding.items()}
    after = code(renamed, lambda node: tangent_of(plan, node, varied, {old: target}))
    return [astutil.assign(old, value)] + _primal(stmt, prim) + after, True


def _pops(plan: Plan, read, update) -> bool:
    """Whether `read`, `update` are `v = items[i]`, `items = rt.pop(items, i)`:
    the two statements `v = items.pop(i)` normalizes to."""
    prim = plan.prims.get(update)
    return prim is not None and prim.key is runtime.pop and prim.inplace and \
        isinstance(read, gast.Assign) and isinstance(read.value, gast.Subscript) and \
        isinstance(read.value.value, gast.Name) and \
        read.value.value.id == update.targets[0].id and \
        astutil.unparse(read.value.slice) == astutil.unparse(update.value.args[1])


def _popped(plan: Plan, read, code: list, has_tangent: bool, update) -> tuple[list, bool]:
    """`read` (`v = items[i]`) with its tangent's (`code`), then `update`,
    the pop, with its tangent's: the pop fused into the read
    (`v = items.pop(i)`) where no tangent statement between them mentions
    `items` (tangents never share a primal's list)."""
    more, more_tangent = _statement(plan, update, plan.norm.origin.get(update, update))
    items, fused = update.targets[0].id, has_tangent or more_tangent
    first, pop, between = code[0] if code else None, more[-1], code[1:] + more[:-1]
    if not (scopes.is_simple_assign(first) and first.targets[0].id == read.targets[0].id
            and astutil.unparse(first.value) == astutil.unparse(read.value)
            and _is_pop_of(pop, items) and read.targets[0].id != items) or \
            any(items in scopes.all_names(s) for s in between):
        return code + more, fused
    first.value = pop.value
    return [first] + between, fused


def _is_pop_of(stmt, items: str) -> bool:
    """Whether `stmt` is the statement `items.pop(...)`."""
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
        astutil.dotted_name(stmt.value.func) == items + ".pop"


def _renamed(node, name: str, new: str):
    """`node` with the loads of `name` reading `new`."""
    return astutil.clone(
        node, lambda n: astutil.name(new) if isinstance(n, gast.Name) and n.id == name
        and isinstance(n.ctx, gast.Load) else None)


def _primal(stmt, prim: Prim) -> list:
    """The primal statement as the forward sweep prints it."""
    if prim.is_sync:                    # done by the update through the view
        return []
    if prim.inplace:
        return [inplace_statement(stmt, prim)]
    return [astutil.clone(stmt)]


def _zeros(plan: Plan, primal: str) -> gast.stmt:
    return astutil.assign(tangent_name(plan, primal), astutil.call(
        f"{plan.rt}.zero_tangent", [astutil.name(primal)]))


def tangent_of(plan: Plan, node, varied, same=None) -> gast.expr | None:
    """The tangent of a bound operand where the names in `varied` may be
    varied: its tangent variable, None for a static zero (a name not
    varied, a constant), or for a tuple or list display the display of
    its items' tangents (zeros where static, like the item as written).
    `same` maps a copy's name to the name whose tangent it has (`x_old`
    of `x = f(x)`: its zeros are like the old value)."""
    if isinstance(node, gast.Name):
        name = (same or {}).get(node.id, node.id)
        return astutil.name(tangent_name(plan, name)) if name in varied else None
    if isinstance(node, (gast.Tuple, gast.List)):
        items = [tangent_of(plan, e, varied, same) for e in node.elts]
        if all(item is None for item in items):
            return None
        filled = [item if item is not None else zeros_of(plan, e)
                  for item, e in zip(items, node.elts)]
        return astutil.tuple_(filled) if isinstance(node, gast.Tuple) else astutil.list_(filled)
    return None


def _call(plan: Plan, stmt, prim: Prim, varied) -> list:
    """`y, ty = g_jvp((ta, ...), a, ...)` for an active call of a helper,
    or through a call site where it is found when the call runs (a function
    value: `y, ty = f_call.tangent((ta, ...), f, a, ...)`; dispatch.py)."""
    call = astutil.clone(stmt.value)
    if prim.kind == DYNAMIC:
        if set(scopes.load_names(call.func)) & varied and CALLEE not in prim.binding:
            raise prim.problem          # a method of a value carrying a gradient
        call.args.insert(0, call.func)
    variant = prim.variant(varied)
    ref = plan.req.pairs(None if prim.kind == DYNAMIC else prim.key, variant,
                         plan.src.locate(stmt))
    if ref.site is not None:
        stem = _stem(call.args[0]) if prim.kind == DYNAMIC else prim.key.__name__
        call.func = astutil.attribute(astutil.name(imported(plan, stem + "_call", ref.site)),
                                      "tangent")
    elif ref.objects is None:           # recursion: this function's own def
        call.func = astutil.name(plan.name)
    else:
        call.func = astutil.name(imported(plan, ref.fwd, ref.objects[0]))
    tangents = [_argument_tangent(plan, prim.binding[p], varied) for p in variant]
    call.args.insert(0, astutil.tuple_(tangents))
    target = stmt.targets[0].id
    pair = astutil.tuple_([astutil.name(target, store=True),
                           astutil.name(tangent_name(plan, target), store=True)], store=True)
    return [astutil.assign(pair, call)]


def _argument_tangent(plan: Plan, node, varied) -> gast.expr:
    found = tangent_of(plan, node, varied)
    return found if found is not None else zeros_of(plan, node)


def _stem(func) -> str:
    """A name for a call site, from what it calls: `f`, `act` for `self.act`."""
    path = astutil.dotted_name(func)
    return path.rsplit(".", 1)[-1] if path else "fn"


def _returns(plan: Plan, output, aux, tangent, floats: str | None) -> list:
    """`return (output, its tangent[, aux])`: the tangent given the output's
    type, shape and dtype, unless the `floats` flag says both are floats."""
    if plan.req.mode == "jvp_pair":
        return [astutil.ret(astutil.tuple_([astutil.clone(output), tangent]))]
    typed = astutil.call(f"{plan.rt}.tangent_like", [
        tangent, astutil.clone(output), astutil.const(plan.src.name)])
    tangent = typed if floats is None else \
        astutil.if_exp(astutil.name(floats), astutil.clone(tangent), typed)
    items = [astutil.clone(output), tangent] + ([astutil.clone(aux)] if aux is not None else [])
    return [astutil.ret(astutil.tuple_(items))]


def _output_tangent(plan: Plan, output) -> gast.expr:
    tangent = tangent_of(plan, output, plan.facts.varied_out)
    return tangent if tangent is not None else zeros_of(plan, output)


def _header(stmt) -> str:
    """One line of user source for a `# jvp of:` comment."""
    text = astutil.unparse(stmt)
    return text.splitlines()[0] if isinstance(stmt, (gast.If, gast.For, gast.While,
                                                     gast.With, gast.FunctionDef)) else text

