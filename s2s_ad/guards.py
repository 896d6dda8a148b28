"""Staleness guards: what a derived function was compiled against, checked.

s2s_ad resolves names when it compiles: `act(x)` with a global
`act = np.tanh` is differentiated with tanh's rule, and a call of `helper`
uses an adjoint pair generated from helper's source as it was then.  The
primal resolves the same names at every call, so after `act = np.sin`, a
re-executed `def helper`, an `importlib.reload`, a reassigned closure
cell, or a helper edited in place (IPython's autoreload gives the old
function object the new `__code__` and defaults), the compiled gradient
would silently be another function's.

Each compilation therefore has *dependencies* (`Dep`): the callables that
`ir.Source.resolve` returned for names of the user's code (closure
cells, module globals, builtins, names imported inside the function, and
attributes of the user's own modules: `helpers.act`), plus, transitively,
those of the callees whose adjoint pairs it calls, and for a derived
function, the function itself (its code, replaced in place by an
autoreload).  Modules of Python and
of installed packages are taken as fixed: `np.tanh` is a dependency on
nothing (neither numpy's attributes nor the name `np` are guarded).  From
the dependencies `guard` builds

- for a derived function handed to the user, a first statement that reads
  those names again and compares them with the objects they had:

      # derive again if this function, or a name resolved at compile time, changed
      if act is not was_act or helper != was_helper or \
              loss_ref() is not None and loss_ref().__code__ is not was_loss:
          return rederive(x)

  A name of the function's own scope is read as the function reads it;
  names of another scope (a callee in another module) with one
  `rt.bound(scope, 'name', ...)` per scope, compared by `!=`; the function
  itself by its code, through a weak reference (it may be bound to no
  name: `_itself`).  `rederive` (a `rederive.Rederive`) derives afresh, replacing the stale
  cache entry, and forwards the call (refusing one that passes a default
  the function no longer has: `rederive._check_defaults`).  A user's function is
  compared by `!=` with its `Version`, which also checks its code and
  defaults.  About 10-20 ns per name read by name (an `is not`), 0.2-0.4
  µs per user's function;
- `stale()`, the same comparison compiled alongside, which the cache asks
  before handing out an entry.  A callee's pair has no guard of its own:
  the guards of the functions that call it cover it; its cache entry's
  `stale()` is `changed(deps)`, which asks each dependency whether it still
  holds (a chain of n helpers would otherwise compile n checks of up to n
  names each).

A rule registered after compilation replaces an expected object of every
guarded function by one nothing denotes (a `registry` listener), so each
derives again once.

Invariants: the guard and `stale()` compare exactly `Guard.deps`; a
dependency whose name the generated code does not read (s2s_ad's own import
of the same object stands in for it) is left out, and so is one that does
not equal itself when read again right after compilation (a property that
makes a new object per read): it cannot be guarded, and must not force a
compilation per call.  No dependency and no `Rederive` holds the primal
strongly (`Version` stands for it in its own dependencies, and `Rederive`
keeps the parts to rebuild it), so the cache's weak keys still let it go.
"""
from __future__ import annotations

import os
import sys
import types
import weakref
from dataclasses import dataclass

import gast

from . import astutil, rederive, runtime
from .frontend import INSTALLED
from .ir import CLOSURE, GLOBAL, Source
from .rules import registry

DEPS = "__s2s_ad_deps__"        # attribute of generated functions: their Deps
PRIMAL = "__s2s_ad_primal__"    # ...: their primal, a rederive.Revivable
OPTIONS = "__s2s_ad_options__"  # ...: the request they were compiled for
COMMENT = "derive again if this function, or a name resolved at compile time, changed"

_STALE = object()       # an expected object that no name denotes
# guarded function -> the cell of its first expected object (see `_invalidate`)
_expected_cells: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


@dataclass(frozen=True, eq=False)
class Dep:
    """One name resolved at compile time and the object it denoted."""

    scope: object       # a module's globals, a closure cell, or a module's name
    path: str           # the dotted name, as `runtime.bound` reads it in `scope`
    expected: object    # the object it denoted (a `Version` for a user's function)
    label: str          # stem of the variable that holds `scope` in generated code

    @property
    def key(self) -> tuple:
        return (self.scope if isinstance(self.scope, str) else id(self.scope), self.path)

    def holds(self) -> bool:
        """Whether the name still denotes the object it denoted (a primal
        gone, `_itself`, was not edited)."""
        if isinstance(self.scope, weakref.ref) and self.scope() is None:
            return True
        now = runtime.bound(self.scope, self.path)
        try:
            return now is self.expected or bool(now == self.expected)
        except Exception:       # an `==` that raises or is ambiguous
            return False


