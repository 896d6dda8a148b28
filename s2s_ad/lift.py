"""Lambda lifting: nested `def`s and lambdas become module-level functions.

A function defined inside the differentiated one,

    def f(x):
        scale = x * 2.0
        g = lambda v: np.sin(v) * scale
        return g(x)

is compiled as its own function whose extra keyword-only parameters are the
enclosing locals it reads, `def f__g(v, *, scale): return np.sin(v) * scale`,
and each call `g(x)` becomes `f__g(x, scale=scale)`.  The values are passed
at the call, as Python's late binding reads them; a nested function may not
assign an enclosing local (`nonlocal` is fenced).  Lifted functions are
ordinary user functions afterwards: differentiated through their own
generated adjoints, so gradients flow into the captured variables too.

Invariant: a lifted function's text is registered in `linecache` under a
synthetic file name, so the frontend reads it like any other source.
"""
from __future__ import annotations

import linecache
import types
from dataclasses import dataclass

import gast

from . import astutil
from .frontend import Source


@dataclass(frozen=True)
class Lifted:
    name: str                 # the identifier calls are rewritten to
    func: types.FunctionType
    free: tuple               # enclosing names passed as keywords


def lift(node, name: str, src: Source, enclosing: set[str], siblings: dict) -> Lifted:
    """Compile a nested `FunctionDef` or `Lambda` as a top-level function.

    `enclosing` holds the names that are locals of the enclosing function;
    those the nested function reads become keyword-only parameters.
    `siblings` maps the names of nested functions lifted before this one to
    their `Lifted`: calls to them go to the lifted functions.
    """
    if isinstance(node, gast.Lambda):
        body = [gast.Return(value=astutil.clone(node.body))]
        args = astutil.clone(node.args)
    else:
        body, args = [astutil.clone(s) for s in node.body], astutil.clone(node.args)
    own = {a.id for a in astutil.params(args)} | {
        n.id for s in body for n in gast.walk(s)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    called = _call_siblings(body, siblings, own)
    reads = [n for s in body for n in astutil.load_names(s)]
    free = tuple(dict.fromkeys(
        n for n in reads if n not in own and n not in called
        and (n in enclosing or n in src.closure)))
    args.kwonlyargs = list(args.kwonlyargs) + [astutil.param(n) for n in free]
    args.kw_defaults = list(args.kw_defaults) + [None] * len(free)
    fdef = astutil.function_def(name, args, body)
    text = astutil.unparse(astutil.module([fdef])) + "\n"
    filename = f"<s2s_ad lifted {src.qualname}.{name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = dict(src.globals)         # evaluates the defaults, once
    exec(compile(text, filename, "exec"), namespace)
    made = namespace[name]
    # Calling a lifted sibling needs it among the globals: a copy of the
    # module's (then module globals are read as they were at compile time).
    scope = src.globals if not called else {
        **src.globals, **{siblings[n].name: siblings[n].func for n in called}}
    func = types.FunctionType(made.__code__, scope, name, made.__defaults__)
    func.__kwdefaults__ = made.__kwdefaults__
    func.__module__ = src.func.__module__
    func.__qualname__ = f"{src.func.__qualname__}.<locals>.{name}"
    return Lifted(name, func, free)


def _call_siblings(body, siblings: dict, own: set) -> set:
    """Rewrite calls of lifted sibling functions in `body`, in place, to the
    lifted functions (passing what they read); returns the names called."""
    called = set()
    for stmt in body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                    and node.func.id in siblings and node.func.id not in own:
                lifted = siblings[node.func.id]
                called.add(node.func.id)
                node.func = astutil.name(lifted.name)
                node.keywords = list(node.keywords) + [
                    gast.keyword(arg=n, value=astutil.name(n)) for n in lifted.free]
    return called
