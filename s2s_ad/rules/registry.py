"""The rule registry: which primitive has which adjoint template.

Keys are the primal objects themselves (`np.exp`, `math.sin`,
`operator.add` for `+`, `np.add.reduce` for a ufunc's method: bound methods
of one ufunc compare equal), or `Method("sum")` / `Attr("T")` for array
methods and attributes, which cannot be resolved at compile time.

A template for a ufunc's method takes the ufunc as its first operand, as
`ufunc.reduce(self, array, ...)` does and as a `Method`'s template takes
its receiver: one template can then serve the method of every ufunc.

Invariant: a rule is validated against its target's signature when it is
registered, so a malformed rule fails at import, not in a user's gradient.
A user's template is parsed there too; s2s_ad's own are parsed when first
used (`Rule.template`), and a test parses every one.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import gast

from .. import templates
from ..templates import number_literal  # noqa: F401  (re-exported for rule templates)
from ..errors import RuleError
from .targets import (Attr, Literal, Method, check_signature, display_name,  # noqa: F401
                      ufunc_of)   # (re-exported: the registry is where callers look)


ELEMENTWISE, SCALAR, REDUCTION = "elementwise", "scalar", "reduction"


@dataclass(frozen=True)
class Rule:
    """A primitive's templates and what is statically known of it.

    `shape` is ELEMENTWISE (the broadcast of the operands' shapes; operand
    adjoints are summed back to each operand's shape), SCALAR (always a
    scalar), REDUCTION (a scalar when `axis` is None and `keepdims` false)
    or None (unknown).  `fn` is the adjoint template (None where only a
    tangent is registered), `tangent_fn` the tangent template (forward
    mode; tangent_templates.py).  `linear` names parameters the primitive
    is linear in jointly (`np.sum`'s `a`, `+`'s two operands: its tangent
    is the primitive applied to their tangents), `multilinear` parameters
    it is linear in one at a time (`@`: the product rule); forward mode
    needs no tangent template for those.  `inert` names parameters whose
    values the primitive reads for their shape, type or as indices only: no
    derivative flows through them (forward mode otherwise refuses a varied
    operand no tangent term covers).  Templates are parsed when first
    used: s2s_ad's own ~220 rules would cost a third of a second at import.
    """
    fn: Callable | None
    shape: str | None = None
    linear: tuple = ()
    multilinear: tuple = ()
    tangent_fn: Callable | None = None
    pointwise: bool = False
    signature: inspect.Signature | None = None  # call sites' binding, without templates
    inert: tuple = ()       # parameters read for shapes, types or indices only
    refused: tuple = ()     # parameters given no derivative, refused where one flows

    @functools.cached_property
    def template(self) -> templates.Template | None:
        return templates.parse(self.fn) if self.fn is not None else None

    @functools.cached_property
    def tangent_template(self):
        from .. import tangent_templates        # (imports this package)
        return tangent_templates.parse(self.tangent_fn) if self.tangent_fn else None

    @property
    def signature_template(self):
        """What call sites are bound to: the adjoint template, or the
        tangent's where only that is registered, or the declared signature
        of a primitive only declared linear (`linear`)."""
        if self.fn is not None:
            return self.template
        if self.tangent_fn is not None:
            return self.tangent_template
        return types.SimpleNamespace(signature=self.signature)

    @property
    def operand_params(self) -> frozenset:
        """The parameters that may carry a derivative (or be refused one:
        the statement must be active for the refusal to be made)."""
        if self.fn is not None:
            return self.template.writes | frozenset(self.refused)
        if self.tangent_fn is not None:
            return self.tangent_template.operands | frozenset(self.refused)
        # (declared linear: every parameter not declared inert, so that a
        # varied one its linearity leaves out is refused, never a zero)
        return frozenset(self.signature.parameters) - frozenset(self.inert)

    @property
    def elementwise(self) -> bool:
        return self.shape == ELEMENTWISE

    @property
    def diagonal(self) -> bool:
        """Each operand's Jacobian is diagonal: an elementwise primitive, or
        a `pointwise` one (a scalar function of scalars, `math.sin`).  Its
        tangent is then derived from its adjoint template."""
        return self.elementwise or self.pointwise


_ADJOINTS: dict = {}
_NONDIFF: set = set()
_version = [0]      # bumped on every change; cached gradients check it
_listeners: list = []   # called after every change (guards.py: derived functions)


def version() -> int:
    return _version[0]


def on_change(listener) -> None:
    """Call `listener()` after every registration."""
    _listeners.append(listener)


_BUILTIN: list = []     # [rules, nondifferentiables] once s2s_ad's own are in
_FINGERPRINT: list = [None, None]   # [version, fingerprint()]


def seal() -> None:
    """Remember s2s_ad's own registrations (the rules package calls this
    once it has imported them): `fingerprint` describes what changed since."""
    _BUILTIN[:] = [dict(_ADJOINTS), set(_NONDIFF)]


def fingerprint() -> str | None:
    """The registrations made since `seal`, as text for a cache key ("" for
    none): each target by module and name, with its template's text; None
    if a target has no such name (a lambda, an object)."""
    if _FINGERPRINT[0] == version():
        return _FINGERPRINT[1]
    rules, nondiff = _BUILTIN or [{}, set()]
    changed = [k for k, rule in _ADJOINTS.items() if rules.get(k) is not rule]
    parts = []
    for key in changed + [k for k in rules if k not in _ADJOINTS] + list(_NONDIFF ^ nondiff):
        name = _stable_name(key)
        if name is None:
            parts = None
            break
        rule = _ADJOINTS.get(key)
        parts.append(repr((name, key in _NONDIFF, rule and (
            rule.shape, rule.linear, rule.multilinear, rule.inert,
            *(_template_text(tpl) for tpl in (rule.template, rule.tangent_template))))))
    _FINGERPRINT[:] = [version(), None if parts is None else "\n".join(sorted(parts))]
    return _FINGERPRINT[1]


def _template_text(tpl) -> tuple | None:
    """What a cache key must know of a template: its result, signature
    and body."""
    if tpl is None:
        return None
    return tpl.result, str(tpl.signature), [gast.dump(stmt) for stmt in tpl.body]


def _stable_name(key) -> str | None:
    """`module.qualname` of a registered target, or the repr of a method,
    attribute or display key; None for what has neither."""
    if isinstance(key, (Method, Attr, Literal)):
        return repr(key)
    module, qualname = getattr(key, "__module__", None), getattr(key, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        return f"{module}.{qualname}"
    name = getattr(key, "__name__", None)       # a ufunc
    return f"numpy.{name}" if type(key).__name__ == "ufunc" and isinstance(name, str) else None


def _changed() -> None:
    _version[0] += 1
    for listener in _listeners:
        listener()


def _key(target):
    try:
        hash(target)
    except TypeError:
        raise RuleError(f"cannot register a rule for unhashable {target!r}") from None
    return target


F = TypeVar("F", bound=Callable[..., Any])


def adjoint(*targets: Any, shape: str | None = None, linear: tuple | str = (),
            multilinear: tuple | str = (), pointwise: bool = False,
            inert: tuple | str = (), refused: tuple | str = ()) -> Callable[[F], F]:
    """Register the decorated template as the adjoint of each target.

    `shape="elementwise"` says the primitive broadcasts its operands (like a
    ufunc): contributions are summed back to each operand's shape.
    `shape="scalar"` and `shape="reduction"`: see `Rule`.  `linear` and
    `multilinear` name parameters the primitive is linear in (see `Rule`),
    and `pointwise=True` says it is a scalar function of scalars: forward
    mode then needs no tangent rule.  `refused` names parameters a
    derivative may flow into that the rule gives none (`np.quantile`'s
    `q`): a varied one is refused where it is, never given a zero.
    """
    if shape not in (None, ELEMENTWISE, SCALAR, REDUCTION):
        raise RuleError(f"adjoint(shape={shape!r}): use 'elementwise', 'scalar', "
                        "'reduction' or None")
    if not targets:
        raise RuleError("adjoint(...) needs at least one target function")
    linear, multilinear, inert, refused = map(_names, (linear, multilinear, inert, refused))

    def register(fn):
        header = templates.header(fn)
        _check_named(targets[0], fn, header, linear + multilinear + inert + refused)
        made: dict = {}                 # tangent kept -> its rule (shared when equal)
        for target in targets:
            old = lookup(target)
            kept = old.tangent_fn if old is not None else None
            if kept not in made:
                made[kept] = Rule(fn, shape, linear, multilinear, kept, pointwise,
                                  inert=inert, refused=refused)
            rule = made[kept]
            if _BUILTIN:                # the user's: a malformed template fails here
                rule.template           # noqa: B018
            check_signature(target, header)
            _ADJOINTS[_key(target)] = rule
            _NONDIFF.discard(_key(target))
        _changed()
        return fn
    return register


def _names(names: tuple | str) -> tuple:
    """A parameter name or several, as a tuple."""
    return (names,) if isinstance(names, str) else tuple(names)


def _check_named(target, fn, header, names: tuple) -> None:
    """Each parameter a rule's declaration names is one of the template's."""
    for param in names:
        if param not in header.signature.parameters:
            raise RuleError(f"adjoint({display_name(target)}): {param!r} is "
                            f"not a parameter of rule {fn.__name__!r}")


def tangent(*targets: Any, inert: tuple | str = ()) -> Callable[[F], F]:
    """Register the decorated template as the tangent rule (forward mode)
    of each target; see tangent_templates.py for how one is written.  A
    target without an adjoint gets forward mode only.  `inert`: see `Rule`."""
    if not targets:
        raise RuleError("tangent(...) needs at least one target function")
    inert = _names(inert)

    def register(fn):
        header = templates.header(fn)
        for target in targets:
            check_signature(target, header)
            old = lookup(target)
            rule = dataclasses.replace(old, tangent_fn=fn, inert=old.inert + inert) \
                if old is not None else Rule(None, tangent_fn=fn, inert=inert)
            if _BUILTIN:
                rule.tangent_template   # noqa: B018
            _ADJOINTS[_key(target)] = rule
            _NONDIFF.discard(_key(target))
        _changed()
        return fn
    return register


def linear(target: Any, *params: str, multi: bool = False, inert: tuple = ()) -> None:
    """Declare `target` linear jointly in `params` (with `multi`, in each
    separately) where it has no adjoint template yet: forward mode needs
    nothing more; reverse mode refuses a call of it, located.  `inert`:
    see `Rule`; a parameter neither linear nor inert gets no tangent term,
    and is refused where it varies."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        raise RuleError(f"linear({display_name(target)}): its signature is unknown") from None
    unknown = [p for p in params if p not in sig.parameters]
    if unknown:
        raise RuleError(f"linear({display_name(target)}): {unknown[0]!r} is not a parameter")
    _ADJOINTS[_key(target)] = Rule(None, linear=() if multi else params,
                                   multilinear=params if multi else (), signature=sig,
                                   inert=tuple(inert))
    _NONDIFF.discard(_key(target))
    _changed()


