"""Which primitive each ANF assignment applies, with its rule bound.

`classify` returns a side table `stmt -> Prim` for every `Name = rhs`
and `Expr(rhs)` statement of an ANF body (nested blocks included).  Later
passes read operands, rule and binding from it instead of re-deriving them.

Invariants: `Prim.operands` are the names in positions that can carry a
gradient (those the template writes `d[...]` for); a problem that only
matters if the statement is active (no rule, arguments that do not fit the
rule) is kept in `Prim.problem` and raised by the reverse transform, so
inactive code may call anything.
"""
from __future__ import annotations

import builtins
import dataclasses
import functools
import inspect
import operator
import types

import gast
import numpy as np

from . import astutil, runtime, scopes, templates, traversal
from .errors import NoRuleError, RuleError, S2SADError, UnsupportedSyntaxError
from .frontend import is_callable_object, is_library
from .ir import (CALL, CALLEE, CONST, COPY, DYNAMIC, RULE, SEQUENCE_OPERATORS, UNKNOWN, Normalized,
                 Prim, Source, Star, StarStar, is_opaque, is_resolved, member, names_of)
from .effects import mutated_parameters
from .rules import registry

BINOPS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.Pow: operator.pow,
    gast.MatMult: operator.matmul, gast.Mod: operator.mod,
    gast.FloorDiv: operator.floordiv,
}
UNARYOPS = {gast.USub: operator.neg, gast.UAdd: operator.pos}
def classify(norm: Normalized, src: Source) -> dict[gast.stmt, Prim]:
    table: dict[gast.stmt, Prim] = {}
    sequences = sequence_names(norm, src)
    for stmt in scopes.statements(norm.tree.body):
        if isinstance(stmt, (gast.Assign, gast.Expr)):
            prim = _classify(stmt.value, stmt, src, norm.locals)
            table[stmt] = _on_sequences(prim, sequences)
    return table


def sequence_names(norm: Normalized, src: Source) -> set[str]:
    """Names some assignment of which surely binds a list or tuple: a
    display, `list(...)`, `tuple(...)`, `sorted(...)`, a copy of such a
    name, or `+`/`*` with such an operand (flow-insensitive)."""
    assigns = list(scopes.assignments(norm.tree.body))
    out: set[str] = set()
    grew = True
    while grew:
        before = len(out)
        out |= {s.targets[0].id for s in assigns if _makes_sequence(s.value, out, src, norm)}
        grew = len(out) > before
    return out


def _makes_sequence(rhs, sequences: set, src: Source, norm: Normalized) -> bool:
    if _is_sequence(rhs, sequences):
        return True
    if not isinstance(rhs, (gast.BinOp, gast.Call)):
        return False
    key, args, _ = _primitive(rhs, src, norm.locals)
    if any(key is f for f in (builtins.list, builtins.tuple, builtins.sorted)):
        return True
    return member(key, SEQUENCE_OPERATORS) and any(_is_sequence(a, sequences) for a in args)


def _is_sequence(node, sequences: set) -> bool:
    return isinstance(node, (gast.List, gast.Tuple)) or \
        isinstance(node, gast.Name) and node.id in sequences


def _on_sequences(prim: Prim, sequences: set) -> Prim:
    """`+` or `*` with an operand that may be a list or tuple: the rule
    that looks at the operands' types at run time.  (With operands of
    unknown type, NumPy's rule stays: shapes.py and the runtime refuse a
    joined or repeated sequence there.)"""
    if prim.kind != RULE or not member(prim.key, SEQUENCE_OPERATORS) or \
            prim.rule is not registry.lookup(prim.key) or \
            not any(_is_sequence(v, sequences) for v in prim.binding.values()):
        return prim
    return dataclasses.replace(prim, rule=registry.lookup(SEQUENCE_OPERATORS[prim.key]))


