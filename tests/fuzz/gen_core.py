"""Core of the program generator: kinds, typed variables, scopes, names and
the indented writer.

Every value the generator creates has a *kind* that fixes its type and
shape, so each expression it writes is valid by construction:

    S  a float (Python float or NumPy float64)
    V  a float64 vector of shape (n,)
    M  a float64 matrix of shape (n, n)
    I  an int in [0, n): loop indices, valid as an index into V and M
    L  a list        (info: ListInfo)
    D  a dict        (info: DictInfo, str keys, values of one kind)
    T  a tuple       (info: tuple of element kinds; a `Fields` one is a
                      named tuple `Pair(a, b)`, its fields also read by name)
    F  a callable    (info: Sig)
    X  anything that must not be read again (strings, counters, slices)

`n` is fixed per program.  The generator never relies on Python's hash or
id order: every choice goes through `Gen.rng`, a `random.Random(seed)`.
"""
from __future__ import annotations

import ast
import builtins
import random
from contextlib import contextmanager
from dataclasses import dataclass, field

FLOAT_KINDS = ("S", "V", "M")
RANK = {"S": 0, "V": 1, "M": 2}

# Every feature the generator can switch on.  "arith" is always on.
FEATURES = (
    "arith", "math", "elementwise", "construct", "reduce", "linalg", "index",
    "if", "condexpr", "for", "while", "jumps", "helpers", "closures",
    "stop_gradient", "lists", "dicts", "tuples", "inplace", "views", "names",
    "walrus", "pytree", "value_and_grad", "has_aux", "vjp", "wrt", "comprehensions",
    "with", "starargs",
)

# Builtins a function may rebind as a parameter or a local.
BUILTIN_SHADOWS = ("type", "range", "len", "sum", "list", "float", "min", "max",
                   "zip", "abs", "reversed", "slice", "tuple", "int", "isinstance",
                   "enumerate", "bool", "dict", "pow", "iter", "map", "filter")
# Names that look like the ones s2s_ad generates.
GENERATED_LOOKING = ("tape", "saved", "rt", "np_1", "trips", "broke", "_t1", "_t2",
                     "_sum1", "_exp1", "_tanh1", "seed", "adj", "ret", "res_1")
PARAM_NAMES = ("x", "w", "b", "y", "theta", "v", "W", "z", "a", "h")
PLAIN_NAMES = ("a", "b", "c", "h", "u", "w", "y", "z", "s", "t", "acc", "total",
               "out", "tmp", "val", "res", "p", "q", "r", "e", "m", "step", "state",
               "score", "feat", "hid", "mu", "err", "diff", "loss", "lr", "beta")


@dataclass(frozen=True)
class Sig:
    """A callable's signature: parameter names and kinds, result kind(s)."""

    names: tuple
    kinds: tuple
    result: object          # a kind, or a tuple of kinds (a tuple-returning helper)
    required: int           # the leading parameters without a default
    options: bool = False   # takes `**opts` (reads `opts.get('scale', 1.0)`)


class Fields(tuple):
    """The kinds of a named tuple's fields, `PAIR_FIELDS` by name."""


PAIR_FIELDS = ("a", "b")      # of the module's `Pair = collections.namedtuple(...)`


@dataclass
class ListInfo:
    elem: str               # kind of the elements
    length: int             # at least this many elements
    exact: bool = True      # exactly `length` elements


@dataclass
class DictInfo:
    elem: str
    keys: list


@dataclass
class Var:
    """A name bound in generated code.  `alias`: may share memory with
    another array (a view, a row, a plain copy of a name, a helper's
    parameter), so in-place updates through it belong to the "views"
    feature."""

    name: str
    kind: str
    info: object = None
    alias: bool = False
    fixed: bool = False     # never rebound here (a global, an enclosing variable)
    pinned: bool = False    # read by a closure: may be rebound, but keeps its kind


class Scope:
    """The variables visible at one point of one generated function.

    Child scopes (block bodies) share `taken` and the Var objects with their
    parent; variables first bound in a block are dropped when it ends, and a
    block may not change the kind of a variable of an enclosing block.
    """

    def __init__(self, taken: set, shadowed: tuple, ret=None):
        self.vars: dict[str, Var] = {}
        self.taken = taken            # every name bound anywhere in the function
        self.shadowed = shadowed      # builtins this function rebinds
        self.ret = ret                # callable(scope) -> "return ..." text, or None
        self.depth = 0
        self.in_loop = False
        self.no_jump = False          # inside a loop whose trip count must stay exact

    def child(self, loop: bool = False) -> "Scope":
        sub = Scope(self.taken, self.shadowed, self.ret)
        sub.vars = dict(self.vars)
        sub.depth = self.depth + 1
        sub.in_loop = self.in_loop or loop
        sub.no_jump = self.no_jump
        return sub

    def add(self, var: Var) -> Var:
        self.vars.pop(var.name, None)          # re-insert: most recent last
        self.vars[var.name] = var
        self.taken.add(var.name)
        return var

    def of(self, *kinds) -> list:
        return [v for v in self.vars.values() if v.kind in kinds]

    def names_of(self, *kinds) -> list:
        """Plain identifiers (not `d[key]` pseudo-variables) of these kinds."""
        return [v for v in self.of(*kinds) if v.name.isidentifier()]

    def targets(self, *kinds) -> list:
        """Variables of these kinds that a statement here may rebind."""
        return [v for v in self.of(*kinds) if not v.fixed]

    def can(self, builtin: str) -> bool:
        """May generated code call this builtin here (not rebound)?"""
        return builtin not in self.shadowed


