"""Delta debugging: shrink a failing program while it keeps failing with the
same (outcome, signature).

Passes, repeated until none makes progress (or the run budget is spent):
    1. delete chunks of statements from every statement list (halves, then
       quarters, ... then single statements); a body left empty gets `pass`
    2. replace a compound statement by one of its bodies
    3. replace an expression by one of its operands, or by `1.0` (also a name)
    4. drop parameters of the entry function that `wrt` does not name
Every candidate is re-run in full, so the result is a valid program with the
same failure signature, printed through `ast.unparse`.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import time

from .program import Program

_COMPOUND = (ast.If, ast.For, ast.While, ast.With)


class Minimizer:
    """Shrinks `prog` while `judge(candidate)` equals `judge(prog)`."""

    def __init__(self, prog: Program, judge, max_runs: int = 3000, max_seconds: float = 300):
        self.judge = judge
        self.target = judge(prog)
        self.best = prog
        self.runs, self.max_runs = 0, max_runs
        self.deadline = time.monotonic() + max_seconds
        self._try(prog.with_source(ast.unparse(ast.parse(prog.source)) + "\n"))

    def minimize(self) -> Program:
        progress = True
        while progress and not self._spent():
            progress = False
            for step in (self._delete_statements, self._unwrap, self._simplify_exprs,
                         self._drop_params):
                progress = step() or progress
        return self.best

    def _spent(self) -> bool:
        return self.runs >= self.max_runs or time.monotonic() > self.deadline

    def _try(self, prog: Program) -> bool:
        """Keep `prog` if it still fails the same way."""
        if self._spent():
            return False
        self.runs += 1
        if self.judge(prog) == self.target:
            self.best = prog
            return True
        return False

    def _try_tree(self, tree: ast.Module) -> bool:
        try:
            source = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
        except Exception:
            return False
        return source != self.best.source and self._try(self.best.with_source(source))

    def _tree(self) -> ast.Module:
        return ast.parse(self.best.source)

    def _delete_statements(self) -> bool:
        """ddmin over each statement list, coarse chunks first."""
        progress, index = False, 0
        while index < len(_stmt_lists(self._tree())):
            chunk = max(1, len(_stmt_lists(self._tree())[index][2]) // 2)
            while chunk >= 1:
                start = 0
                while True:
                    tree = self._tree()
                    lists = _stmt_lists(tree)
                    if index >= len(lists) or start >= len(lists[index][2]):
                        break
                    owner, fieldname, body = lists[index]
                    del body[start:start + chunk]
                    if not body and fieldname == "body" and not isinstance(owner, ast.Module):
                        body.append(ast.Pass())
                    if self._try_tree(tree):
                        progress = True
                    else:
                        start += chunk
                chunk //= 2
            index += 1
        return progress

    def _unwrap(self) -> bool:
        """Replace an if/for/while/with by its body or its else branch."""
        progress, index = False, 0
        while index < len(_compounds(self._tree())):
            for fieldname in ("body", "orelse"):
                tree = self._tree()
                node = _compounds(tree)[index]
                replacement = getattr(node, fieldname, None)
                if replacement and _replace_stmt(tree, node, replacement) and self._try_tree(tree):
                    progress = True
                    break
            else:
                index += 1
        return progress

    def _simplify_exprs(self) -> bool:
        """Replace an expression by an operand or by 1.0."""
        progress, index = False, 0
        while index < len(_exprs(self._tree())):
            for option in range(len(_options(_exprs(self._tree())[index]))):
                tree = self._tree()
                node = _exprs(tree)[index]
                new = copy.deepcopy(_options(node)[option])
                if _replace_expr(tree, node, new) and self._try_tree(tree):
                    progress = True
                    break
            else:
                index += 1
        return progress

    def _drop_params(self) -> bool:
        """Remove entry parameters that are not differentiated."""
        progress = False
        wrt = {name for name, _ in self.best.wrt}
        for name in _entry_params(self._tree(), self.best.entry):
            if name in wrt:
                continue
            tree = self._tree()
            _remove_param(tree, self.best.entry, name)
            prog = self.best
            if name in prog.params:
                i = prog.params.index(name)
                prog = dataclasses.replace(prog, params=prog.params[:i] + prog.params[i + 1:],
                                           args=prog.args[:i] + prog.args[i + 1:])
            source = ast.unparse(tree) + "\n"
            progress = self._try(prog.with_source(source)) or progress
        return progress


def _stmt_lists(tree) -> list:
    """(owner, field, list) for every statement list, in a fixed order."""
    out = []
    for node in ast.walk(tree):
        for fieldname in ("body", "orelse", "finalbody"):
            body = getattr(node, fieldname, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                out.append((node, fieldname, body))
    return out


def _compounds(tree) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, _COMPOUND)]


def _replace_stmt(tree, node, replacement) -> bool:
    for _, _, body in _stmt_lists(tree):
        for i, item in enumerate(body):
            if item is node:
                body[i:i + 1] = replacement
                return True
    return False


def _exprs(tree) -> list:
    """Expressions worth simplifying (not targets, not bare names/constants)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.expr) and _options(n)
            and not isinstance(getattr(n, "ctx", None), (ast.Store, ast.Del))]


def _options(node) -> list:
    """Simpler expressions that could stand for `node`."""
    if isinstance(node, ast.BinOp):
        return [node.left, node.right, ast.Constant(1.0)]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Call):
        return [a for a in node.args if not isinstance(a, ast.Starred)] + [ast.Constant(1.0)]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.Compare):
        return [ast.Constant(True), ast.Constant(False)]
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return [node.value]
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return [ast.Constant(1.0)]
    if isinstance(node, ast.List) and isinstance(node.ctx, ast.Load) and len(node.elts) > 1:
        return [ast.List(elts=node.elts[:i] + node.elts[i + 1:], ctx=ast.Load())
                for i in range(len(node.elts))]
    if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load) and len(node.elts) > 2:
        return [ast.Tuple(elts=node.elts[:i] + node.elts[i + 1:], ctx=ast.Load())
                for i in range(len(node.elts))]           # pairs stay pairs (has_aux)
    return []


def _replace_expr(tree, node, new) -> bool:
    for parent in ast.walk(tree):
        for fieldname, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, fieldname, new)
                return True
            if isinstance(value, list) and any(v is node for v in value):
                value[[i for i, v in enumerate(value) if v is node][0]] = new
                return True
    return False


def _entry_params(tree, entry: str) -> list:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            return [a.arg for a in node.args.args]
    return []


def _remove_param(tree, entry: str, name: str) -> None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            params, defaults = node.args.args, node.args.defaults
            i = [a.arg for a in params].index(name)
            first_default = len(params) - len(defaults)
            if i >= first_default:
                del defaults[i - first_default]
            del params[i]