def _classify(rhs, stmt, src: Source, locals_) -> Prim:
    """The primitive one ANF right-hand side applies (see the module docstring)."""
    if isinstance(rhs, gast.Name):
        return Prim(COPY, operands=(rhs.id,))
    if is_opaque(rhs, src, locals_) or not _names_in(rhs):
        return Prim(CONST, shape_hint=_opaque_shape(rhs, src, locals_),
                    writes=_opaque_writes(rhs, src, locals_))
    key, args, kwargs = _primitive(rhs, src, locals_)
    if key is operator.floordiv:
        return Prim(CONST)
    if key is runtime.mutated:
        return _internal_refusal(rhs, stmt, src)
    rule = registry.lookup(key)
    if _spread_late(rhs) and (rule is not None or isinstance(key, types.FunctionType)):
        prim = _dynamic_call(rhs, key, stmt, src)   # called through a wrapper (dispatch.py)
        prim.pure = rule is not None or not any(mutated_parameters(key))
        return prim
    if rule is None and isinstance(key, types.FunctionType):
        return _user_call(key, args, kwargs, rhs, stmt, src)
    if rule is None and _is_function_value(rhs, key):
        return _dynamic_call(rhs, key, stmt, src)
    if rule is None:
        return Prim(UNKNOWN, key, operands=tuple(_names_in(rhs)),
                    problem=_no_rule(key, rhs, stmt, src))
    return _rule_call(key, rule, args, kwargs, rhs, stmt, src)


def _internal_refusal(rhs, stmt, src: Source) -> Prim:
    """An update the normalizer marked `rt.mutated`: refused if the
    statement is active."""
    call = astutil.unparse(rhs.args[1])
    return Prim(UNKNOWN, runtime.mutated, operands=tuple(_names_in(rhs)),
                problem=UnsupportedSyntaxError(
                    f"s2s_ad cannot differentiate through `{call}`, which updates "
                    f"{rhs.args[0].id} in place", src.locate(stmt),
                    hint="write the update as an assignment (x = np.where(...), x[i] = "
                         "v), or wrap the value in stop_gradient(...)"))


def _rule_call(key, rule, args, kwargs, rhs, stmt, src: Source) -> Prim:
    """A call of a function with a rule, its arguments bound to the rule's
    template; a call that does not fit it is refused if active."""
    try:
        binding = templates.bind(rule.signature_template, args, kwargs)
    except TypeError as exc:
        return Prim(UNKNOWN, key, operands=tuple(_names_in(rhs)),
                    problem=_misfit(key, rule, exc, args, kwargs, src.locate(stmt)))
    operands = tuple(dict.fromkeys(
        n for p in rule.operand_params if p in binding
        for n in names_of(binding[p])))
    return Prim(RULE, key, rule, binding, operands)


def _misfit(key, rule, exc: TypeError, args, kwargs, where) -> RuleError:
    """A call its rule's template cannot bind: a mistake in the call, or
    (where the function itself accepts it, or cannot say) an argument the
    rule does not cover, e.g. `max(xs, key=abs)`."""
    name = registry.display_name(key)
    if _refused_by(key, args, kwargs):
        return RuleError(f"the call does not fit {name}: {exc}", where,
                         hint="check the arguments against the function's signature")
    sig = rule.signature_template.signature
    if registry.ufunc_of(key) is not None:      # (the template's first parameter)
        sig = sig.replace(parameters=list(sig.parameters.values())[1:])
    return RuleError(
        f"s2s_ad's rule for {name} does not cover this call ({exc})", where,
        hint=f"the rule covers {name}{sig}: write the call in that "
             "form, or wrap it in stop_gradient(...) if no gradient should flow through it")


def _refused_by(key, args, kwargs) -> bool:
    """Whether the function itself would refuse these arguments (False when
    it cannot say: a builtin or ufunc method has no signature, and ndarray
    methods' text signatures are wrong)."""
    if isinstance(key, registry.Method):
        return False
    try:
        inspect.signature(key).bind(*args, **kwargs)
    except TypeError:
        return True
    except ValueError:
        return False
    return False


_VAR_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _user_call(func, args, kwargs, rhs, stmt, src: Source) -> Prim:
    """A call differentiated through the callee's own generated adjoint."""
    operands = tuple(_names_in(rhs))
    try:
        sig = inspect.signature(func)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        return Prim(UNKNOWN, func, operands=operands, problem=RuleError(
            f"the call does not fit {func.__qualname__}'s signature: {exc}",
            src.locate(stmt), hint="check the arguments"))
    binding = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:   # (its values: refused where varied)
            value = list(value.values())
        binding[name] = astutil.tuple_(value) if kind in _VAR_KINDS else value
    surely, augmented = mutated_parameters(func)
    return Prim(CALL, func, binding=binding, operands=operands, mutates=surely,
                augments=augmented)


def _spread_late(rhs) -> bool:
    """A call keeping `*t` or `**kw` of a size known only when it runs."""
    return isinstance(rhs, gast.Call) and (
        any(isinstance(a, gast.Starred) for a in rhs.args) or
        any(k.arg is None for k in rhs.keywords))