class Version:
    """A user's function as it was when compiled against, held weakly: equal
    to that function object only while its code and defaults are the ones
    it had.  An edit in place (IPython's autoreload assigns a reloaded
    module's new `__code__` and `__defaults__` to its old functions, and so
    does `f.__code__ = ...`) keeps the object, and so every name bound to
    it, but changes what it computes: its adjoint must be derived again.
    The function being compiled stands for itself this way too."""

    def __init__(self, func):
        self._ref = weakref.ref(func)
        self._code, self._defaults, self._kwdefaults = \
            func.__code__, func.__defaults__, func.__kwdefaults__

    def function(self):
        return self._ref()

    def __eq__(self, other):
        return other is self._ref() and other is not None and \
            other.__code__ is self._code and other.__defaults__ is self._defaults and \
            other.__kwdefaults__ is self._kwdefaults

    def __ne__(self, other):        # (a guard's test: once per call, kept short)
        return other is not self._ref() or other is None or \
            other.__code__ is not self._code or other.__defaults__ is not self._defaults \
            or other.__kwdefaults__ is not self._kwdefaults

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<the function {getattr(self._ref(), '__qualname__', '(gone)')}>"


def own(src: Source) -> list[Dep]:
    """The dependencies recorded while compiling `src` itself."""
    deps = []
    for (where, head, path), obj in src.resolved.items():
        if where == CLOSURE:
            scope, label = src.cells[head], f"{src.name}_{head}_cell"
        elif where == GLOBAL:
            scope, label = src.globals, _module_label(src.globals)
        else:                   # imported inside the function: read the module
            module, attr = src.imported[head]
            path = ".".join(([attr] if attr else []) + path.split(".")[1:])
            scope, label = module, module
            if fixed(sys.modules.get(module)):
                continue
        path, obj = _up_to_fixed(scope, path, obj)
        if fixed(obj):
            continue
        deps.append(Dep(scope, path,
                        Version(obj) if isinstance(obj, types.FunctionType) else obj, label))
    return deps


def _itself(func) -> Dep:
    """The dependency of a derived function handed to the user on its
    primal's code (replaced in place by an autoreload), read through a weak
    reference: the primal may be bound to no name it can read, and is not
    held.  Gone, it was not edited (`grad(lambda x: ...)` keeps no lambda).
    The generated test is a few C-level operations, `f_ref() is not None
    and f_ref().__code__ is not was_f`: the primal's defaults are compared
    when a changed code derives again (`rederive._check_defaults`), not at every
    call."""
    return Dep(weakref.ref(func), "__code__", func.__code__, func.__name__)


def _up_to_fixed(scope, path: str, obj) -> tuple:
    """`path` and its object, cut after the first module on it that is part
    of Python or an installed package (`np` for `np.linalg.norm`)."""
    parts = path.split(".")
    for i in range(1, len(parts)):
        value = runtime.bound(scope, ".".join(parts[:i]))
        if fixed(value):
            return ".".join(parts[:i]), value
    return path, obj


def fixed(module) -> bool:
    """A module of the standard library, an installed package or s2s_ad."""
    if not isinstance(module, types.ModuleType):
        return False
    top = module.__name__.partition(".")[0]
    if top in sys.stdlib_module_names or top == "s2s_ad":
        return True
    path = getattr(module, "__file__", None)
    return path is not None and os.path.abspath(path).startswith(INSTALLED)


def _module_label(globals_: dict) -> str:
    return str(globals_.get("__name__", "module")).rsplit(".", 1)[-1] + "_globals"


@dataclass
class Guard:
    """The guard of one generated function (see the module docstring)."""

    deps: tuple                 # what it compares (callers of a pair inherit them)
    statements: list            # first in the derived function; [] for a pair
    checker: gast.FunctionDef | None   # `def stale(): return act is not was_act or ...`
    #                                    (None for a pair: see `changed`)
    imports: dict               # names the guard reads -> objects
    was: list                   # the names holding the expected objects
    rederive: str | None        # the name of the `Rederive` (None for a pair)


