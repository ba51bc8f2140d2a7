"""Every table's changelog is declared with the registry's topics, before a worker joins its group (streams.worker:
Faust creating them itself while the worker starts left a table write checking a changelog of 0 partitions)."""

import json
import os
import subprocess
import sys

PROBE = """
import json
import os
from streams.app import app
from streams.worker import changelog_topics, load_agents
load_agents("all")
declared = {topic.name: [topic.partitions, topic.config] for topic in changelog_topics(app)}
tables = {table.changelog_topic.get_topic_name(): table.partitions or app.conf.topic_partitions
          for table in app.tables.values()}
print(json.dumps({"declared": declared, "tables": tables, "app": app.conf.id}))
"""


def test_each_tables_changelog_is_declared_compacted_with_its_tables_partitions():
    # A process of its own: loading the agents registers their tables on the one app.
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SOURCEWATCH_TOPIC_PREFIX": "probe.",
                               "SOURCEWATCH_TOPIC_PARTITIONS": "6"})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert "revisit-sources" in " ".join(found["tables"]) and len(found["tables"]) >= 10
    assert set(found["declared"]) == set(found["tables"])
    for name, (partitions, config) in found["declared"].items():
        assert name.startswith(f"{found['app']}-") and name.endswith("-changelog")
        assert partitions == found["tables"][name] == 6
        assert config == {"cleanup.policy": "compact"}
