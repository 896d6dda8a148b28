"""Recipes: how the on-disk cache (diskcache.py) finds an object again in
another process, and knows it is the same.

A recipe is a small JSON value.  `encode` makes one for each object a
generated function reads, or raises `Miss` when the object has none (a
lifted nested function, an instance, a partial): such a function is not
written to disk.  `decode` resolves a recipe in this process, or raises
`Miss` when the object is gone or differs (its fingerprint changed).

- modules by name; module globals by their module's name; closure cells by
  the variable name of the function being loaded; the function itself, a
  weak reference to it and its code (its guard's), as such;
- literals (None, bool, int, float, str, and tuples of them) by value;
- functions and classes by module and qualified name, with a fingerprint:
  the code of the function (and of its defaults' recipes), of each method
  of a class; objects of installed packages and of Python by name alone
  (their versions are part of the cache key);
- a derived function or the adjoint pair of a callee by its primal's
  recipe and the request's options, itself compiled or loaded through
  `Context.derive`;
- a call site resolved at run time (`dispatch.CallSite`) by its callee, its
  varied arguments and its location.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import marshal
import sys
import types
import weakref
from dataclasses import dataclass
from typing import Callable

import numpy

from . import dispatch, guards
from .errors import Location

_LITERALS = (type(None), bool, int, float, str)


def code_bytes(code: types.CodeType) -> bytes:
    """`code` serialized for a key: marshal format 2, which writes no
    back-references (from format 3 on, what is written twice depends on
    reference counts on Python 3.10, so one function could hash two ways)."""
    return marshal.dumps(code, 2)


class Miss(Exception):
    """An object without a recipe, or one that no longer resolves as recorded."""


@dataclass
class Context:
    """The function whose artifact is read or written, and the driver's
    ways of getting a callee's pair."""

    func: object
    derive: Callable        # (function, the fields of an Options) -> derived (or pair)
    pair_of: Callable       # a CallSite's: (function, variant) -> (fwd, bwd)


def encode(obj, ctx: Context) -> dict:
    if isinstance(obj, guards.Version):
        return {"k": "version", "of": encode(obj.function(), ctx)}
    if obj is ctx.func:
        return {"k": "self"}
    if isinstance(obj, weakref.ref) and obj() is ctx.func:
        return {"k": "selfref"}
    if obj is getattr(ctx.func, "__code__", None):
        return {"k": "selfcode"}
    if _literal(obj):
        return {"k": "literal", "v": repr(obj)}
    if isinstance(obj, types.ModuleType):
        return {"k": "module", "name": obj.__name__}
    if isinstance(obj, dict) and _module_of_globals(obj) is not None:
        return {"k": "globals", "name": _module_of_globals(obj)}
    if isinstance(obj, types.CellType):
        return {"k": "cell", "name": _cell_name(obj, ctx.func)}
    if isinstance(obj, dispatch.CallSite):
        return _encode_site(obj, ctx)
    if hasattr(obj, guards.PRIMAL) and hasattr(obj, guards.OPTIONS):
        options = getattr(obj, guards.OPTIONS)
        return {"k": "derived", "of": encode(getattr(obj, guards.PRIMAL)(), ctx),
                "options": _literal_repr(dataclasses.astuple(options)), "name": obj.__name__}
    if isinstance(obj, numpy.ufunc) and getattr(numpy, obj.__name__, None) is obj:
        return {"k": "ufunc", "name": obj.__name__}
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or \
            _resolve(module, qualname) is not obj:
        raise Miss(obj)
    return {"k": "ref", "module": module, "qualname": qualname, "fp": _fingerprint(obj, ctx)}


def decode(recipe: dict, ctx: Context):
    kind = recipe["k"]
    if kind == "version":
        return guards.Version(decode(recipe["of"], ctx))
    if kind == "self":
        return ctx.func
    if kind == "selfref":
        return weakref.ref(ctx.func)
    if kind == "selfcode":
        return ctx.func.__code__
    if kind == "literal":
        return ast.literal_eval(recipe["v"])
    if kind == "module":
        return _import(recipe["name"])
    if kind == "globals":
        return vars(_import(recipe["name"]))
    if kind == "cell":
        return _cell(recipe, ctx)
    if kind == "site":
        callee = decode(recipe["callee"], ctx) if recipe["callee"] is not None else None
        return dispatch.CallSite(callee, ast.literal_eval(recipe["varied"]),
                                 Location(*recipe["where"]), ctx.pair_of)
    if kind == "derived":
        return _derived(recipe, ctx)
    if kind == "ufunc":
        obj = getattr(numpy, recipe["name"], None)
        if not isinstance(obj, numpy.ufunc):
            raise Miss(recipe)
        return obj
    if kind == "ref":
        obj = _resolve(recipe["module"], recipe["qualname"])
        if obj is None or _fingerprint(obj, ctx) != recipe["fp"]:
            raise Miss(recipe)
        return obj
    raise Miss(recipe)


