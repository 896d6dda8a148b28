"""Frontend: a Python function -> `ir.Source` (its text, gast tree and scope).

Invariants of a `Source`:
- `tree` is the `gast.FunctionDef` that compiled to `func.__code__` -- what
  runs, never the function a decorator's wrapper wraps -- with no decorators;
  a lambda (found by its code's position) is turned into an equivalent `def`
  whose body is `return <expr>`.
- Line numbers in `tree` are relative to `lines`; `locate` maps a node back to
  the real file, line and column, so every error points at the user's code.
- `resolve` evaluates a dotted name that is not a local of the function,
  against closure cells, then globals, then builtins, at compile time; and
  the names of functions that normalization lifted out of the body.
- Every resolution that yields a callable (the objects whose identity picks
  a rule, a callee's adjoint pair or a loop's lowering) is recorded in
  `resolved`, keyed by where the name was found; `guards.py` turns that
  record into the cache's and the derived function's staleness check.
- `load` rejects what is not an ordinary function: coroutines (`async def`)
  and generators are refused with a located `UnsupportedSyntaxError`; and a
  function whose source file no longer matches its code (edited or reloaded
  since it was defined) with `SourceUnavailableError`.

A function's lines are read, and generated code's kept in `linecache`, by
sourcelines.py.
"""
from __future__ import annotations

import inspect
import linecache
import os
import sys
import textwrap
import types

import gast
import numpy as np

from . import astutil, deletions, gastparse, traversal
from .errors import (Location, SourceUnavailableError, UnsupportedSyntaxError,
                     caller_location)
from .ir import Source
from .runtime.origins import INSTALLED
from .sourcelines import held_origins, source_lines

# Statement kinds that s2s_ad does not differentiate; the message names them.
_FENCED = {
    gast.AsyncWith: "async with statement", gast.AsyncFor: "async for loop",
    gast.AsyncFunctionDef: "async function", gast.ClassDef: "class definition",
    gast.Global: "global statement", gast.Nonlocal: "nonlocal statement",
}
_FENCED_EXPR = {
    gast.Yield: "yield expression", gast.YieldFrom: "yield from expression",
    gast.Await: "await expression",
}




def is_callable_object(obj) -> bool:
    """An instance of a class of the user's that defines `__call__` in
    Python (called, it runs that function with the object first)."""
    call = getattr(type(obj), "__call__", None)
    return not isinstance(obj, type) and isinstance(call, types.FunctionType)


def is_library(func) -> bool:
    """Defined in an installed package or the standard library, not in the
    user's own code: its internals are no place to send the user."""
    return os.path.abspath(func.__code__.co_filename).startswith(INSTALLED)


def from_library(obj) -> bool:
    """A function, class or callable of Python's or an installed package's
    (NumPy's too), not the user's: by its code, else by its module's file."""
    if getattr(obj, "__code__", None) is not None:
        return is_library(obj)
    if obj is None or is_callable_object(obj):
        return False
    name = getattr(obj, "__module__", None)
    if name is None and isinstance(obj, np.ufunc):
        name = "numpy"              # (a ufunc has no `__module__` before NumPy 2)
    module = sys.modules.get(name or "")
    path = getattr(module, "__file__", None)
    return module is not None and (path is None or os.path.abspath(path).startswith(INSTALLED))


# a derived function's way to its twin without in-place adjoint updates
# (Options.owned False): differentiating it again reads that twin's source, as
# the in-place updates of owned adjoints would break what the outer
# derivative records
PURE = "__s2s_ad_pure__"


def read_as(func):
    """The function whose source, globals and closure stand for `func`'s:
    its twin without in-place adjoint updates for a derived function
    (`PURE`), else itself."""
    pure = getattr(func, PURE, None)
    return pure() if pure is not None else func


