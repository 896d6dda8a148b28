"""Traversals of gast trees: every node in order (`walk`), bottom-up and
in-place rewrites (`transform`, `rewrite_children`), and line numbers for
printing (`number_lines`).

The compiler's passes walk generated code of thousands of statements many
times over, so these are written for speed: child fields are looked up once
per node class, and nothing dispatches on method names the way
`ast.NodeVisitor` does.  Nodes are only visited or replaced here, never
built (astutil.py builds them).
"""
from __future__ import annotations

from typing import Iterator

import gast

_AST = gast.AST


def walk(node) -> Iterator[gast.AST]:
    """Every node of the tree under `node` (a node or a list of them), the
    node first, then its children depth first, in field order (source
    order, mostly).  `gast.walk`'s nodes in another order, without the
    expression contexts (`Load`, `Store`), and several times faster: the
    passes walk generated code of thousands of statements repeatedly."""
    stack = list(reversed(node)) if isinstance(node, list) else [node]
    pop, push, pushers = stack.pop, stack.append, _PUSHERS
    while stack:
        node = pop()
        yield node
        try:
            pushers[type(node)](node, push)
        except KeyError:
            _push_children(node, push)


def walk_outside(nodes: list, scopes: tuple) -> Iterator[gast.AST]:
    """`walk` of the nodes `nodes`, not descending into a node of a class
    in `scopes` (a nested function's own statements), which is yielded."""
    stack = list(reversed(nodes))
    pop, push, pushers = stack.pop, stack.append, _PUSHERS
    while stack:
        node = pop()
        yield node
        if not isinstance(node, scopes):
            try:
                pushers[type(node)](node, push)
            except KeyError:
                _push_children(node, push)


def _push_children(node, push) -> None:
    """Push the nodes `node` holds, last first (so they pop in field order)."""
    pusher = _PUSHERS.get(type(node))
    if pusher is None:
        pusher = _PUSHERS[type(node)] = _pusher(type(node))
    pusher(node, push)


_CHILD_FIELDS: dict = {}
_PUSHERS: dict = {}


def _child_fields(cls) -> tuple:
    """The fields of `cls` that may hold nodes (not `ctx`, `type_comment`)."""
    fields = _CHILD_FIELDS[cls] = tuple(
        f for f in cls._fields if f not in ("ctx", "type_comment"))
    return fields


def _pusher(cls):
    """`_push_children` for nodes of class `cls`: straight-line code reading
    each of its fields by name (a loop over the field names costs twice as
    much, and the passes push about a million children per 1,000-statement
    compile).  A field may hold a node, a list of them, or anything else."""
    lines = ["def push_children(node, push):"]
    for field in reversed(_CHILD_FIELDS.get(cls) or _child_fields(cls)):
        lines += [f"    child = getattr(node, {field!r}, None)",
                  "    if type(child) is list:",
                  "        for item in reversed(child):",
                  "            if isinstance(item, AST):",
                  "                push(item)",
                  "    elif isinstance(child, AST):",
                  "        push(child)"]
    namespace = {"AST": _AST}
    exec(compile("\n".join(lines + ["    return None"]), f"<push {cls.__name__}>", "exec"),
         namespace)
    return namespace["push_children"]


def transform(node, visit):
    """`node` with every node under it rewritten bottom-up, in place where
    the parents stay: each child is replaced by its own transform, then the
    node by `visit(node)` (the node itself to keep it).  A `NodeTransformer`
    without the per-node method dispatch, for expressions (recursive: their
    depth is small)."""
    fields = _CHILD_FIELDS.get(type(node))
    for field in _child_fields(type(node)) if fields is None else fields:
        child = getattr(node, field, None)
        if type(child) is list:
            for i, item in enumerate(child):
                if isinstance(item, _AST):
                    child[i] = transform(item, visit)
        elif isinstance(child, _AST):
            setattr(node, field, transform(child, visit))
    return visit(node)


