"""Where code comes from: the generated code that is running, so that a
helper's error names the user's function (codegen notes each generated
code object in `origins`; `origin()` finds the innermost one on the
stack), and whether a file is Python's or an installed package's
(`INSTALLED`) rather than the user's."""
from __future__ import annotations

import functools
import os
import sys
import sysconfig
import weakref

INSTALLED = tuple(os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                  for k in ("stdlib", "purelib", "platlib"))   # path prefixes

class _ByIdentity:
    """A table keyed by objects themselves, held weakly.  Not a
    `WeakKeyDictionary`: code objects compare and hash by content, so two
    derived functions printed alike (one user's lambda and another's) were
    one key, and the first to be collected took the other's entry along
    (a second-order refusal was then located in generated code)."""

    def __init__(self):
        self._entries: dict = {}        # id(key) -> (weak reference to key, value)

    def __setitem__(self, key, value) -> None:
        entry = self._entries.get(id(key))
        ref = entry[0] if entry is not None and entry[0]() is key else \
            weakref.ref(key, functools.partial(self._forget, id(key)))
        self._entries[id(key)] = (ref, value)

    def get(self, key, default=None):
        entry = self._entries.get(id(key))
        return entry[1] if entry is not None and entry[0]() is key else default

    def first(self, test, default=None):
        """The value of a live key that `test` accepts (a scan: for errors)."""
        for ref, value in list(self._entries.values()):
            key = ref()
            if key is not None and test(key):
                return value
        return default

    def _forget(self, ident: int, ref) -> None:
        entry = self._entries.get(ident)
        if entry is not None and entry[0] is ref:      # (not a newer key's entry)
            del self._entries[ident]


# generated code object -> Location of the user's function (codegen fills it)
origins = _ByIdentity()


def origin():
    """The Location of the user's function whose generated code is running."""
    frame = sys._getframe(1)
    while frame is not None:
        where = origins.get(frame.f_code)
        if where is not None:
            return where
        frame = frame.f_back
    return None
