"""Code's text by file name, through `linecache`: a function's source
lines, read fast, and the text of generated code, held there while the
functions compiled from it live.

- `source_lines(code)` is what `inspect.getsourcelines(code)` returns,
  read once per code object while its file on disk is unchanged; where
  the code's first line is its `def`, lambda or decorator the block is cut
  from `linecache` at the end Python's parser gives (`_def_ends`, one
  parse per file) instead of inspect's scan of every loaded module.
- `hold_lines` puts generated text into `linecache` under its synthetic
  file name (for tracebacks, pdb and `inspect`) and keeps it, with the
  map from its positions to the user's code (`held_origins`), for as long
  as any function owning it lives; `reinstate_lines` puts it back after
  `linecache.clearcache()`.

Invariants: nothing here parses into gast or knows a `Source`; the tables
are bounded (cleared when full) or freed with their owners.  Imports the
standard library only.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import os
import re
import types
import weakref


_SOURCE_LINES: dict = {}     # code object -> (file's mtime, lines, first line)
_LINES_HELD: dict = {}       # synthetic file name -> live functions showing its lines
_LINES_TEXT: dict = {}       # synthetic file name -> its text, while held
_ORIGINS: dict = {}          # synthetic file name -> its `Source.origins`, while held
_DEF_ENDS: dict = {}         # file name -> (its lines, {a def's first line: its last})


def hold_lines(filename: str, text: str, owner, origins: dict | None = None) -> None:
    """Keep generated `text` in `linecache` under `filename` (for tracebacks,
    pdb and `inspect`) while the function `owner` lives, and no longer;
    `origins` maps positions in it to the user's code it was made from
    (`Source.origins`: errors are located there)."""
    _LINES_TEXT[filename] = text
    if origins:
        _ORIGINS[filename] = origins
    reinstate_lines(filename)
    _LINES_HELD[filename] = _LINES_HELD.get(filename, 0) + 1
    weakref.finalize(owner, _release_lines, filename)


def reinstate_lines(filename: str) -> None:
    """Put held lines back into `linecache` (`linecache.clearcache()`, or a
    tool that calls it, may have dropped them)."""
    text = _LINES_TEXT.get(filename)
    if text is not None and filename not in linecache.cache:
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)


def _release_lines(filename: str) -> None:
    left = _LINES_HELD.pop(filename, 1) - 1
    if left:
        _LINES_HELD[filename] = left
    else:
        linecache.cache.pop(filename, None)
        _LINES_TEXT.pop(filename, None)
        _ORIGINS.pop(filename, None)


def held_origins(filename: str) -> dict:
    """The `Source.origins` held with generated `filename`'s lines (see
    `hold_lines`), else an empty dict."""
    return _ORIGINS.get(filename, {})


def source_lines(code: types.CodeType) -> tuple[list, int]:
    """`inspect.getsourcelines(code)`, read once per code object while its
    file is unchanged (the frontend and the alias analysis of its callers
    both read a callee)."""
    try:
        mtime = os.stat(code.co_filename).st_mtime_ns
    except (OSError, ValueError):
        mtime = None                # a synthetic file: linecache holds it
    hit = _SOURCE_LINES.get(code)
    if hit is not None and mtime is not None and hit[0] == mtime:
        return list(hit[1]), hit[2]
    lines, first = _block_at(code) or inspect.getsourcelines(code)
    if len(_SOURCE_LINES) > 1024:
        _SOURCE_LINES.clear()
    _SOURCE_LINES[code] = (mtime, tuple(lines), first)
    return list(lines), first


_HEADER = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def _block_at(code: types.CodeType) -> tuple[list, int] | None:
    """What `inspect.getsourcelines(code)` returns, read from `linecache`
    directly when the code's first line is its `def`, lambda or decorator
    (inspect first scans every loaded module for the code's own: tens of
    milliseconds); None otherwise."""
    filename = code.co_filename
    if not (filename.startswith("<") and filename.endswith(">")):
        linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    at = code.co_firstlineno - 1
    if not 0 <= at < len(lines) or not _HEADER.match(lines[at]):
        return None
    end = _def_ends(filename, lines).get(at + 1)
    return (lines[at:end] if end else inspect.getblock(lines[at:])), at + 1


def _through_comments(lines: list, end: int, body_column: int) -> int:
    """`end`, or the last of the comment lines that follow it indented as
    the body (`inspect.getblock` counts them in)."""
    for at in range(end, len(lines)):
        text = lines[at].lstrip()
        if text.startswith("#") and len(lines[at]) - len(text) >= body_column:
            end = at + 1
        elif text.strip():
            break
    return end


def _def_ends(filename: str, lines: list) -> dict:
    """{first line of each `def` in the file (its first decorator's): its
    last line}, from Python's own parser: what `inspect.getblock` finds
    (the end of its last statement), without tokenizing the file in
    Python for each function.  Empty where the text does not parse."""
    held = _DEF_ENDS.get(filename)
    if held is not None and held[0] is lines:
        return held[1]
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        tree = None
    ends, todo = {}, list(tree.body) if tree is not None else []
    while todo:                 # (statements only: a def is never in an expression)
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            ends[first] = _through_comments(lines, node.end_lineno, node.body[0].col_offset)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo.extend(getattr(node, field, None) or ())
    if len(_DEF_ENDS) > 64:
        _DEF_ENDS.clear()
    _DEF_ENDS[filename] = (lines, ends)
    return ends
