"""Split a callee's adjoint into its forward and backward functions.

A user function called from differentiated code gets an adjoint *pair*:

    def g_fwd(<g's parameters>):      # the primal, recording what the
        ...                           # reverse sweep needs
        return value, (x, t1, tape)   # the value and the saved state

    def g_bwd(saved, dvalue):
        x, t1, tape = saved
        ...                           # the reverse sweep
        return (dx, dw)               # one adjoint per varied parameter

`reverse` generates (and `optimize` cleans) one function with an
`astutil.Split` statement between the sweeps; `split_pair` cuts it there.  The saved state is
every name the backward half reads that the forward half binds.

Invariant: a name in the saved state is bound when the forward half
returns (names bound only on some paths are set to None first).
"""
from __future__ import annotations

import gast

from . import astutil, scopes, traversal

def split_pair(fdef: gast.FunctionDef, names: tuple, seed_param: str):
    """(forward def, backward def) of a pair-mode adjoint function; `names`
    are (forward name, backward name, saved-state parameter), fresh names
    from the function's `Namer` (see reverse_plan.py)."""
    fwd_name, bwd_name, saved_param = names
    body = fdef.body
    cut = next(i for i, s in enumerate(body) if isinstance(s, astutil.Split))
    output = body[cut].value
    head, tail = body[:cut], body[cut + 1:]
    params = {a.id for a in scopes.params(fdef.args)}
    bound = params | _stored(head)
    saved = sorted(bound & set(n for s in tail for n in scopes.load_names(s)))
    unbound = [astutil.assign(n, astutil.const(None)) for n in saved
               if n not in params and not _bound_at_top(n, head)]
    pack = astutil.tuple_(astutil.name(n) for n in saved)
    fwd = astutil.function_def(fwd_name, fdef.args,
                               unbound + head + [astutil.ret(astutil.tuple_([output, pack]))])
    unpack = [astutil.assign(astutil.tuple_([astutil.name(n, store=True) for n in saved],
                                            store=True), astutil.name(saved_param))]
    bwd = astutil.function_def(bwd_name, astutil.arguments([saved_param, seed_param]),
                               (unpack if saved else []) + tail)
    return fwd, bwd


def _stored(stmts) -> set[str]:
    return {n.id for s in stmts for n in traversal.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _bound_at_top(name: str, stmts) -> bool:
    """Assigned by a top-level statement (so bound on every path)."""
    return any(isinstance(s, gast.Assign) and name in _stored([s]) for s in stmts)
