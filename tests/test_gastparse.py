"""`gastparse.parse` builds what `gast.parse` builds, node for node: the
same classes, the same fields in the same order, the same positions, over
every module of the package, the examples, the tests and snippets of the
node kinds they may lack."""
import pathlib

import gast
import pytest

import s2s_ad
from s2s_ad import gastparse

ROOT = pathlib.Path(s2s_ad.__file__).parent.parent
FILES = sorted(ROOT.glob("s2s_ad/**/*.py")) + sorted(ROOT.glob("examples/*.py")) \
    + sorted(ROOT.glob("tests/*.py"))

SNIPPETS = [
    "async def f(a, /, b: int = 1, *c, d=2, **e) -> None:\n    async for x in y:\n"
    "        await x\n    async with a as b:\n        yield b",
    "try:\n    pass\nexcept (A, B) as e:\n    pass\nexcept C:\n    pass\n",
    "match x:\n    case [1, *r] | {'a': 2, **k} | C(1, y=2) as z if z:\n        pass",
    "class C(B, metaclass=M):\n    x: int = 1\n    global g\n    nonlocal_ = lambda *a, **k: a",
    "x = f'{a!r:>{w}}' + rb'\\x00'; del x[1:2, ...]; import a.b as c; from . import d",
    "def g():  # type: () -> None\n    x = 1  # type: int\n",
]


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, gast.AST):
        return list(vars(a)) == list(vars(b)) and all(_same(vars(a)[k], vars(b)[k])
                                                      for k in vars(a))
    return a == b


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_parses_as_gast_parses_it(path):
    text = path.read_text(encoding="utf-8")
    assert _same(gastparse.parse(text), gast.parse(text))


@pytest.mark.parametrize("text", SNIPPETS)
def test_snippets_parse_as_gast_parses_them(text):
    assert _same(gastparse.parse(text), gast.parse(text))


def test_a_syntax_error_is_python_s():
    with pytest.raises(SyntaxError):
        gastparse.parse("x = (")
