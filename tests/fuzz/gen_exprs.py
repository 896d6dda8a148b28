"""Expression generation: `expr(g, sc, kind)` writes a random expression of
a kind (see gen_core) from the variables in scope.

Most constructs are *templates* in `OPS`: a feature, the kinds the template
can produce, a weight, the template text and the builtins it calls.  To
cover a new NumPy function, add a line.  Placeholders (all generated
recursively, one level shallower):

    {e} {p} {b} {c}   an expression / a positive one (>= 0.5) / a bounded one
                      (in [-1, 1]) / an elementwise condition, of the
                      result's kind
    {f}               an expression of the result's kind that is a new array,
                      never a view of a variable
    {x} {y} {py}      two operands whose broadcast has the result's kind,
                      and a positive operand of {y}'s kind
    {s} {v} {m}       an expression of kind S / V / M; {ps} {bv} ... likewise
    {S} {V} {M}       a variable of that kind (else a parenthesised expression)
    {i} {k} {n}       an index (int variable or literal) / a literal index in
                      [-n, n) / n
    {w}               a well-conditioned n x n matrix (3 I + 0.1 tanh(M))
    {cs} {cst}        a scalar condition / a float literal
    {sN} {vN}         n comma-separated S / V expressions

Numerics are benign by construction: exp only of bounded values, log and
sqrt and divisors only of positive ones.
"""
from __future__ import annotations

import re

from .gen_core import FLOAT_KINDS, PAIR_FIELDS, Fields, Gen, Scope, is_alias

PAIRS = {"S": [("S", "S")],
         "V": [("V", "V"), ("S", "V"), ("V", "S")],
         "M": [("M", "M"), ("M", "S"), ("S", "M"), ("M", "V"), ("V", "M")]}

