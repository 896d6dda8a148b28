"""Source text of gast trees: gast's own unparser, its hot paths made fast.

What: `unparse(tree)` is `gast.unparse(tree)`, character for character.

Why: printing is a sizeable share of a compile (codegen prints every
generated function, and each `# grad of:` comment prints a user line),
and most of gast's printing time goes to its machinery, not to the text:
a method found by name per node (`ast.NodeVisitor`), a generator context
manager per operator for its parentheses, argument tuples per write.
`_Printer` is gast's `_Unparser` with the method of each node class looked
up once per class, and the node kinds generated code is made of (names,
constants, operators, calls, attributes, subscripts, assignments,
expression statements, `del`, `return`) printed by methods of
straight-line code that do what gast's do, in the same order, on the same
state: the text buffer, the indentation and the table of precedences
(which gast keeps per node for the whole print, so a node printed twice
reads what it was last given: kept as it is).  Every other kind is gast's
method, unchanged.

Invariants: the output is `gast.unparse`'s for every tree (tests compare
the two over generated code and the fuzz programs); nothing here builds a
node.
"""
from __future__ import annotations

import ast

import gast
from gast.unparser import _INFSTR, _Precedence, _Unparser

_TEST, _TUPLE, _ATOM, _YIELD = _Precedence.TEST, _Precedence.TUPLE, _Precedence.ATOM, \
    _Precedence.YIELD
_FACTOR = _Precedence.FACTOR


class _Printer(_Unparser):
    """gast's unparser, dispatching per class through `_METHODS`."""

    def traverse(self, node):
        if isinstance(node, list):
            for item in node:
                self.traverse(item)
        else:
            _METHODS[type(node)](self, node)

    def fill(self, text="", allow_semicolon=True):
        if self._in_interactive:
            return _Unparser.fill(self, text, allow_semicolon)
        source = self._source
        if source:
            source.append("\n")
        source.append("    " * self._indent + text)

    # -- statements ----------------------------------------------------------
    def visit_Assign(self, node):
        self.fill()
        precedences = self._precedences
        for target in node.targets:
            precedences[target] = _TUPLE
            self.traverse(target)
            self._source.append(" = ")
        self.traverse(node.value)
        comment = self._type_ignores.get(node.lineno) or node.type_comment
        if comment is not None:
            self._source.append(" # type: {}".format(comment))

    def visit_Expr(self, node):
        self.fill()
        self._precedences[node.value] = _YIELD
        self.traverse(node.value)

    def visit_Return(self, node):
        self.fill("return")
        if node.value:
            self._source.append(" ")
            self.traverse(node.value)

    def visit_Delete(self, node):
        self.fill("del ")
        first = True
        for target in node.targets:
            if not first:
                self._source.append(", ")
            first = False
            self.traverse(target)

    # -- expressions ---------------------------------------------------------
    def visit_Name(self, node):
        self._source.append(node.id)
        if node.annotation:
            self._source.append(": ")
            self.traverse(node.annotation)

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, tuple) or value is Ellipsis:
            return _Unparser.visit_Constant(self, node)
        if node.kind == "u":
            self._source.append("u")
        if isinstance(value, (float, complex)):
            self._source.append(repr(value).replace("inf", _INFSTR)
                                .replace("nan", "({0}-{0})".format(_INFSTR)))
        else:
            self._source.append(repr(value))

    def visit_BinOp(self, node):
        text, precedence, right_assoc = _BINOPS[node.op.__class__.__name__]
        precedences = self._precedences
        parens = precedences.get(node, _TEST) > precedence
        if parens:
            self._source.append("(")
        precedences[node.left] = precedence + right_assoc
        self.traverse(node.left)
        self._source.append(text)
        precedences[node.right] = precedence + 1 - right_assoc
        self.traverse(node.right)
        if parens:
            self._source.append(")")

    def visit_UnaryOp(self, node):
        operator = self.unop[node.op.__class__.__name__]
        precedence = self.unop_precedence[operator]
        precedences = self._precedences
        parens = precedences.get(node, _TEST) > precedence
        if parens:
            self._source.append("(")
        self._source.append(operator)
        if precedence is not _FACTOR:
            self._source.append(" ")
        precedences[node.operand] = precedence
        self.traverse(node.operand)
        if parens:
            self._source.append(")")

    def visit_Attribute(self, node):
        self._precedences[node.value] = _ATOM
        self.traverse(node.value)
        if isinstance(node.value, gast.Constant) and isinstance(node.value.value, int):
            self._source.append(" ")
        self._source.append(".")
        self._source.append(node.attr)

    def visit_Call(self, node):
        self._precedences[node.func] = _ATOM
        self.traverse(node.func)
        self._source.append("(")
        comma = False
        for part in (node.args, node.keywords):
            for e in part:
                if comma:
                    self._source.append(", ")
                else:
                    comma = True
                self.traverse(e)
        self._source.append(")")

    def visit_keyword(self, node):
        if node.arg is None:
            self._source.append("**")
        else:
            self._source.append(node.arg)
            self._source.append("=")
        self.traverse(node.value)

    def visit_Subscript(self, node):
        self._precedences[node.value] = _ATOM
        self.traverse(node.value)
        self._source.append("[")
        index = node.slice
        if isinstance(index, gast.Tuple) and index.elts:
            self._items(index.elts)
        else:
            self.traverse(index)
        self._source.append("]")

    def visit_Tuple(self, node):
        parens = len(node.elts) == 0 or self._precedences.get(node, _TEST) > _TUPLE
        if parens:
            self._source.append("(")
        self._items(node.elts)
        if parens:
            self._source.append(")")

    def _items(self, items):
        """gast's `items_view(self.traverse, items)`."""
        if len(items) == 1:
            self.traverse(items[0])
            self._source.append(",")
            return
        first = True
        for item in items:
            if not first:
                self._source.append(", ")
            first = False
            self.traverse(item)


# each operator's (text with its spaces, precedence, 1 if right-associative)
_BINOPS = {name: (" {} ".format(text), _Unparser.binop_precedence[text],
                  int(text in _Unparser.binop_rassoc))
           for name, text in _Unparser.binop.items()}


class _Methods(dict):
    """{node class: the printer's method for it}, found once per class the
    way `ast.NodeVisitor` finds it per node (by the class's name)."""

    def __missing__(self, cls):
        method = getattr(_Printer, "visit_" + cls.__name__, None)
        if method is None:
            def method(printer, node):
                return ast.NodeVisitor.visit(printer, node)
        self[cls] = method
        return method


_METHODS = _Methods()



def unparse(tree) -> str:
    """`gast.unparse(tree)`."""
    return _Printer().visit(tree)
