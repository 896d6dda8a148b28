"""The forward sweep of an adjoint function (functions of the reverse
transform's `Plan`, reverse_plan.py).

The primal's statements, in order, plus what the reverse sweep needs:
- before an assignment in `Facts.recorded`, its target's old value is saved
  (straight-line code: a local `x_old`; inside loops: pushed on the tape),
  copied first when the assignment updates in place;
- an active call of a user function calls its generated forward function
  and keeps the saved state it returns (taped inside loops);
- loops whose trip count the header does not give get a counter;
- in-place primitives are printed as the statements the user wrote.
"""
from __future__ import annotations

import inspect

import gast

from . import astutil, runtime, scopes, traversal
from .errors import UnsupportedSyntaxError
from .ir import CALL, CALLEE, DYNAMIC, INPLACE, MUTATING_METHODS, NUMPY, Prim, names_of
from .reverse_plan import Plan, imported


def forward(plan: Plan, body: list) -> list:
    out = []
    for stmt in body:
        if isinstance(stmt, gast.Assign):
            out.extend(check_mutating_call(plan, stmt))
            out.extend(_record(plan, stmt))
            out.extend(_forward_assign(plan, stmt))
        elif isinstance(stmt, gast.If):
            plan.branches += 1
            body, orelse = forward(plan, stmt.body), forward(plan, stmt.orelse)
            plan.branches -= 1
            if body or orelse:
                out.append(astutil.if_(astutil.clone(stmt.test), body or [astutil.pass_()],
                                       orelse))
        elif isinstance(stmt, (gast.For, gast.While)):
            out.extend(_forward_loop(plan, stmt))
        else:
            out.extend(check_mutating_call(plan, stmt))
            out.append(astutil.clone(stmt))
    return out


def check_mutating_call(plan: Plan, stmt) -> list:
    """A helper that updates an argument in place.  Its adjoint pair (or
    tangent function, in forward mode) works on a copy, so the caller must
    not see the argument (a fresh temporary is fine); a call that is not
    differentiated must not change a varied one: its derivative would miss
    the update; nor one the reverse sweep reads from before the call
    (`Facts.clobbered`).  Where it surely would, a located error; where
    it only augments the parameter (`p += v`, in place only for an
    array, list or dict), a check before the call that raises one then."""
    prim = plan.prims.get(stmt)
    varied = plan.facts.varied_before.get(stmt, frozenset())
    if prim is not None and prim.writes & varied:
        name = sorted(prim.writes & varied)[0]
        raise UnsupportedSyntaxError(
            f"a function called here may update `{name}` in place, inside an "
            "expression s2s_ad does not differentiate (`stop_gradient(...)` or a "
            "call declared non-differentiable); its gradient would miss the update",
            plan.src.locate(stmt), hint=f"pass a copy (`{name}.copy()`)")
    if prim is not None and prim.writes & plan.facts.clobbered.get(stmt, set()):
        name = sorted(prim.writes & plan.facts.clobbered[stmt])[0]
        raise UnsupportedSyntaxError(f"a function called here may update `{name}` in "
                                     f"place, {_CLOBBERED.format(name)}",
                                     plan.src.locate(stmt), hint=f"pass a copy (`{name}.copy()`)")
    if prim is not None and prim.kind == DYNAMIC and stmt not in plan.facts.active \
            and not prim.pure:
        _check_dynamic_call(plan, stmt, prim, varied)
    if prim is None or prim.kind != CALL:
        return []
    return _mutated_arguments(plan, stmt, prim, varied)


