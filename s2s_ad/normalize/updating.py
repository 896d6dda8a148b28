"""Calls of a helper of the user's that updates an array argument in place.

Functions over the normalizer's state `nz` (__init__.py).
`def fill_ghosts(u): u[0] = u[1]; u[-1] = u[-2]`, called as `fill_ghosts(w)`,
changes the caller's `w`.  Such a call is differentiated as a call of the
helper's *updating variant*, made from its source: the same function, run
on a copy of the array, returning the copy with its result,

    def fill_ghosts_updating(u):
        u_updated = u
        u[0] = u[1]
        u[-1] = u[-2]
        return None, u_updated

and the caller writes the new values back, as the helper would have:

    _w1 = rt.updated_copy(w, ...)          # anything but an array: refused
    _fill_ghosts1 = fill_ghosts_updating(_w1)
    w[...] = _fill_ghosts1[1]

an in-place update that the caller's alias analysis follows as any other
(views of `w`, names for it, its old values for the reverse sweep).  The
variant is a function of the user's afterwards: its updates of its
parameter reach only the copy, and it is differentiated through its pair.

A parameter the helper only augments (`v /= n`) is updated in place if
the argument is an array and rebound in the helper if it is a number: the
call tests which when it runs, `if rt.in_place(w):` the variant updating
it, else the helper itself (or the variant updating the others).

Refused at run time, located at the call: an argument that is no array,
and one sharing memory with another argument (the helper would read its
own writes through it).  Left to the usual refusal (reverse_forward.py):
a helper that may return what shares memory with an argument (`return u`:
in Python the caller's array itself; fresh_results.py), one calling
itself, one with a closure or a rule, one augmenting more than one
parameter, an update of a parameter given by `*args`, `**kwargs` or a
default, or of an argument that is not a local.
"""
from __future__ import annotations

import types
import weakref

import gast

from .. import astutil, effects, fresh_results, frontend, scopes, traversal
from ..ir import RUNTIME
from ..rules import registry
from . import aliasing, compound, inplace, lift

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def updating_call(nz, call: gast.Call, callee, user_call) -> gast.expr | None:
    """The result of `call` (in ANF; `user_call` as written) made through the
    updating variant of `callee`, the new values written back; None where
    it is no call of a helper updating a local array it is given.  A
    parameter the helper only augments (`v /= n`) is updated in place if
    it is an array and rebound in the helper otherwise: the call tests
    which (`rt.in_place`), and runs the variant updating it only then."""
    updated, augmented = _updated_arguments(nz, call, callee)
    if augmented is None:
        return _through_variant(nz, call, callee, user_call, updated) if updated else None
    test = _bound(nz, "in_place", astutil.call(f"{RUNTIME}.in_place",
                                                [astutil.name(augmented[1].id)]))
    result = nz.namer.temp(callee.__name__)

    def path(params: list):
        value = _through_variant(nz, call, callee, user_call, params) if params else call
        nz.emit(astutil.assign(result, astutil.clone(value)))
    stand_in = astutil.if_(test, [], [])       # (what the branches rebind is found in them)
    before = compound.enter_compound(nz, stand_in)
    body, orelse = compound.branches(nz, lambda: nz.capture(lambda: path(updated + [augmented])),
                                     lambda: nz.capture(lambda: path(updated)))
    branch = astutil.if_(astutil.clone(test), body, orelse)
    nz.emit(branch)
    compound.leave_compound(nz, stand_in, before, branch)
    return astutil.name(result)


def _through_variant(nz, call: gast.Call, callee, user_call, updated: list) -> gast.expr:
    """The result of `call` through the updating variant of `callee` for
    the (parameter, argument) pairs `updated`, the new values written back."""
    loc = nz.src.locate(user_call)
    where = (loc.filename, loc.line, loc.col, loc.source_line)
    name = callee.__qualname__
    copies = {}
    for param, arg in updated:
        _check_apart(nz, call, arg, (
            f"{name} updates its parameter {param} in place, and another argument "
            "shares memory with it: the helper would read its own writes through it, "
            "which s2s_ad does not follow", "pass a copy of one of them", *where))
        check = astutil.const((f"{name} updates its parameter {param} in place; s2s_ad "
                               "follows that for a NumPy array, and this is none",
                               f"pass an array, or return the new value from {name} "
                               "and assign it at the call", *where))
        copies[arg] = _bound(nz, arg.id, astutil.call(f"{RUNTIME}.updated_copy",
                                                      [astutil.name(arg.id), check]))
    args = [copies.get(a, a) for a in call.args]
    keywords = [(k.arg, copies.get(k.value, k.value)) for k in call.keywords]
    variant = _variant(nz, callee, [p for p, _ in updated])
    out = _bound(nz, callee.__name__, astutil.call(astutil.name(variant), args, keywords))
    result = nz.atom(astutil.subscript(astutil.name(out.id), astutil.const(0)))
    for i, (_, arg) in enumerate(updated, 1):
        new = nz.atom(astutil.subscript(astutil.name(out.id), astutil.const(i)))
        inplace.write_into(nz, astutil.name(arg.id), new)
    return result