# (feature, kinds, weight, template, builtins the template calls)
OPS = [
    ("arith", "SVM", 4, "({x} + {y})", ()),
    ("arith", "SVM", 3, "({x} - {y})", ()),
    ("arith", "SVM", 4, "({x} * {y})", ()),
    ("arith", "SVM", 2, "({x} / {py})", ()),
    ("arith", "SVM", 1, "(-{e})", ()),
    ("arith", "SVM", 1, "({e} ** 2)", ()),
    ("arith", "SVM", .5, "({e} ** 3)", ()),
    ("arith", "SVM", 1, "({p} ** 0.5)", ()),
    ("arith", "SVM", .5, "({p} ** {bs})", ()),
    # exponents 0, 1, 2 known only when it runs, at bases that may be 0
    ("arith", "SVM", .3, "({e} ** (abs({i}) % 3))", ("abs",)),
    # (zero at even positions only: an all-constant vector made std's 0 / 0
    # reach the gradient, as in JAX, a false find: seed 183741)
    ("arith", "V", .3, "(({e} * (np.arange({n}) % 2)) ** (np.arange({n}) % 3))", ()),
    ("arith", "SVM", 2, "({cst} * {e})", ()),
    ("arith", "SVM", .5, "abs({e})", ("abs",)),
    ("arith", "S", .5, "max({s}, {s})", ("max",)),
    ("arith", "S", .5, "min({s}, {cst})", ("min",)),
    ("arith", "S", .5, "float({s})", ("float",)),
    ("arith", "S", .3, "pow({p}, 2)", ("pow",)),
    # text made from values is inactive: its length is a constant
    ("arith", "SVM", .2, "({e} + 0.0 * len('%.2f' % {s} + str({s})))", ("len", "str")),
    ("arith", "SVM", .2, "({e} * (1.0 + 0.0 * len('{:.3f}'.format({s}))))", ("len",)),
    ("math", "S", 1, "math.sin({s})", ()),
    ("math", "S", 1, "math.cos({s})", ()),
    ("math", "S", 1, "math.tanh({s})", ()),
    ("math", "S", .5, "math.atan({s})", ()),
    ("math", "S", 1, "math.exp({bs})", ()),
    ("math", "S", 1, "math.log({ps})", ()),
    ("math", "S", 1, "math.sqrt({ps})", ()),
    ("math", "S", .5, "math.log1p({s} ** 2)", ()),
    ("math", "S", .5, "math.hypot({s}, {s})", ()),
    ("math", "S", .5, "math.pow({ps}, 1.5)", ()),
    ("math", "S", .5, "math.fabs({s})", ()),
    ("math", "S", .3, "math.expm1({bs})", ()),
    ("math", "S", .3, "math.erf({s})", ()),
    ("math", "S", .3, "math.atan2({s}, {ps})", ()),
    ("elementwise", "SVM", 1, "np.sin({e})", ()),
    ("elementwise", "SVM", 1, "np.cos({e})", ()),
    ("elementwise", "SVM", 1.5, "np.tanh({e})", ()),
    ("elementwise", "SVM", .5, "np.arctan({e})", ()),
    ("elementwise", "SVM", 1, "np.exp({b})", ()),
    ("elementwise", "SVM", 1, "np.log({p})", ()),
    ("elementwise", "SVM", 1, "np.sqrt({p})", ()),
    ("elementwise", "SVM", .5, "np.abs({e})", ()),
    ("elementwise", "SVM", .5, "np.square({e})", ()),
    ("elementwise", "SVM", .3, "np.log1p({e} ** 2)", ()),
    ("elementwise", "SVM", .3, "np.expm1({b})", ()),
    ("elementwise", "SVM", .3, "np.cosh({b})", ()),
    ("elementwise", "SVM", .5, "np.maximum({e}, {e})", ()),
    ("elementwise", "SVM", .5, "np.minimum({e}, {cst})", ()),
    ("elementwise", "SVM", .3, "np.clip({e}, -1.0, 1.0)", ()),
    ("elementwise", "VM", .5, "np.where({c}, {e}, {e})", ()),     # 0-d for S
    ("elementwise", "SVM", .5, "(1.0 / (1.0 + np.exp(-{b})))", ()),
    ("elementwise", "SVM", .3, "np.power({p}, 1.5)", ()),
    ("elementwise", "VM", .3, "{e}.clip(-1.0, 1.0)", ()),
    ("construct", "V", 1, "np.array([{sN}])", ()),
    ("construct", "V", .5, "({s} * np.ones({n}))", ()),
    ("construct", "V", .3, "np.full({n}, {s})", ()),
    ("construct", "V", .3, "np.linspace(0.0, {s}, {n})", ()),
    ("construct", "V", .3, "(np.zeros_like({v}) + {s})", ()),
    ("construct", "M", .5, "(np.eye({n}) * {s})", ()),
    ("construct", "M", .5, "np.stack([{vN}])", ()),
    ("construct", "M", .3, "np.full(({n}, {n}), {s})", ()),
    ("construct", "M", .3, "np.tile({v}, ({n}, 1))", ()),
    ("reduce", "S", 1, "np.sum({v})", ()),
    ("reduce", "S", .5, "np.sum({m})", ()),
    ("reduce", "S", 1, "np.mean({v})", ()),
    ("reduce", "S", .5, "np.mean({m})", ()),
    ("reduce", "S", .5, "np.max({v})", ()),
    ("reduce", "S", .3, "np.min({m})", ()),
    ("reduce", "S", 1, "{V}.sum()", ()),
    ("reduce", "S", .5, "{M}.mean()", ()),
    ("reduce", "S", .3, "{V}.max()", ()),
    ("reduce", "S", .3, "np.prod({bv})", ()),
    ("reduce", "S", .3, "np.var({v})", ()),
    ("reduce", "S", .3, "sum({v})", ("sum",)),
    ("reduce", "S", .3, "max([{s}, {s}, {s}])", ()),
    ("reduce", "S", .2, "min(({s}, {s}))", ()),
    ("reduce", "S", .2, "max([{s}, {s}, {s}], key=abs)", ("max", "abs")),
    ("reduce", "V", .1, "min([{v}, {v}], key=np.sum)", ("min",)),
    ("reduce", "S", .1, "max([], default={s})", ("max",)),
    ("reduce", "S", .2, "np.sum({v}, where=np.arange({n}) % 2 == 0)", ()),
    ("reduce", "S", .2, "np.mean({m}, where=np.arange({n}) > 0)", ()),
    ("reduce", "S", .2, "np.max({v}, initial={s})", ()),
    ("reduce", "V", .1, "np.min({m}, axis=1, initial=0.5, where=np.arange({n}) != 1)", ()),
    ("reduce", "S", .2, "np.prod({bv}, where=np.arange({n}) != 0, initial={bs})", ()),
    ("reduce", "V", .1, "np.prod({bm}, axis=1, initial=0.5, where=np.arange({n}) % 2 == 1)", ()),
    ("reduce", "S", .1, "{V}.prod(initial=2.0)", ()),
    ("reduce", "S", .2, "np.add.reduce({v}, initial={s}, where=np.arange({n}) > 0)", ()),
    ("reduce", "S", .2, "np.multiply.reduce({bv}, initial={bs}, where=np.arange({n}) < 2)", ()),
    ("reduce", "S", .2, "np.maximum.reduce({v}, initial={s}, where=np.arange({n}) % 2 == 0)", ()),
    ("reduce", "V", .1, "np.minimum.reduce({m}, axis=1, initial=0.5, where=np.arange({n}) != 1)", ()),
    ("reduce", "S", .2, "np.logaddexp.reduce({m}, axis=None, initial={s})", ()),
    ("reduce", "S", .1, "np.subtract.reduce({v}, initial={s}, where=np.arange({n}) != 0)", ()),
    ("reduce", "S", .2, "np.logaddexp.reduce({v})", ()),
    ("reduce", "S", .2, "np.add.reduce({m}, axis=None)", ()),
    ("reduce", "S", .2, "np.nanmax({v})", ()),
    ("reduce", "S", .2, "np.nanstd({v} + np.arange({n}))", ()),   # (never 0: finite)
    ("reduce", "V", .2, "np.nanvar({m}, axis=0)", ()),
    ("reduce", "S", .2, "np.quantile({v}, 0.3)", ()),
    ("reduce", "S", .2, "np.polyval({v}, {s})", ()),
    ("reduce", "V", .1, "np.polyval({v}, {v})", ()),
    ("reduce", "V", .1, "np.multiply.reduce({bm}, axis=1)", ()),
    ("reduce", "S", .1, "np.hypot.reduce({v})", ()),
    ("reduce", "V", .2, "np.maximum.accumulate({v})", ()),
    ("reduce", "V", .2, "np.diff({v}, prepend=0.0)", ()),
    ("reduce", "V", .2, "np.gradient({v})", ()),
    ("reduce", "V", .2, "np.convolve({v}, np.array([0.25, 0.5, 0.25]), mode='same')", ()),
    ("reduce", "V", .2, "np.cumprod({bv})", ()),
    ("reduce", "M", .2, "np.multiply.outer({v}, {v})", ()),
    ("reduce", "M", .2, "np.cov({m})", ()),
    ("reduce", "V", 1, "np.sum({m}, axis=0)", ()),
    ("reduce", "V", 1, "np.mean({m}, axis=1)", ()),
    ("reduce", "V", .5, "np.max({m}, axis=-1)", ()),
    ("reduce", "V", .5, "{M}.sum(axis=1)", ()),
    ("reduce", "V", .3, "np.cumsum({v})", ()),
    ("reduce", "V", .3, "sum({m})", ("sum",)),
    ("reduce", "M", .5, "({m} - np.max({m}, axis=1, keepdims=True))", ()),
    ("reduce", "M", .5, "({m} / np.sum({pm}, axis=0, keepdims=True))", ()),
    ("reduce", "M", .3, "({m} - {M}.mean(axis=0))", ()),
    ("linalg", "S", 1, "np.dot({v}, {v})", ()),
    ("linalg", "S", 1, "({v} @ {v})", ()),
    ("linalg", "S", .5, "{V}.dot({v})", ()),
    ("linalg", "S", 1, "np.linalg.norm({v})", ()),
    ("linalg", "S", .3, "np.linalg.norm({m})", ()),
    ("linalg", "S", .3, "np.trace({m})", ()),
    ("linalg", "S", .3, "np.linalg.det({w})", ()),
    ("linalg", "S", .3, "({v} @ {m} @ {v})", ()),
    ("linalg", "V", 1, "({m} @ {v})", ()),
    ("linalg", "V", 1, "({v} @ {m})", ()),
    ("linalg", "V", .5, "np.dot({m}, {v})", ()),
    ("linalg", "V", .5, "np.linalg.solve({w}, {v})", ()),
    ("linalg", "V", .3, "({M}.T @ {v})", ()),
    ("linalg", "V", .3, "(np.diag({m}) + 0.0)", ()),     # np.diag: read-only
    ("linalg", "M", 1, "({m} @ {m})", ()),
    ("linalg", "M", .5, "{M}.T", ()),
    ("linalg", "M", .5, "np.outer({v}, {v})", ()),
    ("linalg", "M", .3, "np.linalg.inv({w})", ()),
    ("linalg", "M", .3, "np.linalg.solve({w}, {m})", ()),
    ("linalg", "M", .3, "np.diag({v})", ()),
    ("index", "S", 1, "{V}[{i}]", ()),
    ("index", "S", .5, "{M}[{i}, {i}]", ()),
    ("index", "S", .3, "{M}[{i}][{k}]", ()),
    ("index", "S", .3, "np.sum({V}[1:])", ()),
    ("index", "V", 1, "{M}[{i}]", ()),
    ("index", "V", .5, "{M}[:, {i}]", ()),
    ("index", "V", .3, "{M}.T[{k}]", ()),
    ("index", "V", .3, "{V}[::-1]", ()),
    ("condexpr", "SVM", 1, "({e} if {cs} else {e})", ()),
    ("stop_gradient", "S", 1, "ad.stop_gradient({e})", ()),
    ("stop_gradient", "VM", 1, "ad.stop_gradient({f})", ()),
]