def rewrite_children(tree, replace) -> None:
    """Every node under `tree` replaced, in place, by `replace(node)` (the
    node itself to keep it); what a replacement holds is not visited.  A
    `NodeTransformer` for passes over thousands of statements: each node's
    children are offered to `replace` in field order, parents in `walk`'s
    order, by straight-line code per node class."""
    for node in tree if isinstance(tree, list) else (tree,):
        if isinstance(node, _AST):
            (_REWRITERS.get(type(node)) or _make_rewriter(type(node)))(node, replace)


_REWRITERS: dict = {}


def _make_rewriter(cls):
    rewriter = _REWRITERS[cls] = _rewriter(cls)
    return rewriter


def _rewriter(cls):
    """`rewrite_children` of one node of class `cls`: replace its children,
    then descend into each (the original: a replacement is not visited)."""
    lines = ["def rewrite(node, replace):", "    kids = []"]
    for field in _CHILD_FIELDS.get(cls) or _child_fields(cls):
        lines += [f"    child = getattr(node, {field!r}, None)",
                  "    if type(child) is list:",
                  "        for i, item in enumerate(child):",
                  "            if isinstance(item, AST):",
                  "                new = replace(item)",
                  "                if new is not item:",
                  "                    child[i] = new",
                  "                kids.append(item)",
                  "    elif child is not None and isinstance(child, AST):",
                  "        new = replace(child)",
                  "        if new is not child:",
                  f"            node.{field} = new",
                  "        kids.append(child)"]
    lines += ["    for kid in kids:",
              "        (get(type(kid)) or make(type(kid)))(kid, replace)"]
    namespace = {"AST": _AST, "get": _REWRITERS.get, "make": _make_rewriter}
    exec(compile("\n".join(lines), f"<rewrite {cls.__name__}>", "exec"), namespace)
    return namespace["rewrite"]


def names(node) -> list:
    """The `Name` nodes under `node` (a node or a list), in `walk`'s order:
    `walk` filtered, several times faster (the passes ask what each
    statement reads and binds many times over): each node class has a
    collector of its own, straight-line code over its fields."""
    out: list = []
    for item in node if isinstance(node, list) else (node,):
        if type(item) is _NAME:
            out.append(item)
            if getattr(item, "annotation", None) is not None:
                _collect_names(item, out)
        elif isinstance(item, _AST):
            _collect_names(item, out)
    return out


_NAME = gast.Name
_COLLECTORS: dict = {}


def _collect_names(node, out: list) -> None:
    (_COLLECTORS.get(type(node)) or _make_collector(type(node)))(node, out)


def _make_collector(cls):
    collector = _COLLECTORS[cls] = _collector(cls)
    return collector


def _collector(cls):
    """`_collect_names` for nodes of class `cls`: append the `Name` nodes
    under a node to `out`, in field order, recursing into other nodes (the
    depth of an expression is small)."""
    lines = ["def collect(node, out):"]
    for field in _CHILD_FIELDS.get(cls) or _child_fields(cls):
        lines += [f"    child = getattr(node, {field!r}, None)",
                  "    if type(child) is list:",
                  "        for item in child:",
                  "            if type(item) is Name:",
                  "                out.append(item)",
                  "                if getattr(item, 'annotation', None) is not None:",
                  "                    collect_names(item, out)",
                  "            elif isinstance(item, AST):",
                  "                (get(type(item)) or make(type(item)))(item, out)",
                  "    elif type(child) is Name:",
                  "        out.append(child)",
                  "        if getattr(child, 'annotation', None) is not None:",
                  "            collect_names(child, out)",
                  "    elif child is not None and isinstance(child, AST):",
                  "        (get(type(child)) or make(type(child)))(child, out)"]
    namespace = {"AST": _AST, "Name": _NAME, "collect_names": _collect_names,
                 "get": _COLLECTORS.get, "make": _make_collector}
    exec(compile("\n".join(lines + ["    return None"]), f"<names {cls.__name__}>", "exec"),
         namespace)
    return namespace["collect"]


def number_lines(tree) -> None:
    """Give each statement under `tree` that has none a line number, in
    place: gast's unparser reads it (for type comments), and only there
    (cheaper than `fix_missing_locations`, which locates every node)."""
    for node in walk(tree):
        if isinstance(node, gast.stmt) and not hasattr(node, "lineno"):
            node.lineno = 1
