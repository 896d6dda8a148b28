"""The `s2s-ad` command: print what the compiler generates, check a gradient.

    s2s-ad dump FILE.py:FUNC [--wrt NAMES] [--no-optimize] [--stage NAME|list]
                             [--mode grad|value_and_grad|vjp|jvp|hvp|jacobian|hessian]
    s2s-ad check FILE.py:FUNC [--wrt NAMES] [--shape SHAPE ...] [--seed N]
    s2s-ad rules

`check` draws standard normal inputs (float scalars, or arrays of the
`--shape` given per positional parameter) and compares the gradient with
finite differences (`checking.compare`, the core of `check_grads`): it
prints one verdict line and exits 0 if they agree, 1 if not.

Bad input (missing file or function, a syntax error, an unsupported
construct) prints one line on stderr, with file:line where there is one, and
exits with status 2; never a traceback.  A bug in s2s_ad (`InternalError`:
the compiler failed, or generated code that does not compile) prints the
whole report, generated code included, and exits with status 3; broken code
is never printed as if it were the result.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import inspect
import re
import sys

import numpy as np

from . import api, checking, codegen, composed, driver, pipeline
from .errors import InternalError, S2SADError
from .rules import registry

_EXIT_MISMATCH = 1
_EXIT_USAGE = 2
_EXIT_INTERNAL = 3


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:             # `s2s-ad rules | head`: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except InternalError as exc:
        print(f"s2s-ad: {exc}", file=sys.stderr)
        return _EXIT_INTERNAL
    except S2SADError as exc:
        print(f"s2s-ad: error: {exc.one_line()}", file=sys.stderr)
        return _EXIT_USAGE
    except _CliError as exc:
        print(f"s2s-ad: error: {exc}", file=sys.stderr)
        return _EXIT_USAGE


class _CliError(Exception):
    pass


def _target_arguments(command: argparse.ArgumentParser) -> None:
    """FILE.py:FUNC and --wrt, as every command that differentiates takes them."""
    command.add_argument("target", metavar="FILE.py:FUNC")
    command.add_argument("--wrt", default=None, help="comma-separated parameter names or "
                         "indices (default: the first)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2s-ad", description="Source-to-source automatic differentiation "
        "for Python and NumPy: print the generated derivative code.")
    sub = parser.add_subparsers(dest="command", required=True)
    imports = "imports FILE.py: its top-level code runs, with its output sent to stderr"
    dump = sub.add_parser(
        "dump", help=f"print the generated gradient of FILE.py:FUNC ({imports})",
        description=f"Print the generated gradient of FILE.py:FUNC. It {imports}.")
    _target_arguments(dump)
    dump.add_argument("--mode", default="grad", choices=list(_MODES),
                      help="the transform: grad (default), value_and_grad, vjp, jvp "
                      "(forward mode), or hvp, jacobian, hessian (built from them: "
                      "their generated function is printed)")
    dump.add_argument("--no-optimize", action="store_true",
                      help="print the code before the optimization passes")
    dump.add_argument("--stage", default=None, metavar="NAME",
                      help="print one compiler stage's output instead (see --stage list)")
    dump.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    dump.set_defaults(run=_dump)
    check = sub.add_parser(
        "check", help="compare the gradient of FILE.py:FUNC with finite differences at "
        "random inputs (exit 0: they agree, 1: mismatch, 2: bad input)",
        description="Compare the gradient of FILE.py:FUNC with central finite "
        f"differences in a random direction at random inputs. It {imports}.")
    _target_arguments(check)
    check.add_argument("--shape", action="append", default=None, metavar="SHAPE",
                       help="one per positional parameter, in order: '3,4' for a 3x4 array, "
                       "'' or '()' for a float scalar (default: every parameter a scalar; a "
                       "parameter with a default keeps it unless given a shape)")
    check.add_argument("--seed", type=int, default=0,
                       help="seeds the inputs and the directions (default 0)")
    check.set_defaults(run=_check)
    rules = sub.add_parser("rules", help="list every function with a derivative rule")
    rules.set_defaults(run=_rules)
    return parser


# --mode -> None for a transform compiled as such, else the function composing it
_MODES = {"grad": None, "value_and_grad": None, "vjp": None, "jvp": None,
          "hvp": composed.hvp, "jacobian": composed.jacobian, "hessian": composed.hessian}


def _dump(args) -> int:
    if args.stage == "list":
        for name, what in pipeline.STAGES.items():
            print(f"{name:<10} {what}")
        return 0
    if args.stage is not None and args.stage not in pipeline.STAGES:
        raise _CliError(f"no stage named {args.stage!r}; the stages are "
                        f"{', '.join(pipeline.STAGES)}")
    func = _load_function(args.target)
    wrt = _parse_wrt(args.wrt)
    if _MODES[args.mode] is not None:           # composed: print what it runs
        if args.stage is not None:
            raise _CliError(f"--stage is not available with --mode {args.mode}; use "
                            "--mode jvp on the gradient's stages instead")
        derived = _MODES[args.mode](func, wrt=wrt, optimize=not args.no_optimize)
        print(_colorize(api.source(derived), args.color), end="")
        return 0
    if args.stage is not None:
        out = api.stages(func, wrt=wrt, mode=args.mode, optimize=not args.no_optimize)
        if args.stage not in out:
            raise _CliError(f"stage {args.stage!r} does not run with --no-optimize")
        print(_colorize(out[args.stage], args.color), end="")
        return 0
    options = api.Options(args.mode, wrt, False, not args.no_optimize)
    out = driver.compile_adjoint(func, options)
    codegen.check_generated(out.text, func)
    print(_colorize(out.text, args.color), end="")
    guarded = out.guard.imports if out.guard is not None else {}
    for name, obj in out.imports.items():      # the callees' generated adjoint pairs
        if name not in guarded and getattr(obj, "__s2s_ad_primal__", None) is not None:
            print(f"\n# {name}: generated from {obj.__s2s_ad_primal__().__qualname__}")
            print(_colorize(api.source(obj), args.color), end="")
    return 0


def _check(args) -> int:
    if args.seed < 0:
        raise _CliError(f"--seed {args.seed}: give a non-negative integer")
    func = _load_function(args.target)
    wrt = _parse_wrt(args.wrt)
    names = _drawn_parameters(func, args.shape)
    shapes = _parse_shapes(args.shape, names)
    _check_wrt_drawn(func, wrt, names)
    rng = np.random.default_rng(args.seed)
    inputs = tuple(float(rng.standard_normal()) if s is None else rng.standard_normal(s)
                   for s in shapes)
    try:        # what the function prints goes to stderr: stdout is the verdict
        with contextlib.redirect_stdout(sys.stderr):
            report = checking.compare(func, inputs, wrt, seed=int(rng.integers(2 ** 31)))
    except S2SADError:
        raise
    except Exception as exc:      # the user's function failed on the drawn inputs
        raise _CliError(f"{args.target}: calling it on the drawn inputs (shapes "
                        f"{_shapes_text(shapes)}) failed: {type(exc).__name__}: {exc} "
                        "(give each parameter's shape with --shape)") from None
    worst = report.worst()
    if not report.passed and not np.isfinite(worst.approx):
        raise _CliError(f"{args.target}: cannot check: the function is not finite near the "
                        f"drawn inputs (finite differences give {worst.approx}); try another "
                        "--seed, or check it with check_grads where it is defined")
    print(_verdict(report))
    return 0 if report.passed else _EXIT_MISMATCH


def _drawn_parameters(func, shapes: list | None) -> list[str]:
    """The positional parameters `check` draws: those without a default,
    and those with one that `--shape` covers."""
    params = [p for p in inspect.signature(func).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p.name for p in params if p.default is p.empty]
    missing = [p.name for p in inspect.signature(func).parameters.values()
               if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    if missing:
        raise _CliError(f"{func.__name__}: keyword-only parameter {missing[0]!r} has no "
                        "default; check draws positional parameters only")
    if not params:
        raise _CliError(f"{func.__name__}: no positional parameter to draw an input for")
    given = len(shapes or ())
    if given > len(params) or shapes is not None and given < len(required):
        signature = f"{func.__name__}({', '.join(p.name for p in params)})"
        raise _CliError(f"{given} --shape given for {signature}: give one per positional "
                        f"parameter ({len(required)} without a default), or none for "
                        "float scalars")
    return [p.name for p in params[:max(given, len(required))]]


def _check_wrt_drawn(func, wrt, names: list[str]) -> None:
    """A `--wrt` parameter with a default is drawn only if given a --shape."""
    params = list(inspect.signature(func).parameters)
    for item in wrt if isinstance(wrt, tuple) else (wrt,):
        name = params[item] if isinstance(item, int) and -len(params) <= item < len(params) \
            else item
        if name in params and name not in names:
            raise _CliError(f"--wrt {item!r}: {func.__name__}'s parameter {name!r} is not "
                            "drawn (it has a default or is not positional); give a --shape "
                            "for each positional parameter up to it")


def _parse_shapes(specs: list | None, names: list[str]) -> list:
    """Each parameter's shape: None for a float scalar, else a tuple."""
    shapes = []
    for name, spec in zip(names, specs or [""] * len(names)):
        text = spec.strip()
        text = text[1:-1] if text.startswith("(") and text.endswith(")") else text
        parts = [p.strip() for p in text.split(",")] if text.strip() else []
        parts = parts[:-1] if parts and parts[-1] == "" and len(parts) > 1 else parts
        if not all(re.fullmatch("[0-9]+", p) for p in parts):
            raise _CliError(f"--shape {spec!r} (for {name!r}): expected sizes separated by "
                            "commas, such as 3,4 or 5, or \"\" or () for a float scalar")
        shapes.append(tuple(int(p) for p in parts) if parts else None)
    return shapes


