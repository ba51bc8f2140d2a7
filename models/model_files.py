"""What every saved model shares: the error for a file written by another version of the code, and the one load
every model file goes through, which checks the version (and never unpickles)."""

from pathlib import Path

import torch


class ModelVersionError(RuntimeError):
    """A model file written by another version of this code."""


def load_checked(path: Path, what: str, format_version: int, **expected) -> dict:
    """A saved model's dict (`weights_only`: nothing is unpickled), refused unless written in this format (and
    with these values of `expected`'s keys)."""
    saved = torch.load(path, weights_only=True)
    if saved.get("format_version") != format_version:
        raise ModelVersionError(f"{path} is {what} format {saved.get('format_version')}; this code reads "
                                f"{format_version}")
    differing = [key for key, value in expected.items() if saved.get(key) != value]
    if differing:
        raise ModelVersionError(f"{path}: this {what} was written for another {' and '.join(differing)} than this "
                                "code's (retrain it)")
    return saved
