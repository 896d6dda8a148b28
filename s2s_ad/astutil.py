"""The one place that builds gast nodes by hand, plus small AST queries.

Everything else in s2s_ad builds nodes through these helpers, so a change in
gast's node layout (the thing that broke Tangent on every release) is mended
here once (tests/test_astutil_only_builder.py checks that no other module
calls a gast node class).  Builders always return fresh nodes; nodes are
never shared between two places in a tree, except the field-less
expression contexts (`Load`, `Store`, `Del`): the builders give one of each
to every node (fewer objects to make and to walk past), and `clone` shares
them.  The
traversals (`walk`, `transform`, ...) are in traversal.py; `clone`, the
deep copy that needs no node's fields, is astcopy.py's (re-exported here).
"""
from __future__ import annotations

from typing import Iterable

import gast

from .astcopy import clone     # re-exported: astutil.clone is what the passes call
from .naming import BUILTINS
from .traversal import number_lines, statements_in
from .unparsing import unparse as _unparse


def _node(cls, **fields):
    """A new `cls` node holding `fields`, as gast's constructor makes it of
    keywords, in a third of its time (a compile builds ten thousands)."""
    node = cls.__new__(cls)
    node.__dict__.update(fields)
    return node


def _ctx(store: bool) -> gast.expr_context:
    """The context of a name, tuple or subscript: assigned to, or read."""
    return _STORE if store else _LOAD


# the contexts the builders give (see the module docstring)
_LOAD, _STORE, _DEL = _node(gast.Load), _node(gast.Store), _node(gast.Del)


def _op(op):
    """An operator node: `op` itself, or a fresh one if it is a class (`gast.Add`)."""
    return _node(op) if isinstance(op, type) else op


def name(id_: str, store: bool = False) -> gast.Name:
    return _node(gast.Name, id=id_, ctx=_ctx(store), annotation=None, type_comment=None)


def param(id_: str) -> gast.Name:
    return _node(gast.Name, id=id_, ctx=_node(gast.Param), annotation=None, type_comment=None)


def const(value) -> gast.expr:
    """A literal; negative numbers become `-c` as Python itself parses them."""
    if isinstance(value, tuple):
        return tuple_([const(v) for v in value])
    if isinstance(value, (int, float)) and not isinstance(value, bool) \
            and value < 0:
        return neg(_node(gast.Constant, value=-value, kind=None))
    return _node(gast.Constant, value=value, kind=None)


def assign(target: str | gast.expr, value: gast.expr) -> gast.Assign:
    tgt = name(target, store=True) if isinstance(target, str) else target
    return _node(gast.Assign, targets=[tgt], value=value, type_comment=None)


def aug_assign(target: str | gast.expr, op, value: gast.expr) -> gast.AugAssign:
    """`target op= value`; `op` is an operator node or class (`gast.Add`)."""
    tgt = name(target, store=True) if isinstance(target, str) else target
    return _node(gast.AugAssign, target=tgt, op=_op(op), value=value)


def binop(left: gast.expr, op, right: gast.expr) -> gast.BinOp:
    """`left op right`; `op` is an operator node or class (`gast.Add`)."""
    return _node(gast.BinOp, left=left, op=_op(op), right=right)


def unary(op, operand: gast.expr) -> gast.UnaryOp:
    """`op operand`; `op` is an operator node or class (`gast.USub`)."""
    return _node(gast.UnaryOp, op=_op(op), operand=operand)


def neg(operand: gast.expr) -> gast.UnaryOp:
    """`-operand`."""
    return unary(gast.USub, operand)


def call(func: gast.expr | str, args: Iterable[gast.expr] = (),
         keywords: Iterable = ()) -> gast.Call:
    """`func(*args, **keywords)`; keywords are (name, value) pairs or keyword nodes."""
    fn = dotted(func) if isinstance(func, str) else func
    kws = [k if isinstance(k, gast.keyword) else _node(gast.keyword, arg=k[0], value=k[1])
           for k in keywords]
    return _node(gast.Call, func=fn, args=list(args), keywords=kws)