COND_FORMS = [("{s} > {cst}", ()), ("{s} < {cst}", ()), ("{s} > {s}", ()),
              ("np.sum({v}) > {cst}", ()), ("{V}[{i}] < {cst}", ()),
              ("abs({s}) < 0.8", ("abs",)), ("np.any({v} > 0.5)", ()),
              ("({cs}) and ({cs})", ()), ("({cs}) or ({cs})", ()), ("not ({cs})", ())]

_PLACE = re.compile(r"\{(\w+)\}")


def expr(g: Gen, sc: Scope, kind: str, depth: int | None = None) -> str:
    """A random expression of `kind`, at most `depth` operators deep."""
    if depth is None:
        depth = g.rng.randint(1, 3)
    if depth <= 0 or g.chance(0.2):
        return leaf(g, sc, kind)
    special = _special(g, sc, kind, depth)
    if special is not None:
        return _safe(special)
    ops = [op for op in OPS if op[0] in g.features and kind in op[1]
           and all(sc.can(b) for b in op[4])]
    op = g.weighted(ops, [op[2] for op in ops])
    return _safe(fill(g, sc, op[3], kind, depth))


def _safe(text: str) -> str:
    """Parenthesise a leading minus: `-0.7 ** 2` would be `-(0.7 ** 2)`."""
    return f"({text})" if text.startswith("-") else text