def _dependencies(src: Source, readers, imports: dict, itself: bool) -> tuple:
    """What `src`'s derived function is compiled against and can check:
    the names it resolved, its callees' pairs' dependencies, a derived
    primal's own (differentiated again), and for `itself` its code."""
    seen: dict = {}
    callees = [d for obj in imports.values() if isinstance(obj, types.FunctionType)
               for d in getattr(obj, DEPS, ())]
    # (a derived function differentiated again: what it was compiled against)
    inherited = getattr(src.func, DEPS, None)
    for dep in [d for d in own(src) if not readers.shadowed(d)] + callees + list(inherited or ()):
        seen.setdefault(dep.key, dep)
    if itself and inherited is None and not any(
            isinstance(d.expected, Version) and d.expected.function() is src.func
            for d in seen.values()):
        own_code = _itself(src.func)
        seen.setdefault(own_code.key, own_code)
    return tuple(d for d in seen.values() if d.holds())     # else: unguardable


def guard(fdef: gast.FunctionDef, src: Source, locals_: set, imports: dict, namer,
          in_body: bool, itself: bool) -> Guard | None:
    """The guard of `fdef`, generated from `src` (whose parameters and
    locals are `locals_`, whose names `namer` gave) and reading `imports`
    (among them the callees' pairs, whose dependencies it inherits); None if
    there is nothing to compare.  `in_body`: also as `fdef`'s first
    statements; `itself`: a derived function of `src.func` (not a pair),
    which depends on its code too."""
    readers = _Readers(src, locals_, imports, namer)
    deps = _dependencies(src, readers, imports, itself)
    if not deps:
        return None
    if not in_body:             # a pair or twin: its cache entry checks `deps` directly
        return Guard(deps, [], None, {}, [], None)
    for dep in deps:            # heads read by name must not be shadowed
        namer.reserve(dep.path.split(".")[0])
    tests, was, expected_by_name = [], [], {}
    for value, expected, stem, same, named in readers.read_all(deps):
        was.append(named or namer.fresh("was_" + stem))
        expected_by_name[was[-1]] = expected
        tests.append(value if same is None else      # (`value` is the test itself)
                     astutil.compare(value, gast.IsNot if same else gast.NotEq,
                                     astutil.name(was[-1])))
    new = {**readers.added, **expected_by_name}    # read_all added the scopes

    def test() -> gast.expr:
        return astutil.clone(tests[0] if len(tests) == 1 else astutil.or_(tests))
    checker = astutil.function_def(namer.fresh("stale"), astutil.arguments([]),
                                   [astutil.ret(test())])
    rederive = namer.fresh("rederive")
    new[rederive] = None            # the caller puts the `Rederive` here
    statements = [astutil.block(COMMENT, [astutil.if_(test(), [_forward(fdef.args, rederive)])])]
    return Guard(deps, statements, checker, new, was, rederive)


