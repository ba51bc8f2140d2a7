"""Reading the simulated web's control routes from a job — its clock, its truth (the evaluator's, never the
crawler's) — and the environment of a child process that schedules revisits on its clock."""

from __future__ import annotations

import json
import os
import time
import urllib.request


def control_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def simulated_clock(control: str) -> dict[str, str]:
    """The settings (as environment variables) that put a revisit scheduler on the simulated web's clock."""
    clock = control_json(control + "/__clock__")
    return {"SOURCEWATCH_REVISIT_CLOCK_ORIGIN": clock["now"], "SOURCEWATCH_REVISIT_CLOCK_ORIGIN_WALL": str(time.time()),
            "SOURCEWATCH_REVISIT_CLOCK_SPEED": str(clock["speed"])}


def simulated_clock_env(control: str) -> dict[str, str]:
    """The environment of a child process whose revisit scheduler runs on the simulated web's clock. Every
    phase from discovery on uses it: discovery adds the pages it finds to the watch list, and a worker on the
    wall clock would decide their ticks months ahead of the simulated ones."""
    return os.environ | simulated_clock(control)

