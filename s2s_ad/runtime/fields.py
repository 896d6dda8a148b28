"""The fields of named tuples read by name (`p.w`, `np.linalg.svd(a).S`):
`field` is the read generated code makes, `unfield` its adjoint and
`field_tangent` its tangent.  An attribute of any other object on a
gradient's path is refused, naming the attribute and the type.
Imports the errors, `origins` and `core` only.
"""
from __future__ import annotations

from ..errors import UnsupportedValueError
from .core import unindex
from .origins import origin


def field(obj, name: str):
    """`obj.name`, a field read by name (the key of its rules: generated
    code reads it as written)."""
    return getattr(obj, name)


def unfield(g, obj, name: str):
    """The adjoint of `obj.name` for a named tuple `obj`: `g` at that
    field, zeros shaped like the others."""
    return unindex(g, obj, _field_index(obj, name))


def field_tangent(t, obj, name: str):
    """The tangent of `obj.name` from `obj`'s (a tuple of its fields')."""
    return t[_field_index(obj, name)]


def _field_index(obj, name: str) -> int:
    fields = getattr(type(obj), "_fields", None)
    if isinstance(obj, tuple) and isinstance(fields, tuple) and name in fields:
        return fields.index(name)
    raise UnsupportedValueError(
        f"a gradient flows through the attribute `{name}` of a "
        f"{type(obj).__name__}: s2s_ad differentiates the fields of named tuples, "
        "not the attributes of other objects", origin(),
        hint="pass the arrays themselves (or a named tuple, tuple or dict of them), "
             "or wrap the read in s2s_ad.stop_gradient(...) if no gradient should "
             "flow through it")