def _mutated_arguments(plan: Plan, stmt, prim, varied) -> list:
    """For a call of a user function that updates an argument in place:
    a located error if it surely changes a name the caller may read, or
    the checks (`rt.copy`) before an augmenting call that raise one."""
    # an undifferentiated call given a varied argument may write it into
    # another one, which a later read would need the gradient of
    passed = {n for node in prim.binding.values() for n in names_of(node)}
    seen = plan.norm.locals if stmt in plan.facts.active or passed & varied \
        else varied
    clobbered = plan.facts.clobbered.get(stmt, frozenset())   # the gradient reads them
    seen = set(seen) | clobbered                               # from before the call
    checks = []
    related = plan.norm.passes.get(stmt, {})    # e.g. a temporary bound to `x`
    for param in sorted(prim.mutates | prim.augments):
        names = sorted({m for n in names_of(prim.binding.get(param))
                        for m in related.get(n, {n}) if m in seen})
        if not names:
            continue
        loc = plan.src.locate(stmt)
        if param in prim.mutates:
            raise UnsupportedSyntaxError(_mutation_message(prim, param, names, clobbered),
                                         loc, hint=_MUTATION_HINT.format(prim.key.__name__))
        where = (prim.key.__qualname__, param, loc.filename, loc.line, loc.col,
                 loc.source_line)
        # a name related to the argument may be bound on another path only
        plan.unbound.update(set(names) - set(names_of(prim.binding.get(param))) -
                            plan.params)
        checks += [astutil.expr_stmt(astutil.call(f"{plan.rt}.copy", [
            astutil.name(n), astutil.const(where)])) for n in names]
    return checks


def _check_dynamic_call(plan: Plan, stmt, prim, varied) -> None:
    """A call resolved only at run time whose result is not
    differentiated (an active call's pair checks itself) must not be
    able to update a value that carries a gradient: an argument, or the
    object whose method it is, by a method that updates its receiver
    (`xs.reverse()`); nor an argument the reverse sweep reads from before
    the call (`Facts.clobbered`)."""
    func = stmt.value.func
    receiver = func.value.id if isinstance(func, gast.Attribute) and \
        isinstance(func.value, gast.Name) else None
    if receiver in varied and func.attr in MUTATING_METHODS:
        what, name = (f"`{receiver}`", receiver) if receiver in plan.src.user_names \
            else ("the value whose method it is", "xs")
        raise UnsupportedSyntaxError(
            f"the method `{func.attr}` may update {what} in place, which carries "
            "a gradient, and s2s_ad has no derivative for it", plan.src.locate(stmt),
            hint=f"bind a new value instead (e.g. `{name} = {name}[::-1]`, "
                 f"`{name} = sorted({name})`, `{name} = []`)")
    if {n for node in prim.binding.values() for n in names_of(node)} & varied:
        raise UnsupportedSyntaxError(
            f"`{astutil.unparse(func)}` is a function value whose result is "
            "not differentiated, called with an argument that carries a gradient; "
            "s2s_ad cannot see whether it updates that argument in place",
            plan.src.locate(stmt), hint="pass a copy, or wrap the call in "
            "stop_gradient(...)")
    clobbered = sorted(plan.facts.clobbered.get(stmt, ()))
    if clobbered:
        what = f"`{astutil.unparse(func)}`" if set(scopes.load_names(func)) <= \
            plan.src.user_names else "the function called here"
        raise UnsupportedSyntaxError(
            f"{what} is a function value, called with `{clobbered[0]}`; "
            "s2s_ad cannot see whether it updates it in place, "
            + _CLOBBERED.format(clobbered[0]), plan.src.locate(stmt),
            hint=f"pass a copy (`{clobbered[0]}.copy()`)")


def _forward_assign(plan: Plan, stmt) -> list:
    """The statement itself, or for an active call of a user function,
    `y, saved = g_fwd(...)` (and `saved` taped inside loops)."""
    prim = plan.prims[stmt]
    if prim.is_sync:                    # done by the update through the view
        return []
    if prim.inplace:
        return [inplace_statement(stmt, prim)]
    if not calls_pair(prim, stmt, plan.facts):
        return [astutil.clone(stmt)]
    varied = plan.facts.varied_before[stmt]
    variant = prim.variant(varied)
    call = astutil.clone(stmt.value)
    if prim.kind == DYNAMIC:
        if set(scopes.load_names(call.func)) & varied and CALLEE not in prim.binding:
            raise prim.problem          # a method of a value carrying a gradient
        call.args.insert(0, call.func)
    ref = plan.req.pairs(None if prim.kind == DYNAMIC else prim.key, variant,
                         plan.src.locate(stmt))
    stem = _stem(call.args[0]) if prim.kind == DYNAMIC else prim.key.__name__
    if ref.site is not None:        # found when the call runs (dispatch.py)
        fwd = imported(plan, stem + "_call", ref.site)
        bwd = fwd + ".backward"
    elif ref.objects is None:       # recursion: this pair's own defs
        fwd, bwd = plan.pair_names[:2]
    else:
        fwd, bwd = imported(plan, ref.fwd, ref.objects[0]), imported(plan, ref.bwd, ref.objects[1])
    saved = plan.namer.fresh(stem + "_saved")
    plan.calls[stmt] = (saved, bwd, variant)
    call.func = astutil.name(fwd)
    target = astutil.tuple_([astutil.name(stmt.targets[0].id, store=True),
                             astutil.name(saved, store=True)], store=True)
    out = [astutil.assign(target, call)]
    if plan.depth:
        out.append(push(plan, saved))
    return out