def nondifferentiable(*targets: Any) -> None:
    """Declare functions whose results carry no gradient (`np.argmax`, `len`)."""
    for target in targets:
        _NONDIFF.add(_key(target))
        _ADJOINTS.pop(_key(target), None)
    _changed()


def lookup(target) -> Rule | None:
    try:
        return _ADJOINTS.get(target)
    except TypeError:
        return None


def is_nondifferentiable(target) -> bool:
    """Registered as such, or a method of a string (`'{:.1f}'.format`,
    `', '.join`): text, never a number that depends on the arguments."""
    if isinstance(target, types.BuiltinMethodType) and \
            isinstance(target.__self__, (str, bytes)):
        return True
    try:
        return target in _NONDIFF
    except TypeError:
        return False


def builtin() -> dict:
    """s2s_ad's own rules, as `seal` recorded them (no user's)."""
    return dict(_BUILTIN[0]) if _BUILTIN else registered()


def registered() -> dict:
    """Every target with a rule (for `s2s-ad rules` and the tests)."""
    return dict(_ADJOINTS)


def nondifferentiables() -> set:
    return set(_NONDIFF)


_SUGGESTIONS: dict = {}


def suggest(target, text: str) -> None:
    """Record what to use instead of `target`, which has no rule (an
    equivalent function that has one); the error for a call of it says so."""
    _SUGGESTIONS[_key(target)] = text


def suggestion(target) -> str | None:
    try:
        return _SUGGESTIONS.get(target)
    except TypeError:
        return None
