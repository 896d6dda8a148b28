"""`unparsing.unparse` prints what `gast.unparse` prints, character for
character: over every module of the package and the examples (each node
kind Python has, nearly), over snippets of each precedence rule, and over
trees sharing a node between two places (gast keeps a node's precedence
for the whole print: the second place reads what the first gave)."""
import pathlib

import gast
import pytest

import s2s_ad
from s2s_ad import astutil, traversal, unparsing

ROOT = pathlib.Path(s2s_ad.__file__).parent.parent
FILES = sorted(ROOT.glob("s2s_ad/**/*.py")) + sorted(ROOT.glob("examples/*.py"))

SNIPPETS = [
    "a = b * (c + d) - -e ** -f ** g",
    "x = (a if b else c) + (lambda y: y)(1)",
    "x = not a < b == c and (d or e) and not (f and g)",
    "x[1:2, ::3], y[()], z[(1,)], w[a, b] = 1.5e300 * 1e400, -1e400j, float('nan'), ...",
    "del a, b[0], c.d",
    "f(*a, b, c=1, **d); 3 .real; (3).real; 3.0.real; 'a'.join(u'b')",
    "async def f(a, /, b=1, *c, d: int = 2, **e) -> None:\n    return (yield (await a))",
    "x = (1, 2) + ((),) + (a,) + (b := 3,); y = {**a, 'b': 1}; z = {1, *s}; w = {*()}",
    "x = [i for i in range(3) if i for j in (1, 2)]; y = {k: v for k, v in z}",
    "x = f'{a!r:>{w}} {b}' + rb'\\x00' + 'it''s'",
    "def f():\n    '''doc'''\n    global g\n    for (a, b) in c:\n        pass\n    else:\n"
    "        while x:\n            break\n    if a:\n        pass\n    elif b:\n        pass\n"
    "    else:\n        raise E from e\n    with a as (b, c), d:\n        pass\n",
    "try:\n    pass\nexcept (A, B) as e:\n    pass\nelse:\n    pass\nfinally:\n    pass",
    "match x:\n    case [1, *r] | {'a': 2, **k} | C(1, y=2) as z if z:\n        pass",
    "class C(B, metaclass=M):\n    x: int = 1\n    (y): int\n    z += 1; z @= w; z **= 2",
]


def _same(tree) -> None:
    assert unparsing.unparse(tree) == gast.unparse(tree)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_module_prints_as_gast_prints_it(path):
    _same(gast.parse(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("text", SNIPPETS)
def test_snippets_print_as_gast_prints_them(text):
    tree = gast.parse(text)
    _same(tree)
    for node in gast.walk(tree):
        if isinstance(node, (gast.stmt, gast.expr)):
            _same(node)


def test_a_shared_node_reads_the_precedence_it_was_last_given():
    total = astutil.binop(astutil.name("a"), gast.Add, astutil.name("b"))
    product = astutil.binop(total, gast.Mult, astutil.name("c"))
    tree = astutil.module([astutil.expr_stmt(product), astutil.assign("d", total)])
    traversal.number_lines(tree)
    assert "d = (a + b)" in unparsing.unparse(tree)
    _same(tree)