def push(plan: Plan, value) -> gast.stmt:
    value = astutil.name(value) if isinstance(value, str) else value
    return astutil.expr_stmt(astutil.call(
        astutil.attribute(astutil.name(tape_name(plan)), "append"), [value]))


def _record(plan: Plan, stmt) -> list:
    if stmt not in plan.facts.recorded:
        return []
    target = stmt.targets[0].id
    prim = plan.prims[stmt]
    value = astutil.name(target)
    if prim.inplace:        # the old value is destroyed in place: copy it
        value = astutil.call(f"{plan.rt}.snapshot", [value] + index_of(prim))
    elif stmt in plan.facts.shape_recorded:     # only its shape is read again
        value = astutil.call(f"{plan.rt}.shape_only", [value])
    if target not in plan.params and (plan.depth or plan.branches):
        plan.unbound.add(target)        # may be saved before it is first bound
    if plan.depth == 0:
        save = plan.namer.fresh(target + "_old")
        plan.saves[stmt] = save
        return [astutil.assign(save, value)]
    return [push(plan, value)]


def tape_name(plan: Plan) -> str:
    if plan.tape is None:
        plan.tape = plan.namer.fresh("tape")
    return plan.tape


def _forward_loop(plan: Plan, loop) -> list:
    plan.depth += 1
    body = forward(plan, loop.body)
    plan.depth -= 1
    pre = []
    if _needs_counter(plan, loop):
        counter = plan.namer.fresh("trips")
        plan.counters[loop] = counter
        pre.append(astutil.assign(counter, astutil.const(0)))
        body.insert(0, astutil.assign(counter, astutil.binop(
            astutil.name(counter), gast.Add, astutil.const(1))))
    if isinstance(loop, gast.For):
        new = astutil.for_(loop.target.id, astutil.clone(loop.iter), body)
    else:
        new = astutil.while_(astutil.clone(loop.test), body)
    post = []
    if loop in plan.counters and plan.depth:
        post.append(push(plan, plan.counters[loop]))   # one count per outer trip
    return pre + [new] + post


def _needs_counter(plan: Plan, loop) -> bool:
    if not loop_reversed(plan, loop):
        return False
    return isinstance(loop, gast.While) or _has_break(loop.body)


def loop_reversed(plan: Plan, loop) -> bool:
    """A loop is reversed iff its body has active or recorded statements,
    or statements that kill an adjoint (`v = 0.5` zeroes `dv`)."""
    facts = plan.facts
    for stmt in traversal.walk(loop):
        if stmt in facts.active or stmt in facts.recorded or stmt in facts.kills:
            return True
    return False


_SLOTTED = (runtime.setitem, *runtime.SCATTERS.values())      # update only x[index]
_UFUNC_OF = {update: ufunc.__name__ for ufunc, update in runtime.SCATTERS.items()}


def index_of(prim: Prim) -> list:
    """The index operand of a `setitem` or `scatter_*`, as a list (empty for
    `a += b`): the slots the update overwrites, saved and restored alone."""
    index = prim.binding.get("index")
    if prim.key is runtime.append:      # the new slot: restoring truncates the list
        return [astutil.call(astutil.builtin("slice"), [
            astutil.clone(prim.binding["position"]), astutil.const(None)])]
    return [astutil.clone(index)] if index is not None and prim.key in _SLOTTED else []