class Writer:
    """Collects source lines at the current indentation."""

    def __init__(self):
        self.lines: list[str] = []
        self.level = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self.level + text)

    @contextmanager
    def block(self, header: str):
        self.line(header)
        self.level += 1
        start = len(self.lines)
        yield
        if len(self.lines) == start:           # never leave a block empty
            self.line("pass")
        self.level -= 1

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class Gen:
    """Per-program generator state: the random stream, the active features,
    the vector length `n`, module-level names and the output writer."""

    def __init__(self, seed: int, enabled=FEATURES):
        self.rng = random.Random(seed)
        self.features = self._active(enabled)
        self.n = self.rng.choice((2, 3, 3, 4))
        self.w = Writer()
        self.module_names = {"np", "math", "ad"}
        self.callables: list[Var] = []       # module-level helpers (kind F)
        self.globals: list[Var] = []         # module-level constants (kind S)
        self.extra_tricky: list[str] = []    # more names for "names" (e.g. "ot" next to dot)
        self.budget = 0                      # statements left in the current function

    def _active(self, enabled) -> frozenset:
        """A random subset of the enabled features, so that programs vary in
        which constructs they mix (and common failures do not mask others)."""
        p = self.rng.choice((0.35, 0.6, 0.9))
        on = [f for f in FEATURES if f in enabled and (f == "arith" or self.rng.random() < p)]
        return frozenset(on)

    def on(self, feature: str) -> bool:
        return feature in self.features

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def weighted(self, items: list, weights: list):
        return self.rng.choices(items, weights=weights, k=1)[0]

    def const(self, lo: float = -1.5, hi: float = 1.5) -> str:
        """A float literal in [lo, hi], two decimals, never zero."""
        value = round(self.rng.uniform(lo, hi), 2)
        return repr(value if value != 0 else 0.5)

    def index(self) -> str:
        return str(self.rng.randrange(-self.n, self.n))

    def fresh(self, sc: Scope, tricky: float = 0.3, pool=PLAIN_NAMES) -> str:
        """A name not yet bound in this function nor at module level; with the
        "names" feature, often one that shadows a builtin this function gave
        up, or that looks like a name s2s_ad generates."""
        if self.on("names") and self.chance(tricky):
            odd = [c for c in self._tricky(sc) if self._free(c, sc)]
            if odd:
                return self._take(self.pick(odd), sc)
        order = list(pool)
        self.rng.shuffle(order)
        for name in order:
            if self._free(name, sc):
                return self._take(name, sc)
        k = 1
        while not self._free(f"v{k}", sc):
            k += 1
        return self._take(f"v{k}", sc)

    def _tricky(self, sc: Scope) -> list:
        known = [v.name for v in sc.vars.values() if v.name.isidentifier()]
        return (list(sc.shadowed) + list(GENERATED_LOOKING)
                + ["d" + v for v in known] + [v + "_old" for v in known]
                + [c.name + "_fwd" for c in self.callables]
                + [c.name + "_bwd" for c in self.callables] + self.extra_tricky)

    def _free(self, name: str, sc: Scope) -> bool:
        if name in sc.taken or name in self.module_names:
            return False
        return not hasattr(builtins, name) or name in sc.shadowed

    @staticmethod
    def _take(name: str, sc: Scope) -> str:
        sc.taken.add(name)
        return name

    def shadows(self) -> tuple:
        """Builtins a new function will rebind (decided before its body is
        written, since a local is local in the whole function)."""
        if not self.on("names") or not self.chance(0.5):
            return ()
        k = self.rng.randint(1, 3)
        return tuple(self.rng.sample(BUILTIN_SHADOWS, k))


def strip(text: str) -> str:
    """`text` without one pair of parentheses around all of it."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for pos, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and pos < len(text) - 1:
            return text
    return text[1:-1]


def is_alias(text: str) -> bool:
    """Might the value of `text` share memory with a variable?  True for a
    name, a subscript or `.T` of one, a conditional choosing between such,
    stop_gradient / np.asarray / np.transpose of such, and a call of one of
    the program's own functions (it may return its argument)."""
    def shares(node) -> bool:
        if isinstance(node, (ast.Name, ast.Subscript)):
            return True
        if isinstance(node, ast.Attribute):
            return node.attr == "T"
        if isinstance(node, ast.IfExp):
            return shares(node.body) or shares(node.orelse)
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in ("ad.stop_gradient", "np.asarray", "np.transpose"):
                return shares(node.args[0])
            return not name.startswith(("np.", "math.")) and "." not in name \
                and name not in ("abs", "max", "min", "float", "sum", "pow")
        return False
    return shares(ast.parse(text, mode="eval").body)
