"""Where the generated code that is running comes from, so that a helper's
error names the user's function: codegen notes each generated code object
in `origins`; `origin()` finds the innermost one on the stack."""
from __future__ import annotations

import sys
import weakref

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