def _special(g: Gen, sc: Scope, kind: str, depth: int):
    """Calls and container reads, which are not plain templates."""
    roll = g.rng.random()
    if roll < 0.12 and (g.on("helpers") or g.on("closures")):
        return call(g, sc, kind, depth)
    if roll < 0.22:
        return container_read(g, sc, kind)
    return None


def fill(g: Gen, sc: Scope, template: str, kind: str, depth: int) -> str:
    """Expand a template's placeholders left to right (see module doc)."""
    pair = g.pick(PAIRS[kind])
    return _PLACE.sub(lambda m: _part(g, sc, m.group(1), kind, pair, depth - 1), template)


def _part(g: Gen, sc: Scope, name: str, kind: str, pair, depth: int) -> str:
    if name in ("x", "y"):
        return expr(g, sc, pair[name == "y"], depth)
    if name == "py":
        return positive(g, sc, pair[1], depth)
    if name == "f":                  # a fresh array: never a view of a variable
        text = expr(g, sc, kind, depth)
        return f"({text} + 0.0)" if is_alias(text) else text
    if name in ("e", "p", "b", "c"):              # same kind as the result
        name = name.replace("e", "") + kind.lower()
    simple = {"i": lambda: index(g, sc), "k": g.index, "n": lambda: str(g.n),
              "w": lambda: f"(3.0 * np.eye({g.n}) + 0.1 * np.tanh({ref(g, sc, 'M', depth)}))",
              "cs": lambda: cond(g, sc, depth), "cst": g.const}
    if name in simple:
        return simple[name]()
    if name in ("S", "V", "M"):
        return ref(g, sc, name, depth)
    if name in ("sN", "vN"):
        return ", ".join(expr(g, sc, name[0].upper(), depth - 1) for _ in range(g.n))
    makers = {"": expr, "p": positive, "b": bounded, "c": elementwise_cond}
    return makers[name[:-1]](g, sc, name[-1].upper(), depth)


