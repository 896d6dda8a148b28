"""Pinned texts under tests/golden/: compared byte for byte, rewritten
instead when S2S_AD_UPDATE_GOLDEN is set (then review the diff)."""
import os

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def check_golden(text: str, relpath: str, what: str) -> None:
    path = os.path.join(GOLDEN, relpath)
    if os.environ.get("S2S_AD_UPDATE_GOLDEN"):
        with open(path, "w") as fh:
            fh.write(text)
    with open(path) as fh:
        assert text == fh.read(), f"{what} changed; see {path}"
