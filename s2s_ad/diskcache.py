"""The on-disk cache of generated code: a fresh process skips compilation.

An entry is the generated text of one derived function (or adjoint pair)
with a *recipe* for each object it reads (recipes.py): how to find the
object again in this process, and a fingerprint that says it is the same
(the code of a user's function, the name of a library's).  Loading
re-resolves every recipe and checks every fingerprint, including those of
the names the function resolved at compile time (its guard's dependencies)
and of the callees whose pairs it calls, which load the same way; any
difference is a miss, and the function compiles as if there were no cache.

The file name is a hash of everything else the text depends on: the
function's source text, module, name, file and first line, the request's
options, the function's code, s2s_ad's own source files, the Python, NumPy
and gast versions, and the rules registered by the user (each target's
name and its template's text; a rule for a target without a stable name,
such as a lambda, turns the cache off).

Where: `S2S_AD_CACHE_DIR` if set (empty: no disk cache), else the user's
cache directory (`$XDG_CACHE_HOME` or `~/.cache`, `~/Library/Caches` on
macOS, `%LOCALAPPDATA%` on Windows) + `s2s_ad`; `grad(..., disk_cache=False)`
turns it off for one request.

Invariants: the directory is created user-only (0700) and not used unless
the user owns it and no one else may write it; files are written to a
temporary name and renamed (atomic), readable by the user only; each file
carries an HMAC of its content under a random key kept in the directory,
and a file whose HMAC does not match is never executed: the cache only
loads code it wrote.  Files are JSON (nothing is unpickled).  Any failure
to read or write is a miss, never an error.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import tempfile
from dataclasses import dataclass

import gast
import numpy

from . import recipes
from .rules import registry
from .sourcelines import source_lines

_FORMAT = 1
_KEY_FILE = "hmac.key"


@dataclass
class Artifact:
    """What linking a derived function needs (see driver._link)."""

    text: str                   # the generated defs
    hidden: str                 # the staleness check's def, or ""
    imports: dict               # names the text reads -> objects
    deps: tuple                 # guards.Dep: what it was compiled against
    was: str | None             # the guard's first expected-object name, if guarded
    rederive: str | None        # the name of its `Rederive`, if any


def directory() -> str | None:
    """The cache directory for this request's process, or None (off)."""
    chosen = os.environ.get("S2S_AD_CACHE_DIR")
    if chosen is not None:
        return os.path.abspath(os.path.expanduser(chosen)) if chosen else None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "s2s_ad")


def load(where, context: recipes.Context) -> Artifact | None:
    """The artifact at `where` (`entry`), resolved in this process, or None
    (a miss)."""
    if where is None:
        return None
    path, secret = where
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    mac, _, body = data.partition(b"\n")
    if not hmac.compare_digest(mac, _mac(secret, body)):
        return None                 # not written by this cache: never run
    try:
        entry = json.loads(body)
        imports = {name: recipes.decode(r, context) for name, r in entry["imports"].items()}
        deps = tuple(recipes.decode_dep(d, context) for d in entry["deps"])
    except (recipes.Miss, KeyError, TypeError, ValueError, SyntaxError, RecursionError):
        return None
    return Artifact(entry["text"], entry["hidden"], imports, deps, entry["was"],
                    entry["rederive"])


def store(where, art: Artifact, context: recipes.Context) -> bool:
    """Write `art` at `where` (`entry`); False if it cannot be (an object
    without a recipe, no usable directory)."""
    if where is None:
        return False
    try:
        imports = {name: recipes.encode(obj, context) for name, obj in art.imports.items()
                   if name != art.rederive}
        deps = [recipes.encode_dep(d, context) for d in art.deps]
    except recipes.Miss:
        return False
    path, secret = where
    body = json.dumps({"text": art.text, "hidden": art.hidden, "imports": imports,
                       "deps": deps, "was": art.was, "rederive": art.rederive},
                      sort_keys=True).encode()
    try:
        fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(_mac(secret, body) + b"\n" + body)
        os.replace(temp, path)
    except OSError:
        return False
    return True


def entry(func, options) -> tuple[str, bytes] | None:
    """Where the entry of `func` for `options` lives: (its file, the
    directory's HMAC key), or None when the disk cache is off for it."""
    rules = registry.fingerprint()
    if getattr(options, "disk", True) is False or rules is None:
        return None
    root = directory()
    if root is None:
        return None
    key = _key(func, options, rules)
    secret = _secret(root) if key is not None else None
    if secret is None:
        return None
    return os.path.join(root, f"v{_FORMAT}", key + ".json"), secret


def _key(func, options, rules: str) -> str | None:
    """A hash of everything the generated text depends on but its recipes."""
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    try:
        lines, first = source_lines(code)
    except (OSError, TypeError):
        return None
    parts = [_FORMAT, _own_source(), sys.version, numpy.__version__,
             getattr(gast, "__version__", ""), func.__module__, func.__qualname__,
             code.co_filename, first, "".join(lines), repr(options), rules,
             hashlib.sha256(recipes.code_bytes(code)).hexdigest()]
    return hashlib.sha256(json.dumps(parts, default=repr).encode()).hexdigest()


def _secret(root: str) -> bytes | None:
    """The directory's HMAC key, created with the directory if need be;
    None if the directory is not the user's alone."""
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
        os.makedirs(os.path.join(root, f"v{_FORMAT}"), mode=0o700, exist_ok=True)
        for path in (root, os.path.join(root, f"v{_FORMAT}")):
            if not _private(path):
                return None
        path = os.path.join(root, _KEY_FILE)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            if not _private(path):
                return None
            with open(path, "rb") as f:
                secret = f.read()
            return secret if len(secret) == 32 else None
        secret = os.urandom(32)
        with os.fdopen(fd, "wb") as f:
            f.write(secret)
        return secret
    except OSError:
        return None


def _private(path: str) -> bool:
    """Owned by this user, and no one else may write it."""
    if not hasattr(os, "getuid"):
        return True                 # Windows: the profile directory's ACLs
    info = os.lstat(path)
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


def _mac(secret: bytes, body: bytes) -> bytes:
    return hmac.new(secret, body, hashlib.sha256).hexdigest().encode()


_OWN: list = []


def _own_source() -> str:
    """A hash of s2s_ad's own source files (a change to a rule or a pass
    changes what it generates), computed once per process."""
    if not _OWN:
        digest = hashlib.sha256()
        package = os.path.dirname(os.path.abspath(__file__))
        for folder, dirs, files in sorted(os.walk(package)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    with open(os.path.join(folder, name), "rb") as f:
                        digest.update(name.encode() + b"\0" + f.read())
        _OWN.append(digest.hexdigest())
    return _OWN[0]
