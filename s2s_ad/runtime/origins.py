"""Where code comes from: the generated code that is running, so that a
helper's error names the user's function (codegen notes each generated
code object in `origins`; `origin()` finds the innermost one on the
stack), and whether a file is Python's or an installed package's
(`INSTALLED`) rather than the user's."""
from __future__ import annotations

import os
import sys
import sysconfig
import weakref

INSTALLED = tuple(os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                  for k in ("stdlib", "purelib", "platlib"))   # path prefixes

# generated code object -> Location of the user's function (codegen fills it)
origins: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def origin():
    """The Location of the user's function whose generated code is running."""
    frame = sys._getframe(1)
    while frame is not None:
        where = origins.get(frame.f_code)
        if where is not None:
            return where
        frame = frame.f_back
    return None
