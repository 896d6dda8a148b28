"""scalar_types.float_closed: which generated code maps floats to floats
(forward.py then tests the argument types once instead of calling the
boundary's helpers)."""
import builtins
import math

import gast
import pytest

from s2s_ad import scalar_types


def _resolve(call):
    path = gast.unparse(call.func).strip().split(".")
    obj = {"math": math}.get(path[0], getattr(builtins, path[0], None))
    for attr in path[1:]:
        obj = getattr(obj, attr, None)
    return obj


def closed(source: str, result: str = "y") -> bool:
    body = gast.parse(source).body
    return scalar_types.float_closed(body, {"x", "tx"}, [gast.parse(result).body[0].value],
                                     _resolve)


@pytest.mark.parametrize("source", [
    "y = 3.0 * x ** 3 - x + 1",
    "y = x ** 2.0 / 2",
    "y = -x // 2 % 3.0",
    "y = 0.0\nfor i in range(3):\n    y = y + x * i",
    "y = math.sin(x) + abs(x) + float(n) + len(n) + math.pow(x, 2)",
    "x = x * 2\ny = x if x > 0 else tx",
    "y = x\nwhile y > 1.0:\n    y = y / 2\n    if y < 3.0:\n        break",
])
def test_floats_in_floats_out(source):
    assert closed(source)


@pytest.mark.parametrize("source", [
    "y = x ** 0.5",                         # complex for a negative x
    "y = x ** n",
    "y = x * c",                            # c: anything
    "y = 0.0\nfor i in items:\n    y = y + x * i",
    "y = math.floor(x)",                    # an int
    "y = abs(c)",
    "y = x\ny = [y]",
    "x = [x]\ny = x",
    "y = 2 ** 3",                           # ints
    "global g\ny = x",
    "y, z = x, x",
    "y = x\ntry:\n    pass\nfinally:\n    pass",
    "y = f(x)",
    "y = math.sin(x, k=1)",
    "y = y + 1.0",                          # read before any binding
])
def test_not_closed(source):
    assert not closed(source)
