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


def nodes(tree) -> list:
    """`list(walk(tree))`, several times faster: for passes that read a
    whole function's nodes and change none while they do."""
    out: list = []
    for node in tree if isinstance(tree, list) else (tree,):
        if isinstance(node, _AST):
            (_LISTERS.get(type(node)) or _make_lister(type(node)))(node, out)
    return out


_LISTERS: dict = {}


def _make_lister(cls):
    lister = _LISTERS[cls] = _lister(cls)
    return lister


def _lister(cls):
    """`nodes` of one node of class `cls`: the node, then its children's."""
    fields = _CHILD_FIELDS.get(cls) or _child_fields(cls)
    lines = ["def add(node, out):", "    out.append(node)"] + _reads(fields)
    for field in fields:
        lines += [f"    child = c_{field}",
                  "    if type(child) is list:",
                  "        for item in child:",
                  "            if isinstance(item, AST):",
                  "                (get(type(item)) or make(type(item)))(item, out)",
                  "    elif child is not None and isinstance(child, AST):",
                  "        (get(type(child)) or make(type(child)))(child, out)"]
    namespace = {"AST": _AST, "get": _LISTERS.get, "make": _make_lister}
    exec(compile("\n".join(lines), f"<nodes {cls.__name__}>", "exec"), namespace)
    return namespace["add"]


def walk_outside(body: list, scopes: tuple) -> Iterator[gast.AST]:
    """`walk` of the nodes `body`, not descending into a node of a class
    in `scopes` (a nested function's own statements), which is yielded."""
    stack = list(reversed(body))
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


def _reads(fields) -> list:
    """Lines binding `c_<field>` to each field of `node`: by attribute, all
    at once (a node built without an optional field: `getattr`, None)."""
    if not fields:
        return []
    return (["    try:"] + [f"        c_{f} = node.{f}" for f in fields] +
            ["    except AttributeError:"] +
            [f"        c_{f} = getattr(node, {f!r}, None)" for f in fields])


def _pusher(cls):
    """`_push_children` for nodes of class `cls`: straight-line code reading
    each of its fields by name (a loop over the field names costs twice as
    much, and the passes push about a million children per 1,000-statement
    compile).  A field may hold a node, a list of them, or anything else."""
    fields = _CHILD_FIELDS.get(cls) or _child_fields(cls)
    lines = ["def push_children(node, push):"] + _reads(fields)
    for field in reversed(fields):
        lines += [f"    child = c_{field}",
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
    depth is small), by straight-line code per node class."""
    return (_TRANSFORMERS.get(type(node)) or _make_transformer(type(node)))(node, visit)


_TRANSFORMERS: dict = {}


def _make_transformer(cls):
    transformer = _TRANSFORMERS[cls] = _transformer(cls)
    return transformer


def _transformer(cls):
    fields = _CHILD_FIELDS.get(cls) or _child_fields(cls)
    lines = ["def transform(node, visit):"] + _reads(fields)
    for field in fields:
        lines += [f"    child = c_{field}",
                  "    if type(child) is list:",
                  "        for i, item in enumerate(child):",
                  "            if isinstance(item, AST):",
                  "                child[i] = (get(type(item)) or make(type(item)))(item, visit)",
                  "    elif child is not None and isinstance(child, AST):",
                  f"        node.{field} = (get(type(child)) or make(type(child)))(child, visit)"]
    lines.append("    return visit(node)")
    namespace = {"AST": _AST, "get": _TRANSFORMERS.get, "make": _make_transformer}
    exec(compile("\n".join(lines), f"<transform {cls.__name__}>", "exec"), namespace)
    return namespace["transform"]


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
    fields = _CHILD_FIELDS.get(cls) or _child_fields(cls)
    lines = ["def rewrite(node, replace):", "    kids = []"] + _reads(fields)
    for field in fields:
        lines += [f"    child = c_{field}",
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
    fields = _CHILD_FIELDS.get(cls) or _child_fields(cls)
    lines = ["def collect(node, out):"] + _reads(fields)
    for field in fields:
        lines += [f"    child = c_{field}",
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
    for node in statements_in(tree):
        if isinstance(node, gast.stmt) and not hasattr(node, "lineno"):
            node.lineno = 1


def statements_in(tree) -> Iterator[gast.AST]:
    """`tree` and the statements and handlers nested in it, in no set
    order (a statement is never inside an expression)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if type(inner) is list:
                todo.extend(inner)