def _is_function_value(rhs, key) -> bool:
    """A call whose callee is a value rather than a function known here: a
    local name (`f(x)`, f a parameter), a method of a local object that no
    rule covers (`self.act(h)`), or an object that is not a plain function
    (a bound method, a callable object, a `functools.partial`)."""
    if not isinstance(rhs, gast.Call) or registry.is_nondifferentiable(key):
        return False
    if key is None:
        return isinstance(rhs.func, gast.Name)
    if isinstance(key, registry.Method):
        return True
    return isinstance(key, (types.MethodType, functools.partial)) or is_callable_object(key)


def _dynamic_call(rhs, key, stmt, src: Source) -> Prim:
    """A call of a function value (dispatch.py), bound by argument position
    and keyword, and the value called (`CALLEE`) where it is a name: a
    nested function made here from differentiated values (`rt.bind`)
    carries their gradient, which the call site gives it.  A method of a
    differentiated object with no rule is refused (`problem`)."""
    written = tuple(k.arg for k in rhs.keywords if k.arg is not None)
    binding = {**{Star(i) if isinstance(a, gast.Starred) else i:
                  a.value if isinstance(a, gast.Starred) else a for i, a in enumerate(rhs.args)},
               **{StarStar(written) if k.arg is None else k.arg: k.value for k in rhs.keywords}}
    callee = astutil.unparse(rhs.func)
    if isinstance(key, registry.Method):
        problem = _no_rule(key, rhs, stmt, src)
    else:
        if isinstance(rhs.func, gast.Name):     # (what it captured: dispatch.py)
            binding[CALLEE] = rhs.func
        problem = UnsupportedSyntaxError(
            f"`{callee}` is called here as a function, and its value depends on the "
            "inputs being differentiated; s2s_ad differentiates a function value's "
            "arguments, not what it captured", src.locate(stmt),
            hint="pass the differentiated values to the function as arguments "
                 "instead of capturing them (e.g. in a closure or a partial)")
    # (no key: the object, if known, may be anything, with any `==`)
    return Prim(DYNAMIC, None, binding=binding, operands=tuple(_names_in(rhs)),
                problem=problem)


def _opaque_shape(rhs, src: Source, locals_) -> str | None:
    """"scalar" for `stop_gradient(np.max(x))` and the like, else None."""
    if not (isinstance(rhs, gast.Call) and len(rhs.args) == 1 and not rhs.keywords):
        return None
    inner = rhs.args[0]
    if not isinstance(inner, gast.Call) or inner.keywords:
        return None
    rule = registry.lookup(src.resolve(inner.func, locals_))
    if rule is not None and rule.shape in (registry.SCALAR, registry.REDUCTION) \
            and len(inner.args) == 1:
        return "scalar"
    return None


def _opaque_writes(rhs, src: Source, locals_) -> frozenset:
    """Locals passed, inside an expression kept verbatim (`stop_gradient(f(v))`),
    to a function of the user's that updates a parameter in place, or to
    any call told it may overwrite its arguments (`overwrite_a=True`):
    every local an argument reads (`f(*(v,))`, `f(v[1:])`: it may pass
    `v`'s memory; one too many is only a copy of a parameter)."""
    out = set()
    for node in traversal.walk(rhs):
        if not isinstance(node, gast.Call):
            continue
        callee = src.resolve(node.func, locals_)
        overwrites = any(k.arg and k.arg.startswith("overwrite_") and not (
            isinstance(k.value, gast.Constant) and k.value.value is False)
            for k in node.keywords)             # SciPy's `overwrite_a=True`
        if overwrites or isinstance(callee, types.FunctionType) and \
                any(mutated_parameters(callee)):
            out.update(name for arg in [*node.args, *(k.value for k in node.keywords)]
                       for name in scopes.load_names(arg) if name in locals_)
    return frozenset(out)


def _names_in(rhs) -> list[str]:
    return list(dict.fromkeys(scopes.load_names(rhs)))


