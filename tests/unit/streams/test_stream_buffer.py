"""An agent's stream buffers as many events as the settings say before its partitions' fetching pauses
(Faust's stream_buffer_maxsize; its 4096 held a takeover's backlog of fetched pages in a worker's memory)."""

import os
import subprocess
import sys

PROBE = """
from streams.app import app
from streams.worker import load_agents
load_agents("all")
agent = app.agents["agents.extract_records.extract_records"]
print(app.conf.stream_buffer_maxsize, agent.channel.queue.maxsize)
"""


def test_the_workers_streams_buffer_as_many_events_as_the_settings_say():
    # A process of its own: the app reads its settings once, when it is built.
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SOURCEWATCH_STREAM_BUFFER_EVENTS": "100"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["100", "100"]
