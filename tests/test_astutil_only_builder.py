"""gast nodes are built only in `s2s_ad/astutil.py`.

Every other module of the package builds nodes through astutil's builders,
so a change in gast's node layout is mended in one place.  The check reads
each module with Python's `ast` and refuses a call of a gast node class
(`gast.Subscript(...)`, `gast.Load()`, `gast.keyword(...)`), and the imports
that would hide one (`from gast import Name`, `import gast as g`).
Naming a class without calling it (`isinstance(x, gast.Name)`, `gast.Add`
passed to `astutil.binop`) is fine.
"""
import ast
import pathlib

import gast

import s2s_ad

PACKAGE = pathlib.Path(s2s_ad.__file__).parent
BUILDER = PACKAGE / "astutil.py"


def _is_node_class(attr: str) -> bool:
    cls = getattr(gast, attr, None)
    return attr[:1].isupper() or (isinstance(cls, type) and issubclass(cls, gast.AST))


def constructions(source: str) -> list:
    """(line, what) for each gast node built or imported in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "gast" \
                and _is_node_class(node.func.attr):
            found.append((node.lineno, f"gast.{node.func.attr}(...)"))
        elif isinstance(node, ast.ImportFrom) and node.module == "gast":
            found.append((node.lineno, "from gast import ..."))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import gast as {a.asname}") for a in node.names
                      if a.name == "gast" and a.asname not in (None, "gast")]
    return found


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if p != BUILDER)


def test_the_check_sees_a_construction():
    source = ("import gast\n"
              "x = isinstance(y, gast.Name) and gast.Add\n"
              "z = gast.Subscript(value=v, slice=i, ctx=gast.Load())\n"
              "k = gast.keyword(arg='a', value=v)\n"
              "w = gast.walk(z)\n")
    assert sorted(constructions(source)) == [
        (3, "gast.Load(...)"), (3, "gast.Subscript(...)"), (4, "gast.keyword(...)")]
    assert sorted(constructions("from gast import Name\nimport gast as g\n")) == [
        (1, "from gast import ..."), (2, "import gast as g")]


def test_gast_nodes_are_built_only_in_astutil():
    assert len(modules()) > 20 and BUILDER.exists()
    offences = [f"{path.relative_to(PACKAGE.parent)}:{line}: {what}"
                for path in modules()
                for line, what in constructions(path.read_text(encoding="utf-8"))]
    assert not offences, ("gast nodes are built only in s2s_ad/astutil.py; use (or add) "
                          "a builder there instead of:\n  " + "\n  ".join(offences))