def _shapes_text(shapes: list) -> str:
    return ", ".join("scalar" if s is None else "x".join(map(str, s)) or "()" for s in shapes)


def _verdict(report: checking.Report) -> str:
    worst = report.worst()
    names = list(dict.fromkeys(c.argument for c in report.comparisons))
    over = f"over {report.directions} direction{'s' * (report.directions > 1)}" + (
        f" for each of {', '.join(names)}" if len(names) > 1 else "")
    sizes = f"rel error {worst.rel_error:.1e} (abs {worst.abs_error:.1e})"
    if report.passed:
        return f"ok: {sizes} {over}"
    return (f"MISMATCH: {sizes} for {worst.argument!r} in direction {worst.direction} of "
            f"{report.directions}: s2s_ad {worst.exact:.8g} vs finite differences "
            f"{worst.approx:.8g} (allowed: atol {report.atol:g} + rtol {report.rtol:g} "
            "x the larger)")


def _parse_wrt(spec: str | None):
    if spec is None:
        return 0
    items = tuple(int(s) if re.fullmatch(r"\s*-?\d+\s*", s) else s.strip()
                  for s in spec.split(",") if s.strip())
    return items[0] if len(items) == 1 else items


def _load_function(target: str):
    """The function FILE.py:FUNC names (its primal if it is a pair), or a
    one-line `_CliError` saying why not."""
    path, name = _source_path(target)
    module = _import_file(path)
    func = getattr(module, name, None)
    if func is None:
        raise _CliError(f"{path}: no function named {name!r}")
    primal = getattr(func, "__s2s_ad_primal__", None)
    func = primal() if primal is not None else func
    if not callable(func):
        raise _CliError(f"{path}: {name!r} is not a function")
    return func