def load(func) -> Source:
    """Read, parse and fence `func`. Raises `SourceUnavailableError`."""
    func = read_as(func)
    if not isinstance(func, types.FunctionType):
        raise SourceUnavailableError(
            f"cannot read the source of {func!r}: it is not a Python function "
            f"but a {type(func).__name__}", caller_location(),
            hint="differentiate a function, method or functools.partial defined "
                 "in Python, or register a rule for this callable with "
                 "`s2s_ad.adjoint`")
    code = func.__code__
    filename = code.co_filename
    try:        # the code object's own source, not that of a `__wrapped__` function
        lines, first = source_lines(code)
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"cannot read the source of {func.__qualname__!r} ({exc})",
            Location(filename, func.__code__.co_firstlineno, 0),
            hint="define the function in a .py file (source typed at a bare "
                 "REPL or given to `python -c` is not kept), or register a "
                 "rule for it with `s2s_ad.adjoint`") from None
    if code.co_name == "<lambda>":
        tree, lines, first, indent = _lambda_tree(func, filename)
    else:
        tree, lines, indent = _def_tree(lines, func, Location(filename, first, 0))
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    closure = {}
    for var, cell in cells.items():
        try:
            closure[var] = cell.cell_contents
        except ValueError:      # an empty cell: not yet assigned
            pass
    src = Source(func, tree, filename, lines, first, indent,
                 func.__globals__, closure, cells, origins=held_origins(filename))
    fence(src, tree.body)       # a `yield` or `await` is located precisely here
    deletions.check(src)
    _fence_kind(src, func)
    if func.__name__ != "<lambda>":
        _check_unchanged(src)
    return src