class _Readers:
    """Expressions that read dependencies' names from inside the generated
    function."""

    def __init__(self, src: Source, locals_: set, imports: dict, namer):
        self.src, self.imports, self.namer = src, imports, namer
        # the names the generated function may bind: the user's parameters
        # and locals, and every name s2s_ad generated (no walk of the code)
        self.bound = set(locals_) | (namer.snapshot() - src.user_names)
        self.added: dict = {}       # new names -> the objects they hold
        self.rt = next((k for k, v in imports.items() if v is runtime), None)

    def _in_scope(self, dep: Dep) -> bool:
        """`dep` is a global or closure variable of the function itself,
        not hidden by a parameter or local of `fdef`."""
        head = dep.path.split(".")[0]
        return not isinstance(dep.scope, str) and head not in self.bound and (
            dep.scope is self.src.globals or dep.scope is self.src.cells.get(head))

    def shadowed(self, dep: Dep) -> bool:
        """`fdef` reads s2s_ad's own import of the same object instead
        (`np`): rebinding the user's name cannot change what it runs."""
        head = dep.path.split(".")[0]
        return self._in_scope(dep) and head in self.imports and \
            self.imports[head] is runtime.bound(dep.scope, head)

    def own(self, dep: Dep) -> bool:
        """Whether `fdef` reads `dep`'s name as the primal does, by name."""
        return self._in_scope(dep) and dep.path.split(".")[0] not in self.imports

    def read_all(self, deps) -> list:
        """(expression, expected value, stem, compared by `is` (None: the
        expression is the whole test), the name of the expected value if
        chosen here) per name read as the primal reads it, per other scope
        (`rt.bound(scope, 'a', 'b')`, a tuple for several names, compared by
        `!=`), and for the primal itself (`_itself`).  A name whose
        object compares equal without being identical (a bound method, made
        anew at each read) or is a user's function (its `Version`) is
        compared by `!=` too."""
        out = [(astutil.dotted(d.path), d.expected, d.path.replace(".", "_"),
                runtime.bound(d.scope, d.path) is d.expected, None)
               for d in sorted((d for d in deps if self.own(d)), key=lambda d: d.path)]
        groups: dict = {}
        for dep in deps:
            if isinstance(dep.scope, weakref.ref):      # the primal itself
                out.append(self._itself(dep))
            elif not self.own(dep):
                groups.setdefault(dep.key[0], []).append(dep)
        for group in sorted(groups.values(), key=lambda g: g[0].label):
            group.sort(key=lambda d: d.path)
            value = astutil.call(f"{self._runtime()}.bound", [self._scope(group[0])] +
                                 [astutil.const(d.path) for d in group])
            expected = group[0].expected if len(group) == 1 else \
                tuple(d.expected for d in group)
            out.append((value, expected, group[0].label, False, None))
        return out

    def _itself(self, dep: Dep) -> tuple:
        """The test `f_ref() is not None and f_ref().__code__ is not was_f`
        (the primal gone was not edited), and its expected code."""
        was = self.namer.fresh("was_" + dep.label)
        ref = self._scope(dep)
        test = astutil.and_([
            astutil.compare(astutil.call(astutil.clone(ref), []), gast.IsNot,
                            astutil.const(None)),
            astutil.compare(astutil.attribute(astutil.call(ref, []), dep.path), gast.IsNot,
                            astutil.name(was))])
        return test, dep.expected, dep.label, None, was

    def _runtime(self) -> str:
        if self.rt is None:
            self.rt = self.namer.fresh("rt")
            self.added[self.rt] = runtime
        return self.rt

    def _scope(self, dep: Dep) -> gast.expr:
        if isinstance(dep.scope, str):
            return astutil.const(dep.scope)
        ident = self.namer.fresh(dep.label + ("_ref" if isinstance(dep.scope, weakref.ref) else ""))
        self.added[ident] = dep.scope
        return astutil.name(ident)


def _forward(args: gast.arguments, rederive: str) -> gast.stmt:
    """`return rederive(<every parameter, passed as it was received>)`."""
    positional = [astutil.name(a.id) for a in args.posonlyargs + args.args]
    if args.vararg:
        positional.append(astutil.starred(astutil.name(args.vararg.id)))
    keywords = [(a.id, astutil.name(a.id)) for a in args.kwonlyargs]
    if args.kwarg:
        keywords.append((None, astutil.name(args.kwarg.id)))
    return astutil.ret(astutil.call(rederive, positional, keywords))


def changed(deps: tuple):
    """The `stale()` check of a pair's cache entry: whether a name in `deps`
    (its own and its callees', transitively) was rebound.  Not generated
    code: a chain of n helpers would compile n checks of up to n names."""
    return lambda: not all(dep.holds() for dep in deps)


def first_expected(g: Guard | None) -> str | None:
    """The name of the first expected object of a guarded derived function
    (None for a pair, or a function with no guard)."""
    return g.was[0] if g is not None and g.statements else None


def install(was: str | None, derived, thunk: rederive.Rederive | None) -> None:
    """Point `thunk` at the compiled guarded function `derived`, whose
    expected objects (the first is named `was`) a rule registered later
    makes stale."""
    if was is None:
        return
    thunk.derived = weakref.ref(derived)
    _expected_cells[derived] = derived.__closure__[derived.__code__.co_freevars.index(was)]


def _invalidate() -> None:
    """A rule was registered: every guarded function derives again once
    (its first expected object is replaced by one nothing equals)."""
    for cell in list(_expected_cells.values()):
        cell.cell_contents = _STALE


registry.on_change(_invalidate)