def _source_path(target: str) -> tuple[str, str]:
    """Split FILE.py:FUNC, refusing a path that is not a Python source file
    before anything is imported."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise _CliError(f"expected FILE.py:FUNC, got {target!r}")
    if os.path.isdir(path):
        raise _CliError(f"{path}: is a directory, not a Python file")
    if not os.path.isfile(path):
        raise _CliError(f"{path}: no such file")
    if not path.endswith(".py"):
        raise _CliError(f"{path}: not a Python source file (expected FILE.py:FUNC)")
    with open(path, "rb") as fh:
        if b"\0" in fh.read():
            raise _CliError(f"{path}: a binary file, not Python source")
    return path, name


def _import_file(path: str):
    """Import the file as a module, turning its failures into one-line
    `_CliError`s (stdout stays reserved for the generated code)."""
    module_name = "_s2s_ad_cli_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:        # the module's own output goes to stderr: stdout is the generated code
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    except SyntaxError as exc:
        where = f"{exc.filename or path}:{exc.lineno}" if exc.lineno else path
        raise _CliError(f"{where}: syntax error: {exc.msg}") from None
    except SystemExit as exc:
        raise _CliError(f"{path}: the module called sys.exit({exc.code!r}) while "
                        "importing; guard its script part with "
                        "`if __name__ == \"__main__\":`") from None
    except Exception as exc:      # the user's module failed while importing
        raise _CliError(f"{path}: importing the file failed: "
                        f"{type(exc).__name__}: {exc}") from None
    finally:
        sys.path.pop(0)
    return module


def _rules(args) -> int:
    names = sorted(registry.display_name(t) for t in registry.registered()
                   if not _internal(t))
    for name in names:
        print(name)
    flat = [t for t in registry.nondifferentiables() if not _internal(t)]
    print(f"# {len(names)} functions with rules; {len(flat)} declared non-differentiable")
    return 0


def _internal(target) -> bool:
    """s2s_ad's own primitives (tuple displays, `x[i] = v`), not user API."""
    return isinstance(target, registry.Literal) or (
        callable(target) and (getattr(target, "__module__", None) or "").startswith("s2s_ad.runtime"))


def _colorize(text: str, mode: str) -> str:
    """Highlight with pygments if installed and stdout is a terminal."""
    if mode == "never" or (mode == "auto" and not sys.stdout.isatty()):
        return text
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return text
    return highlight(text, PythonLexer(), TerminalFormatter())