def attribute(value: gast.expr, attr: str) -> gast.Attribute:
    """`value.attr`, read."""
    return _node(gast.Attribute, value=value, attr=attr, ctx=_LOAD)


def subscript(value: gast.expr, index: gast.expr, store: bool = False) -> gast.Subscript:
    """`value[index]`, read (or assigned to if `store`)."""
    return _node(gast.Subscript, value=value, slice=index, ctx=_ctx(store))


def slice_(lower: gast.expr | None, upper: gast.expr | None,
           step: gast.expr | None) -> gast.Slice:
    """`lower:upper:step` as a subscript index (None leaves a part out)."""
    return _node(gast.Slice, lower=lower, upper=upper, step=step)


def dotted(path: str) -> gast.expr:
    """`"np.linalg.inv"` -> the Attribute chain that loads it."""
    head, *rest = path.split(".")
    node: gast.expr = name(head)
    for attr in rest:
        node = attribute(node, attr)
    return node


def builtin(ident: str) -> gast.expr:
    """A reference to the builtin `ident` that no user name can capture:
    `__s2s_ad_builtins__.len`, printed as `len` or an alias (see naming.py)."""
    return dotted(f"{BUILTINS}.{ident}")


def builtin_name(node) -> str | None:
    """`"len"` for a node made by `builtin("len")`, else None."""
    if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) \
            and node.value.id == BUILTINS:
        return node.attr
    return None


def dotted_name(node: gast.expr) -> str | None:
    """The inverse of `dotted`: "np.linalg.inv" for that chain, else None."""
    parts = dotted_parts(node)
    return None if parts is None else ".".join(parts)