def leaf(g: Gen, sc: Scope, kind: str) -> str:
    """A variable of `kind` (recent ones preferred), else something simple."""
    found = sc.of(kind)
    if found and g.chance(0.85):
        return g.weighted(found, list(range(1, len(found) + 1))).name
    ints = sc.of("I")
    if kind == "S":
        arrays = sc.of("V", "M")
        if arrays and g.chance(0.7):          # keep scalars data-dependent
            var = g.pick(arrays)
            return g.pick([f"np.sum({var.name})", f"{var.name}[{index(g, sc)}]"
                           if var.kind == "V" else f"{var.name}[{index(g, sc)}, {index(g, sc)}]"])
        if ints and g.chance(0.3):
            return f"(0.1 * {g.pick(ints).name})"
        return _safe(g.const())
    scalar = sc.of("S")
    s = g.pick(scalar).name if scalar and g.chance(0.7) else g.const()
    if kind == "V":
        return f"({s} * np.ones({g.n}))"
    vectors = sc.of("V")
    if vectors:
        return f"np.outer({g.pick(vectors).name}, {g.pick(vectors).name})"
    return f"({s} * np.eye({g.n}))"


def ref(g: Gen, sc: Scope, kind: str, depth: int) -> str:
    """Something a method or subscript can follow: a variable, else `(expr)`."""
    found = sc.of(kind)
    if found and g.chance(0.8):
        return g.pick(found).name
    text = expr(g, sc, kind, min(depth, 1))
    return text if text.isidentifier() or text.startswith("(") else f"({text})"


def index(g: Gen, sc: Scope) -> str:
    ints = sc.of("I")
    if ints and g.chance(0.5):
        return g.pick(ints).name
    return str(g.rng.randrange(g.n))


def positive(g: Gen, sc: Scope, kind: str, depth: int) -> str:
    """An expression of `kind` that is >= 0.5 everywhere."""
    e = expr(g, sc, kind, depth - 1)
    forms = ["(1.0 + {e} ** 2)", "(0.5 + {e} ** 2)"]
    if g.on("elementwise"):
        forms += ["np.exp(np.tanh({e}))", "(2.0 + np.sin({e}))", "(1.5 + np.cos({e}))",
                  "np.sqrt(1.0 + {e} ** 2)", "(1.0 + np.abs({e}))"]
    if kind == "S" and g.on("math"):
        forms += ["math.exp(math.sin({e}))", "(2.0 + math.cos({e}))"]
    return g.pick(forms).replace("{e}", e)


def bounded(g: Gen, sc: Scope, kind: str, depth: int) -> str:
    """An expression of `kind` with values in [-1, 1]."""
    forms = []
    if g.on("elementwise"):
        forms += ["np.tanh({e})", "np.sin({e})", "np.cos({e})"]
    if kind == "S" and g.on("math"):
        forms += ["math.tanh({e})", "math.sin({e})"]
    if not forms:
        short = leaf(g, sc, kind)
        return f"({short} / (1.0 + {short} ** 2))"
    return g.pick(forms).replace("{e}", expr(g, sc, kind, depth - 1))


def elementwise_cond(g: Gen, sc: Scope, kind: str, depth: int) -> str:
    """A boolean of `kind`'s shape, for np.where."""
    return f"({expr(g, sc, kind, depth - 1)} > {g.const(-0.5, 0.5)})"


def cond(g: Gen, sc: Scope, depth: int = 1) -> str:
    """A data-dependent scalar condition (a bool or NumPy bool)."""
    forms = [f for f in COND_FORMS if all(sc.can(b) for b in f[1])]
    if depth <= 0:
        forms = forms[:2]
    return fill(g, sc, g.pick(forms)[0], "S", min(depth, 2))


