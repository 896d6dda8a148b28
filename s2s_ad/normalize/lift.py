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
assign an enclosing local (`nonlocal` is fenced).  Default values are
evaluated where the `def` (or lambda) stands, in the enclosing function, as
Python evaluates them: `g = lambda v, k=k: v * k` becomes `k_default = k`
there, the lifted function has no defaults, and a call that leaves `k` out
passes `k=k_default`.  Lifted functions are ordinary user functions
afterwards: differentiated through their own generated adjoints, so
gradients flow into the captured variables and the defaults too.

Invariant: a lifted function's text is registered in `linecache` under a
synthetic file name while the function lives, so the frontend reads it like
any other source.
"""
from __future__ import annotations

import functools
import linecache
import types
from dataclasses import dataclass

import gast

from .. import astutil, gastparse, scopes, traversal
from ..errors import UnsupportedSyntaxError
from ..ir import Source
from ..sourcelines import hold_lines


@dataclass(frozen=True)
class Lifted:
    name: str                 # the identifier calls are rewritten to
    func: types.FunctionType
    free: tuple               # enclosing names passed as keywords
    # (parameter, value atom, its position or None if keyword-only, whether
    # positional-only) per default, the atom evaluated where the nested
    # function was defined
    defaults: tuple = ()

    def call(self, args: list, keywords: list, known, refuse) -> gast.Call:
        """A call of the lifted function for the user's call with `args` and
        `keywords`: plus the enclosing values it reads and each default
        the call leaves out.  A `*t` whose items `known(t)` gives is spread
        first; a default that a `*t` or `**kw` of unknown size may fill or
        not is refused (`refuse(node, what)` raises, located): passing it
        could give it twice, leaving it out could drop it."""
        args = [a for arg in args for a in _spread_known(arg, known)]
        given = {k.arg for k in keywords}
        star = next((a for a in args if isinstance(a, gast.Starred)), None)
        double = next((k.value for k in keywords if k.arg is None), None)
        fixed = sum(not isinstance(a, gast.Starred) for a in args)
        keywords = [(k.arg, k.value) for k in keywords]
        for param, value, position, posonly in self.defaults:
            if position is not None and position < fixed or param in given:
                continue
            if position is not None and star is not None:
                refuse(star, "`*args` in a call, from a sequence whose length is not "
                             "known where the function is compiled (into a nested "
                             "function with defaults)")
            if not posonly and double is not None:
                refuse(double, "`**kwargs` in a call of a nested function with "
                               "defaults, of dicts whose keys are not known where the "
                               "function is compiled")
            if posonly:         # the missing ones are the last: append in order
                args.append(astutil.clone(value))
            else:
                keywords.append((param, astutil.clone(value)))
        keywords += [(n, astutil.name(n)) for n in self.free]
        return astutil.call(astutil.name(self.name), args, keywords)

    def default_names(self) -> set[str]:
        return {d[1].id for d in self.defaults if isinstance(d[1], gast.Name)}


def display_items(value, resolve, named) -> list | None:
    """The items of `value` if their number is known where it is written:
    a display, a name `named(name)` gives the items of, or `list(...)` /
    `tuple(...)` of either (`resolve(func)`: what a callee denotes)."""
    if isinstance(value, (gast.Tuple, gast.List)) and \
            not any(isinstance(e, gast.Starred) for e in value.elts):
        return list(value.elts)
    if isinstance(value, gast.Name):
        return named(value.id)
    if isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords \
            and resolve(value.func) in (list, tuple) \
            and not isinstance(value.args[0], gast.Starred):
        return display_items(value.args[0], resolve, named)
    return None


def _spread_known(arg, known) -> list:
    """`arg`, or the items of a `*t` whose items `known(t)` gives."""
    items = known(arg.value) if isinstance(arg, gast.Starred) else None
    return [arg] if items is None else list(items)


def lift(node, name: str, src: Source, enclosing: set[str], siblings: dict,
         defaults: dict) -> Lifted:
    """Compile a nested `FunctionDef` or `Lambda` as a top-level function.

    `enclosing` holds the names that are locals of the enclosing function;
    those the nested function reads become keyword-only parameters.
    `siblings` maps the names of nested functions lifted before this one to
    their `Lifted`: calls to them go to the lifted functions.  `defaults`
    maps each parameter with a default to the atom holding its value.
    """
    if isinstance(node, gast.Lambda):
        body = [astutil.ret(astutil.clone(node.body))]
        args = astutil.clone(node.args)
    else:
        body, args = [astutil.clone(s) for s in node.body], astutil.clone(node.args)
    positional = [a.id for a in list(args.posonlyargs) + list(args.args)]
    posonly = {a.id for a in args.posonlyargs}
    strip_signature(args)
    own = {a.id for a in scopes.params(args)} | scopes.scoped_names(body)[0]
    called = _call_siblings(body, siblings, own, src, enclosing)   # (passes what they read)
    # (what a called sibling is passed, it reads from here: its defaults'
    # values and what it reads itself, a sibling's default's value too)
    passed = set().union(*(siblings[n].default_names() | set(siblings[n].free)
                           for n in called))
    reads = scopes.scoped_names(body)[1]
    free = tuple(dict.fromkeys(
        n for n in reads if n not in own and n not in called
        and (n in enclosing or n in src.closure or n in passed)))
    args.kwonlyargs = list(args.kwonlyargs) + [astutil.param(n) for n in free]
    args.kw_defaults = list(args.kw_defaults) + [None] * len(free)
    user = node.name if isinstance(node, gast.FunctionDef) else "<lambda>"
    func = compile_def(astutil.function_def(name, args, body), src,
                       f"{src.func.__qualname__}.<locals>.{user}",
                       {siblings[n].name: siblings[n].func for n in called})
    order = tuple((p, v, positional.index(p) if p in positional else None, p in posonly)
                  for p, v in defaults.items())
    return Lifted(name, func, free, order)


def compile_def(fdef: gast.FunctionDef, src: Source, qualname: str,
                siblings: dict | None = None) -> types.FunctionType:
    """The def `fdef`, made from `src`'s code, as a live function in `src`'s
    module, its text registered in `linecache` (its lines located at the
    code they came from), qualified as messages show it.  Calling lifted
    `siblings` needs them among the globals: a copy of the module's (then
    module globals are read as they were at compile time)."""
    name = fdef.name
    text = astutil.unparse(astutil.module([fdef])) + "\n"
    filename = f"<s2s_ad lifted {src.qualname}.{name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = dict(src.globals)         # nothing is evaluated: no defaults
    exec(compile(text, filename, "exec"), namespace)
    made = namespace[name]
    scope = {**src.globals, **siblings} if siblings else src.globals
    func = types.FunctionType(made.__code__, scope, name, made.__defaults__)
    func.__kwdefaults__ = made.__kwdefaults__
    func.__module__ = src.func.__module__
    func.__qualname__ = qualname
    hold_lines(filename, text, func, _origins(fdef, text, src))
    return func


def _origins(fdef: gast.FunctionDef, text: str, src: Source) -> dict:
    """(line, column) in the lifted `text` -> where the user wrote that
    code (`Source.origins`), by walking the text's tree and `fdef`, whose
    text it is, side by side (nodes s2s_ad made have no place: skipped)."""
    out: dict = {}
    for new, old in zip(traversal.walk(gastparse.parse(text).body[0]), traversal.walk(fdef)):
        if type(new) is not type(old):
            return {}               # (never: the text is `fdef`'s)
        if getattr(old, "lineno", None) and hasattr(new, "lineno"):
            out.setdefault((new.lineno, new.col_offset), src.locate(old))
    return out


def strip_signature(args: gast.arguments) -> None:
    """No defaults and no annotations: both would be evaluated where the
    lifted function is compiled, in module globals (defaults are passed at
    each call instead, see `Lifted.call`)."""
    args.defaults = []
    args.kw_defaults = [None] * len(args.kwonlyargs)
    for param in scopes.params(args):
        param.annotation = None


def _call_siblings(body, siblings: dict, own: set, src: Source, enclosing: set) -> set:
    """Rewrite calls of lifted sibling functions in `body`, in place, to the
    lifted functions (passing what they read); returns the names called.
    (A `*t` is spread where it is a display: no name here has a known one.)"""
    local = own | enclosing
    known = functools.partial(display_items, resolve=lambda f: src.resolve(f, local),
                              named=lambda name: None)
    called = set()
    for stmt in body:
        for node in traversal.walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                    and node.func.id in siblings and node.func.id not in own:
                called.add(node.func.id)
                new = siblings[node.func.id].call(node.args, node.keywords, known,
                                                  functools.partial(_refuse, src))
                node.func, node.args, node.keywords = new.func, new.args, new.keywords
    return called


def _refuse(src: Source, node, what: str):
    raise UnsupportedSyntaxError(
        f"s2s_ad cannot differentiate {what}", src.locate(node),
        hint="rewrite it, or wrap the value it computes in "
             "`stop_gradient(...)` if no gradient should flow through it")
