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


def lift(node, name: str, src: Source, enclosing: set[str]) -> Lifted:
    """Compile a nested `FunctionDef` or `Lambda` as a top-level function.

    `enclosing` holds the names that are locals of the enclosing function;
    those the nested function reads become keyword-only parameters.
    """
    if isinstance(node, gast.Lambda):
        body = [gast.Return(value=astutil.clone(node.body))]
        args = astutil.clone(node.args)
    else:
        body, args = [astutil.clone(s) for s in node.body], astutil.clone(node.args)
    own = {a.id for a in astutil.params(args)} | {
        n.id for s in body for n in gast.walk(s)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    reads = [n for s in body for n in astutil.load_names(s)]
    free = tuple(dict.fromkeys(
        n for n in reads if n not in own and (n in enclosing or n in src.closure)))
    args.kwonlyargs = list(args.kwonlyargs) + [astutil.param(n) for n in free]
    args.kw_defaults = list(args.kw_defaults) + [None] * len(free)
    fdef = astutil.function_def(name, args, body)
    text = astutil.unparse(astutil.module([fdef])) + "\n"
    filename = f"<s2s_ad lifted {src.qualname}.{name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = dict(src.globals)         # evaluates the defaults, once
    exec(compile(text, filename, "exec"), namespace)
    made = namespace[name]
    func = types.FunctionType(made.__code__, src.globals, name, made.__defaults__)
    func.__kwdefaults__ = made.__kwdefaults__
    func.__module__ = src.func.__module__
    func.__qualname__ = f"{src.func.__qualname__}.<locals>.{name}"
    return Lifted(name, func, free)
