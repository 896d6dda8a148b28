"""Shared test setup.  The helpers next to the tests (`fdcheck`, `rulecheck`)
are importable because pyproject.toml puts this directory on `pythonpath`."""
import os
import random

import numpy as np
import pytest

# the suite compiles afresh: the on-disk cache is tested where a test sets it
os.environ.setdefault("S2S_AD_CACHE_DIR", "")


@pytest.fixture(autouse=True)
def _seeded_random_state():
    """Every test starts from the same global random state, so a test run
    alone (`-k`) sees the inputs it sees in the full run."""
    random.seed(0)
    np.random.seed(0)