def inplace_statement(stmt, prim: Prim) -> gast.stmt:
    """An in-place primitive printed as the statement the user wrote:
    `x[i] = v`, `a += b`, `np.add.at(a, i, v)` or `items.append(v)`."""
    target = stmt.targets[0].id
    args = stmt.value.args
    if prim.key is runtime.mutated:     # the user's own call (`np.put(x, i, v)`)
        return astutil.expr_stmt(astutil.clone(args[1]))
    if prim.key in _UFUNC_OF:
        return astutil.expr_stmt(astutil.call(
            f"{NUMPY}.{_UFUNC_OF[prim.key]}.at",
            [astutil.name(target)] + [astutil.clone(a) for a in args[1:]]))
    if prim.key is runtime.pop:
        return astutil.expr_stmt(astutil.call(
            astutil.attribute(astutil.name(target), "pop"), [astutil.clone(args[1])]))
    if prim.key is runtime.append:
        return astutil.expr_stmt(astutil.call(
            astutil.attribute(astutil.name(target), "append"), [astutil.clone(args[1])]))
    if prim.key is runtime.setitem:
        slot = astutil.subscript(astutil.name(target), astutil.index_syntax(args[1]),
                                 store=True)
        return astutil.assign(slot, astutil.clone(args[2]))
    return astutil.aug_assign(target, INPLACE[prim.key], astutil.clone(args[1]))


def calls_pair(prim: Prim, stmt, facts) -> bool:
    """Whether the forward sweep calls an adjoint pair for `stmt` (a
    callee's, or one found at run time for a function value)."""
    return prim.kind in (CALL, DYNAMIC) and stmt in facts.active and not prim.is_sync \
        and not prim.inplace


def pair_requests(body: list, prims: dict, facts, src) -> list:
    """(callee, varied parameters, statement) for every call of an adjoint
    pair the forward sweep of `body` will make: what must be compiled first
    (a function value's pair is found when the call runs).  A value that
    carries a gradient into a callee's `**kwargs` is refused, located: its
    pair differentiates the parameters it declares."""
    out = []
    for s in scopes.assignments(body):
        prim = prims[s]
        if prim.kind == CALL and calls_pair(prim, s, facts):
            variant = prim.variant(facts.varied_before[s])
            star = _var_keyword(prim.key)
            if star in variant:
                raise UnsupportedSyntaxError(
                    f"a value that carries a gradient is passed to "
                    f"{prim.key.__qualname__}'s **{star}; s2s_ad differentiates the "
                    "parameters a function declares", src.locate(s),
                    hint="declare that parameter by name in the function, or wrap the "
                         "value in stop_gradient(...) if no gradient should flow through it")
            out.append((prim.key, variant, s))
    return out


def _var_keyword(func) -> str | None:
    """The name of `func`'s `**kwargs` parameter, if it has one."""
    code = getattr(func, "__code__", None)
    if code is None or not code.co_flags & inspect.CO_VARKEYWORDS:
        return None
    return code.co_varnames[code.co_argcount + code.co_kwonlyargcount +
                            bool(code.co_flags & inspect.CO_VARARGS)]


def _stem(func) -> str:
    """A name for what a call keeps, from its callee: `f`, `act` for
    `self.act`, `L` for a callable object."""
    path = astutil.dotted_name(func)
    return path.split(".")[-1] if path else "value"


def _has_break(body) -> bool:
    for stmt in body:
        if isinstance(stmt, gast.Break):
            return True
        if isinstance(stmt, gast.If) and (_has_break(stmt.body) or _has_break(stmt.orelse)):
            return True
    return False


_MUTATION_HINT = "return the new value from {} and assign it at the call, or pass a copy"


_CLOBBERED = ("and the gradient reads `{}` as it was before this call (the derivative "
              "of an earlier statement needs it), which s2s_ad does not keep for a "
              "helper's update")


def _mutation_message(prim, param: str, names=(), clobbered=frozenset()) -> str:
    if set(names) <= clobbered:
        return (f"{prim.key.__qualname__} updates its parameter {param} in place, "
                + _CLOBBERED.format(names[0]))
    return (f"{prim.key.__qualname__} updates its parameter {param} in place, which the "
            "caller sees; s2s_ad does not differentiate through a helper that mutates "
            "its caller's array")
