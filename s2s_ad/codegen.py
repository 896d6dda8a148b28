"""Code generation: gast -> source text -> a live Python function.

The generated function:
- has the text of `source` registered in `linecache` under a synthetic file
  name, so `inspect.getsource`, tracebacks and pdb show its lines, for as
  long as the function lives;
- runs with the primal's module globals (late-bound, like the primal), so
  user helpers and module constants resolve as they do in the user's code;
- is noted in `runtime.origins`, so that a run-time helper's error (an
  output that is no scalar, a complex gradient) names the user's function;
- reads s2s_ad's own imports (`np`, `rt`, ...) and the primal's closure
  variables from closure cells; the primal's cells are shared, not copied,
  and nothing is added to the user's module.

Invariants: the same tree gives byte-identical text and the same file name;
generated text that does not compile raises `InternalError` (a bug in
s2s_ad), never a bare `SyntaxError`.
"""
from __future__ import annotations

import ast
import copy
import hashlib
import linecache
import re
import types

import gast

from . import astutil, runtime, traversal, unparsing
from .errors import InternalError, location_of
from .sourcelines import hold_lines

_MARK = "__s2s_ad_comment__"       # (printing only: a comment line, see _printable)
_COMMENT = re.compile(r"^(\s*)" + _MARK + r"\((.*)\)$", re.M)
_FACTORY = "__s2s_ad_factory__"


def to_source(fdef: gast.FunctionDef) -> str:
    printable = copy.copy(fdef)
    printable.body = _printable(fdef.body)
    module = astutil.module([printable])
    traversal.number_lines(module)
    text = unparsing.unparse(module)
    text = _COMMENT.sub(_comment, text)
    return text.rstrip() + "\n"


def _printable(body: list) -> list:
    """`body` with each `Block` as its comment line (a call of `_MARK`,
    replaced in the text) and its statements, and a pair's `Split` as a
    comment; the statements themselves are shared, not copied."""
    out = []
    for stmt in body:
        if isinstance(stmt, astutil.Block):
            out += [_mark(stmt.origin)] + _printable(stmt.body)
        elif isinstance(stmt, astutil.Split):
            out.append(_mark("the forward half returns " + astutil.unparse(stmt.value)))
        elif isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt = copy.copy(stmt)
            stmt.body, stmt.orelse = _printable(stmt.body), _printable(stmt.orelse)
            out.append(stmt)
        elif isinstance(stmt, gast.With):
            stmt = copy.copy(stmt)
            stmt.body = _printable(stmt.body)
            out.append(stmt)
        else:
            out.append(stmt)
    return out


def _mark(text: str) -> gast.stmt:
    return astutil.expr_stmt(astutil.call(_MARK, [astutil.const(text)]))


def _comment(match) -> str:
    """A comment marker printed as `# text`; every line of a text that spans
    several (a user line with a multi-line string) is commented, so none of
    it can run as code."""
    indent, text = match.group(1), _literal(match.group(2))
    return "\n".join(indent + "# " + line for line in text.splitlines() or [""])


def _literal(text: str) -> str:
    """The string a printed string literal holds: one in single quotes
    with no backslash or quote inside holds its text as it is (most
    comments: no parse each), any other is parsed."""
    inner = text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == "'" and "\\" not in inner \
            and "'" not in inner:
        return inner
    return ast.literal_eval(text)


# a generated function's attribute holding its text (what `s2s_ad.source` shows)
SOURCE = "__s2s_ad_source__"


def compile_functions(text: str, qualname: str, globals_: dict, imports: dict,
                      closure: dict, primal, hidden: str = "") -> list:
    """Compile the `def`s of `text` together (they may call each other, e.g.
    a recursive forward/backward pair); returns them in order.  The defs of
    `hidden` (a staleness check) are compiled in the same scope, sharing its
    cells, and returned after them."""
    shown = text.count("\n")
    text += hidden
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    filename = f"<s2s_ad {qualname} {digest}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    try:
        tree = ast.parse(text, filename)
    except (SyntaxError, ValueError) as exc:
        raise _not_compiling(exc, text, primal) from None
    several = sum(d.lineno <= shown for d in tree.body) > 1
    code = _factory(tree.body, sorted(set(imports) | set(closure)), filename, text, primal)
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    make = types.FunctionType(factory_code, globals_, _FACTORY)
    free = factory_code.co_varnames[:factory_code.co_argcount]
    values = {**{n: _Missing for n in closure}, **imports}
    # (a derivative of derived code is located at the user's function it came from)
    origin = runtime.origins.get(getattr(primal, "__code__", None)) or location_of(primal)
    fns, lines = [], text.splitlines(True)
    for fn, fdef in zip(make(*[values.get(n) for n in free]), tree.body):
        fn = _share_cells(fn, closure, globals_)
        setattr(fn, SOURCE, "".join(lines[fdef.lineno - 1:fdef.end_lineno]))
        runtime.origins[fn.__code__] = origin       # locates the helpers' errors
        fn.__module__ = primal.__module__
        fn.__qualname__ = f"{qualname}.{fn.__name__}" if several else qualname
        fns.append(fn)
    hold_lines(filename, text, fns[0])
    by_name = {fn.__name__: fn for fn in fns}
    for fn in fns:      # defs calling each other must see the rebuilt functions
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            if name in by_name:
                cell.cell_contents = by_name[name]
    fns[0].__defaults__ = primal.__defaults__
    fns[0].__kwdefaults__ = primal.__kwdefaults__
    return fns


def _factory(defs: list, free: list, filename: str, text: str, primal) -> types.CodeType:
    """The code of `def factory(<free>): <defs>; return <the defs>`: the
    generated functions read `free` (imports, closure) from its cells."""
    for fdef in defs:       # the primal's defaults are set by the caller, unevaluated here
        fdef.args.defaults, fdef.args.kw_defaults = [], [None] * len(fdef.args.kwonlyargs)
    names = ast.Tuple(elts=[ast.Name(id=d.name, ctx=ast.Load()) for d in defs],
                      ctx=ast.Load())
    factory = ast.FunctionDef(
        name=_FACTORY, args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=n) for n in free], vararg=None,
            kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=defs + [ast.Return(value=names)],
        decorator_list=[], returns=None, type_params=[])
    for node in [factory, *factory.args.args, factory.body[-1], names, *names.elts]:
        ast.copy_location(node, defs[0])    # (the defs, parsed, are located)
    try:
        return compile(ast.Module(body=[factory], type_ignores=[]), filename, "exec")
    except (SyntaxError, ValueError) as exc:
        raise _not_compiling(exc, text, primal) from None


def check_generated(text: str, primal) -> None:
    """Raise `InternalError` unless the generated `text` compiles."""
    try:
        compile(text, "<s2s_ad>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise _not_compiling(exc, text, primal) from None


def _not_compiling(exc: Exception, text: str, primal) -> InternalError:
    line = f", generated line {exc.lineno}" if getattr(exc, "lineno", None) else ""
    return InternalError(
        f"internal error: s2s_ad generated code for {primal.__qualname__!r} that "
        f"does not compile ({type(exc).__name__}: {getattr(exc, 'msg', exc)}{line})",
        location_of(primal), generated=text)


class _Missing:
    """Placeholder for a closure variable; replaced by the primal's own cell."""


def _share_cells(fn, closure: dict, globals_: dict):
    """Rebuild `fn` so its free variables from the primal use the primal's cells."""
    if not fn.__code__.co_freevars:
        return fn
    cells = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
        cells.append(closure.get(name, cell))
    return types.FunctionType(fn.__code__, globals_, fn.__name__,
                              fn.__defaults__, tuple(cells))
