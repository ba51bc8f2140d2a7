"""Small helpers about processes this project started."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while a process with this id exists (zombies included)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