def _cell(recipe: dict, ctx: Context):
    """The primal's closure cell of the recipe's name."""
    names = ctx.func.__code__.co_freevars
    if recipe["name"] not in names:
        raise Miss(recipe)
    return ctx.func.__closure__[names.index(recipe["name"])]


def _derived(recipe: dict, ctx: Context):
    """The derived function (of a pair, the one of the recipe's name)."""
    made = ctx.derive(decode(recipe["of"], ctx), ast.literal_eval(recipe["options"]))
    for fn in made if isinstance(made, tuple) else (made,):
        if fn.__name__ == recipe["name"]:
            return fn
    raise Miss(recipe)


def encode_dep(dep: guards.Dep, ctx: Context) -> dict:
    return {"scope": encode(dep.scope, ctx), "path": dep.path, "label": dep.label,
            "expected": encode(dep.expected, ctx)}


def decode_dep(recipe: dict, ctx: Context) -> guards.Dep:
    """The dependency, which must hold now: the name denotes what it did."""
    dep = guards.Dep(decode(recipe["scope"], ctx), recipe["path"],
                     decode(recipe["expected"], ctx), recipe["label"])
    if not dep.holds():
        raise Miss(recipe)
    return dep


def _encode_site(site: dispatch.CallSite, ctx: Context) -> dict:
    where = site.where
    return {"k": "site", "varied": _literal_repr(site.varied),
            "callee": encode(site.callee, ctx) if site.callee is not None else None,
            "where": [where.filename, where.line, where.col, where.source_line]}


def _fingerprint(obj, ctx: Context) -> str:
    """What must not change for generated code to stay right: a function's
    code and defaults, a class's methods; nothing for a library's object."""
    if _fixed(obj):
        return ""
    digest = hashlib.sha256()
    if isinstance(obj, types.FunctionType):
        if obj.__closure__:
            raise Miss(obj)             # what its cells hold is not recorded
        digest.update(code_bytes(obj.__code__))
        for value in (obj.__defaults__ or ()) + tuple((obj.__kwdefaults__ or {}).items()):
            digest.update(repr(encode(value, ctx)).encode())
    elif isinstance(obj, type):
        digest.update(repr([b.__qualname__ for b in obj.__mro__]).encode())
        for name, value in sorted(vars(obj).items()):
            if isinstance(value, types.FunctionType):
                digest.update(name.encode() + _fingerprint(value, ctx).encode())
            elif not name.startswith("__"):
                raise Miss(obj)         # a class attribute a method may read
    else:
        raise Miss(obj)
    return digest.hexdigest()


def _fixed(obj) -> bool:
    """An object of Python or an installed package (or of s2s_ad)."""
    return guards.fixed(sys.modules.get(getattr(obj, "__module__", None) or ""))


def _literal(obj) -> bool:
    if type(obj) is tuple:
        return all(_literal(o) for o in obj)
    return type(obj) in _LITERALS and (type(obj) is not float or obj == obj)


def _literal_repr(value) -> str:
    if not _literal(value):
        raise Miss(value)
    return repr(value)


def _module_of_globals(scope: dict) -> str | None:
    name = scope.get("__name__")
    module = sys.modules.get(name) if isinstance(name, str) else None
    return name if module is not None and vars(module) is scope else None


def _cell_name(cell, func) -> str:
    for name, own in zip(func.__code__.co_freevars, func.__closure__ or ()):
        if own is cell:
            return name
    raise Miss(cell)


def _import(name: str):
    try:
        return sys.modules.get(name) or importlib.import_module(name)
    except Exception:
        raise Miss(name) from None


def _resolve(module: str, qualname: str):
    """`module.qualname` in this process, or None (`<locals>` never resolves)."""
    obj = sys.modules.get(module)
    for attr in qualname.split("."):
        obj = getattr(obj, attr, None)
        if obj is None:
            return None
    return obj
