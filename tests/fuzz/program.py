"""A generated test case (`Program`) and how to load it as a real module.

s2s_ad reads source through `inspect`, so each program is written to its
own .py file in a temporary directory and imported from there; every load
gets a fresh file and module name, so `linecache` and s2s_ad's cache never
see a stale version of a program the minimizer edited.
"""
from __future__ import annotations

import atexit
import dataclasses
import importlib.util
import inspect
import linecache
import os
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Program:
    """A module's source, the function to differentiate and how to call it.

    `wrt` holds (parameter name, style) pairs; style is "index", "neg" (a
    negative index), "name", or "default" (no `wrt` argument: index 0).
    """

    seed: int
    source: str
    entry: str
    params: tuple            # names of the parameters passed, in order
    args: tuple              # their values
    mode: str                # "grad" | "value_and_grad" | "vjp"
    has_aux: bool
    wrt: tuple
    wrt_tuple: bool
    features: tuple = field(default=(), compare=False)

    def wrt_value(self, all_params: list):
        """The `wrt` argument for a function with parameters `all_params`
        (None when the default is meant)."""
        items = []
        for name, style in self.wrt:
            i = all_params.index(name)
            items.append({"index": i, "neg": i - len(all_params), "name": name,
                          "default": i}[style])
        if self.wrt_tuple:
            return tuple(items)
        return None if self.wrt[0][1] == "default" else items[0]

    def transform_call(self, all_params: list) -> str:
        """The s2s_ad call this program makes, as source text."""
        options = []
        wrt = self.wrt_value(all_params)
        if wrt is not None:
            options.append(f"wrt={wrt!r}")
        if self.has_aux:
            options.append("has_aux=True")
        return f"ad.{self.mode}({self.entry}{''.join(', ' + o for o in options)})"

    def cotangent(self, output):
        """The vjp seed: seeded random, shaped like the primal's output
        (`reproducer` writes the same computation out)."""
        ct = np.random.default_rng(self.seed + 7).standard_normal(np.shape(output))
        return ct if isinstance(output, np.ndarray) else float(ct)

    def with_source(self, source: str) -> "Program":
        return dataclasses.replace(self, source=source)

    def reproducer(self) -> str:
        """The program followed by code that runs it: a regression-test seed."""
        params = list(inspect_params(self.source, self.entry))
        imports = [i for i in ("import numpy as np", "import s2s_ad as ad") if i not in self.source]
        lines = imports + [self.source.rstrip(), "", ""]
        lines += [f"{name} = {value_repr(value)}" for name, value in zip(self.params, self.args)]
        call = ", ".join(self.params)
        if self.mode == "vjp":
            lines += ["import copy", f"out = {self.entry}(*copy.deepcopy([{call}]))",
                      f"ct = np.random.default_rng({self.seed + 7}).standard_normal(np.shape(out))",
                      "ct = ct if isinstance(out, np.ndarray) else float(ct)"]
            call += ", seed=ct" if _has_defaults(self.source, self.entry) else ", ct"
        lines.append(f"print({self.transform_call(params)}({call}))")
        return "\n".join(lines) + "\n"


def value_repr(value) -> str:
    """Source text that rebuilds an argument value exactly."""
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r})"
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({value.item()!r})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {value_repr(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(value_repr(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner},)"
    return repr(value)


def inspect_params(source: str, entry: str) -> list:
    """Parameter names of `entry` in `source`, without importing it."""
    import ast
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            a = node.args
            return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    return []


def _has_defaults(source: str, entry: str) -> bool:
    import ast
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            return bool(node.args.defaults or node.args.kw_defaults)
    return False


class Loader:
    """Writes programs to files in a private temporary directory and
    imports them; `unload` forgets a module again."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="s2s_ad_fuzz_")
        self.count = 0
        atexit.register(shutil.rmtree, self.dir, True)

    def load(self, source: str):
        """Import `source` as a new module (exceptions propagate)."""
        self.count += 1
        name = f"fuzz_{os.getpid()}_{self.count}"
        path = os.path.join(self.dir, name + ".py")
        with open(path, "w") as fh:
            fh.write(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        dont_write = sys.dont_write_bytecode
        sys.dont_write_bytecode = True
        try:
            with warnings.catch_warnings():       # minimized candidates may warn
                warnings.simplefilter("ignore")
                spec.loader.exec_module(module)
        except BaseException:
            self.unload(module)
            raise
        finally:
            sys.dont_write_bytecode = dont_write
        return module

    def unload(self, module) -> None:
        sys.modules.pop(module.__name__, None)
        path = module.__file__
        linecache.cache.pop(path, None)
        try:
            os.remove(path)
        except OSError:
            pass


def signature_params(func) -> list:
    return list(inspect.signature(func).parameters)