def _primitive(rhs, src: Source, locals_):
    """(registry key, positional atoms, keyword atoms) of a primitive rhs."""
    if isinstance(rhs, gast.BinOp):
        return BINOPS.get(type(rhs.op)), [rhs.left, rhs.right], {}
    if isinstance(rhs, gast.UnaryOp):
        return UNARYOPS.get(type(rhs.op)), [rhs.operand], {}
    if isinstance(rhs, gast.Subscript):
        return operator.getitem, [rhs.value, astutil.index_value(rhs.slice)], {}
    if isinstance(rhs, gast.Attribute):
        key = registry.Attr(rhs.attr)
        if registry.lookup(key) is None and not registry.is_nondifferentiable(key) and \
                not hasattr(np.ndarray, rhs.attr):      # a field read by name (`p.w`)
            return runtime.field, [rhs.value, astutil.const(rhs.attr)], {}
        return key, [rhs.value], {}
    if isinstance(rhs, (gast.Tuple, gast.List)):
        return registry.Literal(type(rhs).__name__.lower()), list(rhs.elts), {}
    if isinstance(rhs, gast.Dict):
        return registry.Literal("dict"), [astutil.tuple_(rhs.keys),
                                          astutil.tuple_(rhs.values)], {}
    if isinstance(rhs, gast.Call):
        kwargs = {k.arg: k.value for k in rhs.keywords}
        callee = src.resolve(rhs.func, locals_)
        if is_resolved(callee) and registry.ufunc_of(callee) is not None:
            # np.add.reduce(a): the ufunc is the template's first operand
            return callee, [_ufunc_node(callee, rhs.func, src, locals_), *rhs.args], kwargs
        fields = _named_tuple_fields(callee, rhs)
        if fields is not None:          # `P(w, b=b)`: a tuple display, its fields in order
            return registry.Literal("tuple"), fields, {}
        if is_resolved(callee):
            return callee, list(rhs.args), kwargs
        if isinstance(rhs.func, gast.Attribute):
            return registry.Method(rhs.func.attr), [rhs.func.value, *rhs.args], kwargs
        return None, list(rhs.args), kwargs
    return None, [], {}


def _named_tuple_fields(callee, call: gast.Call) -> list | None:
    """The values of each field, in order, of a call making a named tuple
    (a `collections.namedtuple` or `typing.NamedTuple` class with no rule
    of its own) that gives every field; else None."""
    if not (isinstance(callee, type) and issubclass(callee, tuple) and
            isinstance(getattr(callee, "_fields", None), tuple)) or \
            registry.lookup(callee) is not None or \
            any(isinstance(a, gast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return None
    names = callee._fields
    given = dict(zip(names, call.args)) | {k.arg: k.value for k in call.keywords}
    if len(call.args) > len(names) or set(given) != set(names):
        return None
    return [given[n] for n in names]


def _ufunc_node(method, func, src: Source, locals_) -> gast.expr:
    """An expression of the ufunc whose method `func` calls: `np.add` for
    `np.add.reduce`, else `func.__self__`."""
    if isinstance(func, gast.Attribute) and \
            src.resolve(func.value, locals_) is registry.ufunc_of(method):
        return astutil.clone(func.value)
    return astutil.attribute(astutil.clone(func), "__self__")


def _no_rule(key, rhs, stmt, src: Source) -> S2SADError:
    """The callee as the user wrote it (`np.maximum.accumulate`, or `la.eig`
    followed by what it is, `np.linalg.eig`), and the ways out: an
    equivalent function with a rule, if the registry knows one,
    stop_gradient, or a rule of one's own."""
    func = rhs.func if isinstance(rhs, gast.Call) else rhs
    written = astutil.dotted_name(func)
    if written is None or written.split(".")[0] not in src.user_names \
            or is_library(src.func):     # a library's own spelling is not the user's
        written = None                  # (nor is a temporary's, `_t2.get`)
    canonical = registry.display_name(key) if key is not None else None
    of_object = isinstance(key, (registry.Method, registry.Attr))
    if of_object and not hasattr(np.ndarray, key.name):
        canonical = None                # (`d.popitem()` of a dict: not an array's)
    shown = written or canonical or (f".{key.name}" if of_object else astutil.unparse(func))
    what = shown if canonical in (None, shown) else f"{shown} ({canonical})"
    # what to register: the object as the user names it (`x.foo()`: as s2s_ad does)
    name = canonical if of_object else shown
    form = ""
    if registry.ufunc_of(key) is not None:
        form = " on a template def rule(z, ufunc, ...) that takes the ufunc first"
    ways = ["wrap the call in s2s_ad.stop_gradient(...) if no gradient should flow "
            "through it"]
    if name is not None:        # (a method of a dict or list: no object to register)
        ways.append(f"register a rule with @s2s_ad.adjoint({name}){form} "
                    f"(s2s_ad.nondifferentiable({name}) if its gradient is zero)")
    instead = registry.suggestion(key) if key is not None else None
    if instead:
        ways.insert(0, f"instead, use {instead}")
    return NoRuleError(f"no derivative rule for {what}", src.locate(stmt),
                       hint="; or ".join(ways))
