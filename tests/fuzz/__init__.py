"""s2s_ad's differential fuzzer: random valid programs, checked against
central finite differences.  `python -m tests.fuzz --help` for the CLI."""