def _bound(nz, stem: str, value) -> gast.Name:
    """A temporary bound to `value`, emitted as it is (a call of a variant
    or of the runtime: not normalized again)."""
    temp = nz.namer.temp(stem)
    nz.temps.append(temp)
    nz.emit(astutil.assign(temp, value))
    return astutil.name(temp)


def _updated_arguments(nz, call: gast.Call, callee) -> tuple[list, tuple | None]:
    """(parameter, argument) for each parameter `callee` surely updates in
    place, and the one it only augments (`v /= n`: None if none), where
    each argument is a local name (a temporary too: a view) and one is seen
    (a user's name, or related to one); ([], None) where any is not, where
    it augments several, or `callee` is no plain helper of the user's
    returning new values or nothing (one returning its parameter,
    `np.add.at(out, i, v); return out`, gives its caller the array itself:
    left to the usual refusal)."""
    if not isinstance(callee, types.FunctionType) or callee.__closure__ or \
            callee is nz.src.func or registry.lookup(callee) is not None or \
            registry.is_nondifferentiable(callee) or frontend.is_library(callee) or \
            not fresh_results.returns_fresh(callee, none=True):
        return [], None
    surely, augments = effects.mutated_parameters(callee)
    bound = effects.bind_call(callee, call) if surely or augments else None
    if bound is None or len(augments) > 1:
        return [], None
    out = []
    for param in bound.signature.parameters.values():
        if param.name not in surely | augments:
            continue
        arg = bound.arguments.get(param.name)
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or \
                not isinstance(arg, gast.Name) or not aliasing.is_local(nz, arg.id):
            return [], None
        out.append((param.name, arg))
    seen = [a for _, a in out if a.id in nz.locals or aliasing.related(nz, a.id) - {a.id}]
    if not seen or _calls_itself(callee):
        return [], None
    return [p for p in out if p[0] in surely], next((p for p in out if p[0] in augments), None)


def _calls_itself(callee) -> bool:
    fdef = effects.parsed(callee.__code__)
    return fdef is None or callee.__name__ in scopes.load_names(fdef.body)


def _check_apart(nz, call: gast.Call, arg: gast.Name, where: tuple) -> None:
    """`rt.refuse_shared(other, arg, where)` for each other local argument."""
    for other in [*call.args, *(k.value for k in call.keywords)]:
        if other is not arg and isinstance(other, gast.Name) and \
                aliasing.is_local(nz, other.id):
            nz.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.refuse_shared", [
                astutil.name(other.id), astutil.name(arg.id), astutil.const(where)])))


def _variant(nz, callee, params: list) -> str:
    """The name of `callee`'s updating variant for `params` (module
    docstring), made a name the code binds at compile time; one variant per
    helper and parameters while the helper lives (its pair is compiled once)."""
    made = _VARIANTS.setdefault(callee, {})
    func = made.get(tuple(params))
    named = [n for n, f in nz.src.lifted.items() if f is func]
    if func is not None and named:      # (one name for one object: the imports')
        return named[0]
    name = nz.namer.fresh(callee.__name__ + "_updating")
    if func is None:
        func = made[tuple(params)] = _made(callee, params, name)
    nz.src.lifted[name] = func
    return name


_VARIANTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _made(callee, params: list, name: str) -> types.FunctionType:
    src = frontend.load(callee)
    fdef = astutil.clone(src.tree)
    taken = scopes.all_names(fdef)
    kept = []
    for param in params:
        stem, i = param + "_updated", 1
        while stem in taken:
            stem, i = f"{param}_updated{i}", i + 1
        taken.add(stem)
        kept.append(stem)
    for node in traversal.walk_outside(fdef.body, _SCOPES):
        if isinstance(node, gast.Return):
            node.value = _with_kept(node.value or astutil.const(None), kept)
    body = [astutil.assign(k, astutil.name(p)) for k, p in zip(kept, params)] + fdef.body
    if not isinstance(body[-1], gast.Return):
        body.append(astutil.ret(_with_kept(astutil.const(None), kept)))
    args = fdef.args
    lift.strip_signature(args)
    func = lift.compile_def(astutil.function_def(name, args, body), src, callee.__qualname__)
    func.__defaults__, func.__kwdefaults__ = callee.__defaults__, callee.__kwdefaults__
    return func


def _with_kept(value, kept: list) -> gast.Tuple:
    return astutil.tuple_([value, *(astutil.name(k) for k in kept)])