def call(g: Gen, sc: Scope, kind: str, depth: int):
    """A call of a helper or local function returning `kind`, or None."""
    found = [c for c in g.callables + sc.of("F") if c.info.result == kind]
    if not found:
        return None
    fn = g.pick(found)
    return f"{fn.name}({call_args(g, sc, fn.info, depth - 1)})"


def call_args(g: Gen, sc: Scope, sig, depth: int) -> str:
    """Arguments for `sig`: every required one, some optional ones, positionally
    or by keyword."""
    parts = [expr(g, sc, k, depth) for k in sig.kinds[:sig.required]]
    keyword = False
    for name, k in zip(sig.names[sig.required:], sig.kinds[sig.required:]):
        if g.chance(0.4):
            keyword = True
            continue
        value = expr(g, sc, k, depth)
        parts.append(f"{name}={value}" if keyword or g.chance(0.3) else value)
        keyword = keyword or parts[-1].startswith(f"{name}=")
    if g.on("starargs") and g.chance(0.3):
        parts = _starred(g, parts)
    if sig.options and g.chance(0.6):       # into its `**opts`
        scale = g.const(0.5, 1.5) if g.chance(0.8) else expr(g, sc, "S", depth)
        parts.append(f"scale={scale}")
    return ", ".join(parts)


def _starred(g: Gen, parts: list) -> list:
    """The trailing positional arguments as `*list((...))` and the keyword
    ones as `**dict(...)`: sizes known only when the call runs."""
    positional = [p for p in parts if not re.match(r"[A-Za-z_]\w*=(?!=)", p)]
    keywords = parts[len(positional):]
    cut = g.rng.randrange(len(positional) + 1) if positional else 0
    out = positional[:cut]
    if positional[cut:]:
        out.append(f"*list(({', '.join(positional[cut:])},))")
    if keywords and g.chance(0.6):
        out.append(f"**dict({', '.join(keywords)})")
    else:
        out += keywords
    return out


def container_read(g: Gen, sc: Scope, kind: str):
    """An element of a list, dict or tuple, or a reduction of a list."""
    options = []
    for var in sc.of("L"):
        info = var.info
        if info.elem == kind:
            options.append(f"{var.name}[{g.rng.randrange(-info.length, info.length)}]")
        options += _list_reductions(g, sc, var, kind)
    for var in sc.of("D"):
        if var.info.elem == kind:
            options.append(f"{var.name}[{g.pick(var.info.keys)!r}]")
            options.append(f"{var.name}.get({g.pick(var.info.keys)!r})")
            options.append(f"{var.name}.get('absent', {leaf(g, sc, kind)})")
            if sc.can("sum"):           # a view given to a consumer
                options.append(f"sum({var.name}.values())")
            if sc.can("max") and sc.can("list") and kind == "S":
                options.append(f"max(list({var.name}.values()))")
    for var in sc.of("T"):
        options += [f"{var.name}[{j}]" for j, k in enumerate(var.info) if k == kind]
        if isinstance(var.info, Fields):
            options += [f"{var.name}.{f}" for f, k in zip(PAIR_FIELDS, var.info) if k == kind]
    return g.pick(options) if options else None


def _list_reductions(g: Gen, sc: Scope, var, kind: str) -> list:
    elem, exact_n = var.info.elem, var.info.exact and var.info.length == g.n
    out = []
    if kind == "S" and elem in FLOAT_KINDS:
        out += [f"np.sum({var.name})", f"np.mean({var.name})"]
    if kind == elem and sc.can("sum"):
        out.append(f"sum({var.name})")
    if kind == elem and elem in FLOAT_KINDS:    # a fold, with and without a start
        out += [f"functools.reduce(lambda a, b: a * 0.5 + b, {var.name})",
                f"functools.reduce(lambda a, b: a + b * b, {var.name}, {leaf(g, sc, kind)})"]
    if exact_n and (elem, kind) in (("S", "V"), ("V", "M")):
        out += [f"np.array({var.name})", f"np.stack({var.name})"]
    return out