def dotted_parts(node: gast.expr) -> list[str] | None:
    """["np", "linalg", "inv"] for that chain of attributes (also for a
    dotted name held in one `Name`), else None: what the resolvers read,
    without joining and splitting text."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.extend(reversed(node.id.split(".")))
    parts.reverse()
    return parts


def expr_stmt(value: gast.expr) -> gast.Expr:
    return _node(gast.Expr, value=value)


def ret(value: gast.expr | None) -> gast.Return:
    return _node(gast.Return, value=value)


def tuple_(elts: Iterable[gast.expr], store: bool = False) -> gast.Tuple:
    """`(a, b)`, read (or unpacked into if `store`)."""
    return _node(gast.Tuple, elts=list(elts), ctx=_ctx(store))


def list_(elts: Iterable[gast.expr]) -> gast.List:
    """`[a, b]`, read."""
    return _node(gast.List, elts=list(elts), ctx=_LOAD)


def dict_(keys: Iterable[gast.expr], values: Iterable[gast.expr]) -> gast.Dict:
    """`{k: v, ...}` from parallel keys and values."""
    return _node(gast.Dict, keys=list(keys), values=list(values))


def if_(test: gast.expr, body: list, orelse: list | None = None) -> gast.If:
    return _node(gast.If, test=test, body=body, orelse=orelse or [])


def while_(test: gast.expr, body: list, orelse: list | None = None) -> gast.While:
    """`while test: body` (`else: orelse`)."""
    return _node(gast.While, test=test, body=body, orelse=orelse or [])


def break_() -> gast.Break:
    """`break`."""
    return _node(gast.Break)


def continue_() -> gast.Continue:
    """`continue`."""
    return _node(gast.Continue)


def assert_(test: gast.expr, msg: gast.expr | None = None) -> gast.Assert:
    """`assert test, msg`."""
    return _node(gast.Assert, test=test, msg=msg)


def delete(names: Iterable[str]) -> gast.Delete:
    """`del a, b` for the names `a`, `b`."""
    return _node(gast.Delete, targets=[_node(gast.Name, id=n, ctx=_DEL, annotation=None,
                                             type_comment=None) for n in names])


def compare(left: gast.expr, op, right: gast.expr) -> gast.Compare:
    """`left op right`; `op` is a comparison node or class (`gast.Is`)."""
    return _node(gast.Compare, left=left, ops=[_op(op)], comparators=[right])


def or_(values: list) -> gast.BoolOp:
    return _node(gast.BoolOp, op=_node(gast.Or), values=list(values))


def and_(values: list) -> gast.BoolOp:
    return _node(gast.BoolOp, op=_node(gast.And), values=list(values))


def chain(values: list, op) -> gast.Compare:
    """`a op b op c ...`, a chained comparison of `values`."""
    return _node(gast.Compare, left=values[0], ops=[_op(op) for _ in values[1:]],
                 comparators=list(values[1:]))


def if_exp(test: gast.expr, body: gast.expr, orelse: gast.expr) -> gast.IfExp:
    """`body if test else orelse`."""
    return _node(gast.IfExp, test=test, body=body, orelse=orelse)


def starred(value: gast.expr) -> gast.Starred:
    """`*value`, as a call argument."""
    return _node(gast.Starred, value=value, ctx=_LOAD)


def pass_() -> gast.Pass:
    return _node(gast.Pass)


def not_(operand: gast.expr) -> gast.expr:
    """`not operand`, or the operand of `operand` when it is a `not` already."""
    if isinstance(operand, gast.UnaryOp) and isinstance(operand.op, gast.Not):
        return operand.operand
    return unary(gast.Not, operand)


def for_(target: str | gast.expr, iter_: gast.expr, body: list) -> gast.For:
    tgt = name(target, store=True) if isinstance(target, str) else target
    return _node(gast.For, target=tgt, iter=iter_, body=body, orelse=[], type_comment=None)


def list_comp(elt: gast.expr, generators: list) -> gast.ListComp:
    return _node(gast.ListComp, elt=elt, generators=generators)


def comprehension(target: gast.expr, iter_: gast.expr, ifs: list = ()) -> gast.comprehension:
    """`for target in iter_` of a comprehension, with the filters `ifs`."""
    return _node(gast.comprehension, target=target, iter=iter_, ifs=list(ifs), is_async=0)


def function_def(fname: str, args: gast.arguments, body: list) -> gast.FunctionDef:
    return _node(gast.FunctionDef, name=fname, args=args, body=body, decorator_list=[],
                 returns=None, type_comment=None, type_params=[])


def arguments(positional: list[str], defaults: list[gast.expr] = (),
              kwonly: list[str] = (), kw_defaults: list = (),
              vararg: str | None = None, kwarg: str | None = None,
              posonly: list[str] = ()) -> gast.arguments:
    return _node(
        gast.arguments, args=[param(a) for a in positional],
        posonlyargs=[param(a) for a in posonly],
        vararg=param(vararg) if vararg else None,
        kwonlyargs=[param(a) for a in kwonly],
        kw_defaults=list(kw_defaults) or [None] * len(kwonly),
        kwarg=param(kwarg) if kwarg else None,
        defaults=list(defaults))


def module(body: list) -> gast.Module:
    return _node(gast.Module, body=body, type_ignores=[])


def expression(body: gast.expr) -> gast.Expression:
    """The root of an expression compiled alone (`compile(..., "eval")`)."""
    return _node(gast.Expression, body=body)


def is_none(node: gast.expr) -> bool:
    """The literal `None`."""
    return isinstance(node, gast.Constant) and node.value is None


def is_number(node: gast.expr) -> bool:
    """A numeric literal, possibly negated: `2`, `-0.5`."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float, complex)) \
        and not isinstance(node.value, bool)


def number_value(node: gast.expr):
    """The value of a numeric literal (`is_number`), else None."""
    if not is_number(node):
        return None
    if isinstance(node, gast.UnaryOp):
        value = node.operand.value
        return -value if isinstance(node.op, gast.USub) else value
    return node.value


