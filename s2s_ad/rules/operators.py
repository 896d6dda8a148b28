"""Rules for Python's operators (`+ - * / ** % @`, unary `-`/`+`), subscripts
and array attributes.  Each operator is keyed by its `operator` function;
the NumPy ufunc with the same meaning shares the template.

The augmented operators (`operator.iadd` for `a += b`, ...) share their
binary operator's template: they update arrays in place, which the reverse
transform accounts for when it records and restores values.  Where an
operand of `+` or `*` may be a list or tuple, the primitives stage gives the
operator the rule of `rt.join` or `rt.repeat_items` instead: Python joins or
repeats sequences.

Conventions: `a ** b` contributes to `b` only where `a > 0` (log a is real),
and to `a` nothing where `b` is 0 (`a ** 0` is 1, at a = 0 too: the slope is
`rt.times_power`'s, or the plain formula where `b` is a literal);
`a % b` is piecewise linear: d/da = 1, d/db = -(a // b).
"""
import operator

import numpy as np

from .. import runtime as rt
from .registry import (ELEMENTWISE, Attr, Literal, adjoint, linear, nondifferentiable,
                       number_literal, tangent)

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


@adjoint(operator.add, np.add, operator.iadd, shape=ELEMENTWISE)
def add(z, a, b):
    d[a] += d[z]
    d[b] += d[z]


@adjoint(rt.join, linear=("a", "b"))
def join(z, a, b):
    """`a + b` where an operand may be a list or tuple (primitives.py)."""
    d[a] += rt.unjoin(d[z], a, b, 0)
    d[b] += rt.unjoin(d[z], a, b, 1)


@adjoint(rt.repeat_items, multilinear=("a", "b"))
def repeat_items(z, a, b):
    """`a * b` where an operand may be a list or tuple (primitives.py)."""
    d[a] += rt.unrepeat_items(d[z], a, b, 0)
    d[b] += rt.unrepeat_items(d[z], a, b, 1)


@adjoint(operator.sub, np.subtract, operator.isub, shape=ELEMENTWISE)
def sub(z, a, b):
    d[a] += d[z]
    d[b] += -d[z]


@adjoint(operator.mul, np.multiply, operator.imul, shape=ELEMENTWISE)
def mul(z, a, b):
    d[a] += d[z] * b
    d[b] += d[z] * a


@adjoint(operator.truediv, np.divide, operator.itruediv, shape=ELEMENTWISE)
def truediv(z, a, b):
    d[a] += d[z] / b
    d[b] += -d[z] * z / b


@adjoint(operator.pow, np.power, operator.ipow, shape=ELEMENTWISE)
def pow(z, a, b):
    if not number_literal(b):
        d[a] += d[z] * rt.times_power(b, a, b - 1)     # 0 where b is 0: a ** 0 is 1
    elif b != 0:
        d[a] += d[z] * b * a ** (b - 1)
    d[b] += d[z] * z * np.log(np.where(a > 0, a, 1.0))


@adjoint(operator.mod, np.mod, operator.imod, shape=ELEMENTWISE)
def mod(z, a, b):
    d[a] += d[z]
    d[b] += -d[z] * (a // b)


@adjoint(operator.neg, np.negative, shape=ELEMENTWISE)
def neg(z, a):
    d[a] += -d[z]


@adjoint(operator.pos, np.positive, shape=ELEMENTWISE)
def pos(z, a):
    d[a] += d[z]


@adjoint(operator.matmul, np.matmul, operator.imatmul, multilinear=("a", "b"))
def matmul(z, a, b):
    d[a] += rt.matmul_lhs(d[z], a, b)
    d[b] += rt.matmul_rhs(d[z], a, b)


@adjoint(operator.getitem, linear="a", inert="b")
def getitem(z, a, b):
    d[a] += rt.unindex(d[z], a, b)


@adjoint(rt.field, linear="obj", inert="name")     # `p.w` of a named tuple p
def field(z, obj, name):
    d[obj] += rt.unfield(d[z], obj, name)


@tangent(rt.field, inert="name")
def field_tangent(z, obj, name):
    t[z] += rt.field_tangent(t[obj], obj, name)


linear(rt.unfield, "g", inert=("obj", "name"))
linear(rt.field_tangent, "t", inert=("obj", "name"))


@adjoint(rt.setitem, rt.sync_index)
def setitem(z, x, index, value):
    d[value] += rt.unbroadcast(rt.written(d[z], index), value)
    d[x] += rt.zero_at(d[z], index)


@adjoint(rt.pop)
def pop(z, items, index):
    d[items] += rt.unpop(d[z], items, index)


@adjoint(rt.get_other, linear=("default", "items"))
def get_other(z, default, items, key):
    d[items] += rt.unget_other(d[z], items)
    d[default] += rt.unget_default(d[z], items)


@adjoint(rt.sync_transposed)
def sync_transposed(z, base, view):
    d[view] += np.transpose(d[z])


@adjoint(rt.sync_reshaped)
def sync_reshaped(z, base, view):
    d[view] += rt.shaped_like(d[z], view)


@adjoint(rt.append)
def append(z, items, item, position):
    d[item] += rt.item_or_zeros(d[z], position, item)
    d[items] += rt.head(d[z], position)


@adjoint(Literal("tuple"), Literal("list"), linear="elts")
def display(z, *elts):
    d[elts] += d[z]


@adjoint(Literal("dict"), linear="values")
def dict_display(z, keys, values):
    d[values] += rt.dict_parts(d[z], keys, values)


# a nested function as a value, with the enclosing values it reads: its
# adjoint and tangent are theirs, by name (a call site gives them: dispatch.py)
@adjoint(rt.bind, linear="values", inert=("func", "names"))
def bind(z, func, names, *values):
    d[values] += rt.unbind(d[z], names)


@tangent(rt.bind, inert=("func", "names"))
def bind_tangent(z, func, names, *values):
    t[z] += rt.bound_tangent(names, t[values])


@adjoint(rt.keep, linear="value")
def keep(z, value):
    d[value] += d[z]


@adjoint(rt.indexable, linear="seq")
def indexable(z, seq):
    d[seq] += rt.unindexable(d[z], seq)


@adjoint(Attr("T"), linear="self")
def T(z, self):
    d[self] += np.transpose(d[z])


# -- tangents (forward mode) of the in-place primitives: a fresh value each
@tangent(rt.setitem, rt.sync_index, inert="index")
def setitem_tangent(z, x, index, value):
    t[z] += rt.put(t[x], index, t[value])


@tangent(rt.sync_transposed, inert="base")    # (the view is all of it)
def sync_transposed_tangent(z, base, view):
    t[z] += np.transpose(t[view])


@tangent(rt.sync_reshaped, inert="base")
def sync_reshaped_tangent(z, base, view):
    t[z] += rt.shaped_like(t[view], base)


@tangent(rt.append)
def append_tangent(z, items, item, position):
    t[z] += rt.append(rt.copy(t[items]), t[item], position)


@tangent(rt.pop)
def pop_tangent(z, items, index):
    t[z] += rt.pop(rt.copy(t[items]), index)


nondifferentiable(rt.enter, rt.exit, rt.has_key, rt.check_arity, rt.check_keywords, rt.shares, rt.slots, rt.refuse_shared, rt.refuse_written, rt.in_place, rt.refuse_overlap, rt.refuse_overwrite, rt.check_unpack, rt.check_reduce, rt.same_length, rt.diagonal_index, rt.along_axis_index, rt.keys, operator.floordiv, operator.ifloordiv, np.floor_divide, Attr("shape"), Attr("ndim"),
                  Attr("size"), Attr("dtype"))