def _check_unchanged(src: Source) -> None:
    """Refuse a function whose source text no longer matches its code: its
    file was edited since it was defined (typically: a module reloaded while
    an old function object is still in use).  s2s_ad would differentiate the
    new text, not what the function runs.  The text's names and constants
    must all occur in the code (which may have more: pytest rewrites
    `assert`), so an edit that brings in neither (`+` to `-`) goes unseen."""
    code = src.func.__code__
    try:
        module = compile("\n".join(src.lines) + "\n", src.filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return              # text that compiles only in its context: not checkable
    new = next((c for c in module.co_consts if isinstance(c, types.CodeType)
                and c.co_name == code.co_name), None)
    if new is None or (set(new.co_names) <= set(code.co_names) | set(code.co_freevars)
                       and _constants(new) <= _constants(code)):
        return
    raise SourceUnavailableError(
        f"the source of {src.func.__qualname__!r} changed since it was defined (its "
        "file was edited, or its module reloaded while this old function is still in "
        "use): s2s_ad reads the source, and would differentiate the new text",
        src.locate(src.tree),
        hint="use the function from the reloaded module (import or reload the "
             "modules that refer to it), or restart the interpreter")


def _constants(code) -> set:
    """The code's constants, less nested code and the qualified names that
    Python 3.10 keeps among them (`f.<locals>.<lambda>`: they depend on
    where the text was compiled); strings cleaned as docstrings are (a
    method's docstring is indented deeper in its file than in its text,
    which is dedented)."""
    return {(type(c), inspect.cleandoc(c) if isinstance(c, str) else c)
            for c in code.co_consts if not isinstance(c, types.CodeType)
            and not (isinstance(c, str) and "<" in c and c.endswith(">"))}


_NOT_A_FUNCTION = {inspect.CO_COROUTINE: "an async function (`async def`)",
                   inspect.CO_ASYNC_GENERATOR: "an async generator function",
                   inspect.CO_GENERATOR: "a generator function (it contains `yield`)",
                   inspect.CO_ITERABLE_COROUTINE: "a generator-based coroutine"}


def _fence_kind(src: Source, func) -> None:
    """Reject coroutines and generators: calling one returns an awaitable or
    an iterator, not a value to differentiate."""
    for flag, kind in _NOT_A_FUNCTION.items():
        if func.__code__.co_flags & flag:
            raise UnsupportedSyntaxError(
                f"s2s_ad cannot differentiate {src.name!r}: it is {kind}",
                src.locate(src.tree),
                hint="differentiate a plain `def` function that returns its "
                     "value; call the async or generator code outside it")


def _def_tree(lines: list[str], func, where: Location):
    """The `def` that compiled to `func.__code__`, without its decorators.

    The source is the code object's own, so a function made by a decorator
    is differentiated as what runs: the wrapper, not the function it wraps
    (its `__wrapped__`).  Dropping the decorators is then exact: they ran
    already, and `func` is the function they returned."""
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    module = gastparse.parse(dedented)
    fdef = module.body[0]
    if not isinstance(fdef, (gast.FunctionDef, gast.AsyncFunctionDef)) or \
            fdef.name != func.__code__.co_name:
        raise SourceUnavailableError(
            f"the source found for {func.__qualname__!r} is not its definition",
            where, hint="define the function with a plain `def` in a .py file")
    fdef.decorator_list = []
    if getattr(func, "__wrapped__", None) is not None and (fdef.args.vararg or fdef.args.kwarg):
        inner = func.__wrapped__
        raise UnsupportedSyntaxError(
            f"{func.__qualname__!r} is the wrapper {fdef.name}(...) that a decorator "
            f"made around {getattr(inner, '__qualname__', inner)!r}; s2s_ad "
            "differentiates what runs, and cannot follow its *args/**kwargs",
            where, hint=f"differentiate {func.__name__}.__wrapped__ if the decorator "
                        "does not change the value, or give the wrapper explicit parameters")
    return fdef, dedented.splitlines(), indent


def _lambda_tree(func, filename: str):
    """Parse the whole file and turn the lambda that compiled to
    `func.__code__` into a def."""
    file_lines = linecache.getlines(filename)
    code = func.__code__
    module = gastparse.parse("".join(file_lines))
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    candidates = [node for node in gast.walk(module)
                  if isinstance(node, gast.Lambda) and node.lineno == code.co_firstlineno
                  and [a.id for a in node.args.posonlyargs + node.args.args
                       + node.args.kwonlyargs] == params]
    node = _pick_lambda(candidates, code, Location(filename, code.co_firstlineno, 0))
    body = [astutil.ret(node.body)]
    gast.copy_location(body[0], node.body)
    fdef = astutil.function_def("<lambda>", node.args, body)
    gast.copy_location(fdef, node)
    return fdef, [ln.rstrip("\n") for ln in file_lines], 1, 0


def _pick_lambda(candidates: list, code, where: Location) -> gast.Lambda:
    """The lambda among `candidates` (same line, same parameters) whose body
    spans exactly the code's instruction positions (Python 3.11+), e.g. the
    second of `[lambda x: np.sin(x), lambda x: np.cos(x)]`.  Without
    positions (Python 3.10, `-X no_debug_ranges`) a line with several such
    lambdas is a located error: never a guess."""
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise SourceUnavailableError("cannot find the source of this lambda", where,
                                     hint="write it as a `def` function")
    span = _code_span(code)
    exact = [n for n in candidates if span == ((n.body.lineno, n.body.col_offset),
                                               (n.body.end_lineno, n.body.end_col_offset))]
    if span is None or len(exact) != 1:
        raise SourceUnavailableError(
            f"cannot tell which of the {len(candidates)} lambdas with these parameters "
            "on this line is the one to differentiate", where,
            hint="put each lambda on a line of its own, or write it as a `def`")
    return exact[0]


def _code_span(code) -> tuple | None:
    """((line, col), (end line, end col)) covered by a code object's
    instructions, or None when Python does not record columns."""
    positions = getattr(code, "co_positions", None)
    spans = [p for p in (positions() if positions else ())
             if None not in p and (p[0], p[2]) != (p[1], p[3])]
    if not spans:
        return None
    return min((p[0], p[2]) for p in spans), max((p[1], p[3]) for p in spans)


def fence(src: Source, body: list) -> None:
    """Reject statements s2s_ad never differentiates, with their location."""
    for stmt in body:
        for node in traversal.walk(stmt):
            kind = _FENCED.get(type(node)) or _FENCED_EXPR.get(type(node))
            if kind is not None:
                article = "an" if kind[0] in "aeiou" else "a"
                raise UnsupportedSyntaxError(
                    f"s2s_ad cannot differentiate {article} {kind}",
                    src.locate(node),
                    hint="move it out of the differentiated function, or wrap "
                         "the value it computes in `stop_gradient(...)`")
