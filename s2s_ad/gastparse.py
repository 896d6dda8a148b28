"""Parsing into gast: `parse(text)` is `gast.parse(text)`, node for node.

Why: gast parses with Python's parser, then converts the `ast` tree into
its own nodes with an `ast.NodeTransformer` that, per node, finds its
method by name, builds a dict of the fields by a comprehension over their
names, and copies the positions in a loop: most of the time the frontend
takes to read a function (a thousand-line function takes tens of
milliseconds).  `_Converter` is gast's converter with the method of each
node class looked up once per class, and the classes it has no method of
its own for (all but a few: `Name`, `arg`, `FunctionDef`, ...) converted
by a function of straight-line code generated per class on first use
(`_Generic`): what gast's `generic_visit` does, field by field, reading
the fields from each class's `_fields`, building the node with gast's
constructor.  The classes gast converts by a method of its own still go
through it (their children come back here).

Invariants: the result equals `gast.parse`'s (same classes, same fields
in the same order, same positions; tests compare the two); the `ast` tree
is not changed.
"""
from __future__ import annotations

import ast

import gast
from gast.ast3 import Ast3ToGAst


class _Converter(Ast3ToGAst):
    """gast's `ast` -> gast converter, dispatching per class."""

    def visit(self, node):
        return _METHODS[type(node)](self, node)

    def generic_visit(self, node):
        return _GENERIC[type(node)](self, node)


class _Methods(dict):
    """{`ast` class: the converter's method for it}, found once per class
    the way `ast.NodeVisitor` finds it per node (by the class's name)."""

    def __missing__(self, cls):
        method = getattr(_Converter, "visit_" + cls.__name__, None)
        if method is None:
            method = _GENERIC[cls]
        self[cls] = method
        return method


class _Generic(dict):
    """{`ast` class: gast's `generic_visit` for it, as straight-line code}:
    each field the node has, converted (a node by its class's method, a
    list item by item, any other value as it is), given to the gast class
    of the same name, then each position the node has copied."""

    def __missing__(self, cls):
        target = getattr(gast, cls.__name__, None)
        if target is None:          # (gast's: a class it does not have is dropped)
            def convert(converter, node):
                return None
            self[cls] = convert
            return convert
        lines = ["def convert(converter, node):", "    fields = {}"]
        for field in cls._fields:
            lines += ["    try:", f"        value = node.{field}",
                      "    except AttributeError:", "        pass", "    else:",
                      "        if isinstance(value, AST):",
                      "            value = methods[type(value)](converter, value)",
                      "        elif isinstance(value, list):",
                      "            value = [methods[type(v)](converter, v) if isinstance(v, AST)",
                      "                     else converter._visit(v) for v in value]",
                      f"        fields[{field!r}] = value"]
        lines += ["    new = make(target)", "    new.__dict__.update(fields)"]
        for attr in cls._attributes:
            lines += ["    try:", f"        new.{attr} = node.{attr}",
                      "    except AttributeError:", "        pass"]
        namespace = {"AST": ast.AST, "methods": _METHODS, "target": target,
                     "make": target.__new__}
        exec(compile("\n".join(lines + ["    return new"]), f"<gast {cls.__name__}>", "exec"),
             namespace)
        self[cls] = namespace["convert"]
        return self[cls]


def _name(converter, node):
    """gast's `visit_Name`: a `Name` with no annotation, in a new context
    node, with the positions `ast.copy_location` copies (a parsed name has
    all four), without gast's constructor call and `copy_location`'s loop
    (names are a third of a function's nodes)."""
    new = _make_name(gast.Name)
    new.__dict__.update(id=node.id, ctx=_METHODS[type(node.ctx)](converter, node.ctx),
                        annotation=None, type_comment=None, lineno=node.lineno,
                        col_offset=node.col_offset, end_lineno=node.end_lineno,
                        end_col_offset=node.end_col_offset)
    return new


_make_name = gast.Name.__new__
_METHODS = _Methods({ast.Name: _name})
_GENERIC = _Generic()


def parse(text: str):
    """`gast.parse(text)`: the module's gast tree."""
    return _Converter().visit(ast.parse(text))
