# sourcewatch: `make setup` (idempotent), `make test`, `make demo`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOME_DIR := .sourcewatch
SOURCEWATCH_DATA ?= $(HOME_DIR)/data
KAFKA_LIBS := $(HOME_DIR)/kafka-libs
SHARED_DATA := ../shared/data
DASHBOARD_LIBS := service/static/node_modules

.PHONY: setup test demo pagination-model discovery-model chromium kafka-start kafka-stop clean

setup: $(VENV)/.installed $(KAFKA_LIBS)/.installed $(DASHBOARD_LIBS)/.installed chromium data

$(VENV)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,bench]'
	@touch $@

# Apache Kafka (broker + runtime dependencies) from Maven Central, run by `sourcewatch kafka start`.
$(KAFKA_LIBS)/.installed: infra/kafka/pom.xml
	@command -v java >/dev/null || { echo "Java 17+ is needed for the local Kafka broker"; exit 1; }
	@command -v mvn >/dev/null || { echo "Maven is needed to fetch the Kafka jars (apt-get install maven)"; exit 1; }
	rm -rf $(KAFKA_LIBS)
	mvn -q -B -f infra/kafka/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
	    -DoutputDirectory=$(abspath $(KAFKA_LIBS))
	@touch $@

# The dashboard's chart library (uPlot) from npm, at the version package-lock.json pins; served by
# `sourcewatch serve` from this folder, never from a CDN.
$(DASHBOARD_LIBS)/.installed: service/static/package.json service/static/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed for the dashboard's chart library (apt-get install npm)"; exit 1; }
	npm ci --prefix service/static --no-audit --no-fund --loglevel=error
	@touch $@

# Headless Chromium from Debian: the discovery agent's training measures anchor boxes in it (inference never
# renders). Installed as root, or through sudo.
chromium:
	@command -v chromium >/dev/null || { \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends chromium; }

# The real evaluation data, when ../shared is beside the checkout (unpack.sh is idempotent).
data:
	@if [ -x $(SHARED_DATA)/unpack.sh ]; then $(SHARED_DATA)/unpack.sh $(SOURCEWATCH_DATA); \
	else echo "no $(SHARED_DATA): tests that need the evaluation data will skip"; fi

# The default pagination model shipped in the package (models/pagination/pagination_default.pt), trained on all of
# <data>/pagination; its figures are in models/pagination/PAGINATION_MODEL.md.
pagination-model: setup
	$(BIN)/sourcewatch train pagination --data $(SOURCEWATCH_DATA)/pagination/prnsm \
	    $(SOURCEWATCH_DATA)/pagination/autopager --out models/pagination/pagination_default.pt

# The shipped discovery agent: pre-trained on <data>/sites (models/discovery/discovery_pretrained.pt), then fine-tuned on
# 40 sites of the simulated web with a content-only classifier as reward, its stopping model fitted on brief agents
# fine-tuned alike (models/discovery/discovery_default.pt); figures in models/discovery/DISCOVERY_MODEL.md.
discovery-model: setup
	$(BIN)/sourcewatch train discovery --sites $(SOURCEWATCH_DATA)/sites --out models/discovery/discovery_pretrained.pt
	$(BIN)/sourcewatch train discovery --sites $(SOURCEWATCH_DATA)/sites --from models/discovery/discovery_pretrained.pt \
	    --finetune-simweb 40 --stop-rule learned --out models/discovery/discovery_default.pt

# Test processes side by side (pytest-xdist), each with its own broker; a test's own workers are its children.
# Tests marked TRAINING (tests/conftest.py) run one after another in one of them.
TEST_PROCESSES ?= 2

test: setup
	$(BIN)/lint-imports --no-logo
	$(BIN)/pytest -q -n $(TEST_PROCESSES) --dist loadgroup --durations=25

demo: setup
	$(BIN)/sourcewatch demo --serve

kafka-start: setup
	$(BIN)/sourcewatch kafka start

kafka-stop:
	$(BIN)/sourcewatch kafka stop

clean:
	-$(BIN)/sourcewatch kafka stop
	rm -rf $(VENV) $(HOME_DIR)/kafka-libs $(HOME_DIR)/kafka $(HOME_DIR)/clickhouse
