"""`python -m tests.fuzz`: see cli.py."""
import sys

from .cli import main

sys.exit(main())