def literal_value(node: gast.expr):
    """The Python value of a literal expression; raises ValueError otherwise."""
    return gast.literal_eval(node)


def unparse(node) -> str:
    """Source text of a node (a statement without a line number is
    unparsed from a copy: see `number_lines`)."""
    if any(isinstance(n, gast.stmt) and not hasattr(n, "lineno")
           for n in statements_in(node)):
        node = clone(node)
        number_lines(node)
    return _unparse(node).strip()


class Block(gast.stmt):
    """Generated statements and the user line they come from: `origin` is
    printed above them as a comment (`# grad of: y = f(x)`).  Not Python:
    a block is a unit for the passes that walk it (optimize, release), and
    code generation prints it as its comment and its statements."""
    _fields = ("origin", "body")


class Split(gast.stmt):
    """Where a pair's function is cut into its forward and backward halves
    (pairs.py); `value` is the primal output the forward half returns.
    Never printed: the cut happens before code generation."""
    _fields = ("value",)


def block(origin: str, body: list) -> Block:
    return Block(origin=origin, body=body)


def split(value: gast.expr) -> Split:
    return Split(value=value)


def flat(body: list) -> list:
    """(statement, the list holding it) for each statement of `body`, the
    statements of its blocks in their place (not those of ifs and loops)."""
    out: list = []
    _flat_into(body, out)
    return out


def _flat_into(body: list, out: list) -> None:
    for stmt in body:
        if isinstance(stmt, Block):
            _flat_into(stmt.body, out)
        else:
            out.append((stmt, body))


def index_value(index) -> gast.expr:
    """An expression that evaluates to the index object of a subscript:
    `1:3, None` -> `(slice(1, 3, None), None)`."""
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else const(None)
                 for p in (index.lower, index.upper, index.step)]
        return call(builtin("slice"), parts)
    if isinstance(index, gast.Tuple):
        return tuple_([index_value(e) for e in index.elts])
    return index


def index_syntax(value: gast.expr) -> gast.expr:
    """The inverse of `index_value`, for printing `x[1:3]` again."""
    if isinstance(value, gast.Call) and builtin_name(value.func) == "slice" \
            and len(value.args) == 3:
        lower, upper, step = (None if isinstance(a, gast.Constant) and a.value is None
                              else clone(a) for a in value.args)
        return slice_(lower, upper, step)
    if isinstance(value, gast.Tuple):
        return tuple_([index_syntax(e) for e in value.elts])
    return clone(value)


def describe(node) -> str:
    """How an error message names a construct: "a lambda", "a for loop"."""
    names = {
        gast.Lambda: "a lambda", gast.ListComp: "a list comprehension",
        gast.SetComp: "a set comprehension", gast.DictComp: "a dict comprehension",
        gast.GeneratorExp: "a generator expression", gast.Dict: "a dict literal",
        gast.Set: "a set literal", gast.NamedExpr: "an assignment expression (:=)",
        gast.Starred: "a starred expression", gast.IfExp: "a conditional expression",
        gast.FunctionDef: "a nested function definition",
        gast.If: "an if statement", gast.For: "a for loop",
        gast.While: "a while loop", gast.Break: "break", gast.Continue: "continue",
        gast.Raise: "a raise statement", gast.Subscript: "a subscript",
        gast.Attribute: "an attribute", gast.JoinedStr: "an f-string",
        gast.Return: "return", gast.With: "a with statement",
    }
    return names.get(type(node), f"a {type(node).__name__} construct")


def with_(manager: gast.expr, target: str | None, body: list) -> gast.With:
    """`with manager as target: body` (no target: `with manager: body`)."""
    item = _node(gast.withitem, context_expr=manager,
                 optional_vars=name(target, store=True) if target else None)
    return _node(gast.With, items=[item], body=body, type_comment=None)


