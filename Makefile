# Every target uses the project's own virtualenv; `make test` creates it when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv run test test-fast test-apps lint protos protos-check rulesets rulesets-check bench clean cluster compose-check
PURE_SUITES := tests/engine/test_playthroughs.py tests/engine/test_properties.py \
	tests/engine/test_conformance.py tests/engine/test_conformance_dd2.py \
	tests/engine/test_reference_rules.py tests/engine/training/test_features.py
# The suites that depend on the database vendor are listed in tests/conftest.py (POSTGRES_SUITES).
PG_URL = $${LADDER_PG_URL:-postgres://postgres@127.0.0.1:5432/test}
# pytest-xdist: one worker per core (TEST_WORKERS=0: in this process), each test file on one worker.
TEST_WORKERS ?= auto
XDIST = $(if $(filter 0,$(TEST_WORKERS)),-p no:xdist,-n $(TEST_WORKERS) --dist loadgroup)

$(STAMP): pyproject.toml sdk/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@# pip's and setuptools' warnings go to a log, not into `make run`'s first screen.
	$(PY) -m pip install --quiet --disable-pip-version-check -e ./sdk -e '.[test,bench,s3,train,monitoring,native,export]' 2>$(VENV)/pip-install.log || (cat $(VENV)/pip-install.log; exit 1)
	touch $(STAMP)

# The rules core compiled with mypyc (engine/compile_rules.py) where a C compiler is present;
# without one it prints why and the pure-Python build runs (the same games, slower).
NATIVE := engine/rules/_compiled/BUILD.json
$(NATIVE): $(STAMP) $(filter-out engine/rules/__init__.py,$(wildcard engine/rules/*.py))
	$(PY) -m engine.compile_rules

venv: $(STAMP) $(NATIVE)

# The whole ladder on this machine (deploy/run.py): engine, workers, beat, web, gRPC, example
# bots; Ctrl-C stops it. `make run MATCHES=5` plays 5 matches, prints the leaderboard, exits.
# `make run HOST=0.0.0.0` serves the web site and gRPC to other machines (bots connect from there;
# only a HOST given on make's command line counts: some shells export HOST as the machine's name).
run: $(STAMP)
	$(PY) -m deploy.run $(if $(MATCHES),--matches $(MATCHES)) $(if $(filter command line,$(origin HOST)),--host $(HOST))

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check engine sdk examples bench tests workers ladder deploy telemetry
	@# Layering (pyproject [tool.importlinter]): one contract per rule of the architecture.
	$(VENV)/bin/lint-imports
	@# Types: the rules core strictly; the ladder with django-stubs and the DRF stubs.
	$(VENV)/bin/mypy --strict engine/rules engine/players engine/simulate.py engine/arena
	$(VENV)/bin/mypy ladder deploy
	@# The workers, the engine's service (server, sessions, timeline) and the SDK (it ships py.typed).
	$(VENV)/bin/mypy workers engine/server.py engine/sessions.py engine/timeline.py sdk/digdown
	$(VENV)/bin/mypy --strict telemetry engine/metrics.py

test: $(STAMP) $(NATIVE) protos-check rulesets-check
	$(MAKE) lint
	@# Where PostgreSQL is reachable (under CI=true it must be), its suites run there and not on
	@# SQLite, except their tests marked sqlite_too or vendor_neutral; otherwise all run on SQLite.
	@if [ "$$CI" = "true" ] || $(PY) -c "import socket; socket.create_connection(('127.0.0.1', 5432), 1)" 2>/dev/null; then \
	  echo "pytest on SQLite: all but the PostgreSQL suites' tests (their sqlite_too and vendor_neutral ones run)"; \
	  $(PY) -m pytest $(XDIST) -m "not postgres_suite or sqlite_too or vendor_neutral" || exit 1; \
	  echo "DATABASE_URL=$(PG_URL) pytest -m 'postgres_suite and not vendor_neutral'"; \
	  DATABASE_URL="$(PG_URL)" $(PY) -m pytest $(XDIST) -m "postgres_suite and not vendor_neutral"; \
	else echo "PostgreSQL is not reachable on 127.0.0.1:5432: every suite on SQLite (CI=true makes this an error)"; \
	  $(PY) -m pytest $(XDIST); fi
	@# The rules once more on the pure-Python build (the runs above used the compiled one where
	@# `make venv` built it): goldens, properties, conformance, the reference, the vectors.
	DIGDOWN_ENGINE_BUILD=pure $(PY) -m pytest -q $(XDIST) $(PURE_SUITES)

# Three tiers of tests, each named in the README ("Tests"), times measured there:
#   make test-fast  the pure tier: the rules, the SDK's codecs, the planner, the formats; no
#                   server, no subprocess, no database (the edit loop)
#   make test-apps  every app and service on SQLite, in parallel, without the suites whose
#                   tests start many processes (APPS_SKIP: the cluster, the stack, browsers,
#                   the sandbox's hostile bots, the examples, the runner's process drills)
#   make test       lint, then the whole suite as CI runs it (PostgreSQL where it answers)
FAST_SUITES := tests/engine/test_conformance.py tests/engine/test_conformance_dd2.py \
	tests/engine/test_ruleset.py tests/engine/test_rules_imports.py \
	tests/engine/test_playthroughs.py tests/engine/test_properties.py tests/sdk/test_wire.py \
	tests/sdk/test_sdk_types.py tests/ladder/matchmaking/test_planner.py \
	tests/ladder/tournaments/test_formats.py tests/ladder/competitions/test_final_formats.py \
	tests/ladder/ratings/test_scale.py tests/engine/test_rules_build.py \
	tests/test_docs_references.py tests/test_settings_reference.py
APPS_SKIP := tests/cluster tests/stack tests/browser tests/examples tests/workers/sandbox \
	tests/workers/cluster tests/workers/runner/test_stream_identical.py \
	tests/ladder/grpc/connected/test_connected_drills.py tests/test_reaper.py

test-fast: $(STAMP)
	$(PY) -m pytest -q -p no:xdist -m "not slow" $(FAST_SUITES)

test-apps: $(STAMP) $(NATIVE)
	$(PY) -m pytest -q $(XDIST) $(addprefix --ignore=,$(APPS_SKIP))

# Generated gRPC/protobuf code is committed; regenerate after editing protos/*.proto.
PROTO_SRC := $(wildcard protos/digdown/v1/*.proto)
PROTOC = $(PY) -m grpc_tools.protoc -I protos --python_out=$(1) --grpc_python_out=$(1) \
	--mypy_out=$(1) --mypy_grpc_out=$(1) --plugin=protoc-gen-mypy=$(VENV)/bin/protoc-gen-mypy \
	--plugin=protoc-gen-mypy_grpc=$(VENV)/bin/protoc-gen-mypy_grpc $(PROTO_SRC)

protos: $(STAMP)
	$(call PROTOC,sdk)

protos-check: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(call PROTOC,$$tmp) && \
	for f in $$(cd "$$tmp" && find digdown -name '*_pb2*'); do \
	  cmp -s "$$tmp/$$f" "sdk/$$f" || { echo "stale generated file: sdk/$$f (run make protos)"; exit 1; }; \
	done && \
	for f in $$(cd sdk && find digdown -name '*_pb2*' -not -path '*/__pycache__/*'); do \
	  test -e "$$tmp/$$f" || { echo "generated file without proto: sdk/$$f"; exit 1; }; \
	done && echo "protos up to date"

# The ruleset documents bots read (sdk/digdown/rulesets/<id>.json, served by GetRuleset) are
# generated from engine.rules' Ruleset values; regenerate after changing a ruleset.
RULESET_DIR := sdk/digdown/rulesets

rulesets: $(STAMP)
	$(PY) -m engine.ruleset_json --out $(RULESET_DIR)

rulesets-check: $(STAMP)
	$(PY) -m engine.ruleset_json --out $(RULESET_DIR) --check

# Every benchmark, repeated, into one markdown report (bench/run_all.py, docs/benchmarks.md):
# `make bench` (< 15 min on two cores), `make bench QUICK=1` (about 2 min). The read and page
# benchmarks run when DATABASE_URL names a PostgreSQL database they may fill.
BENCH_OUT ?= var/bench-report.md
# The full cluster drill set (tests/cluster: nine network namespaces; needs root).
# `make test` runs its bounded set. The drill table goes to var/cluster-drills.md.
cluster: $(STAMP)
	mkdir -p var
	CLUSTER_FULL=1 CLUSTER_REPORT=var/cluster-drills.md $(PY) -m pytest tests/cluster -v \
	  -o timeout=1800

# The shipped docker-compose.yml built and played on a real Docker engine (docs/operations.md,
# "The compose check"): minutes; not part of `make test`. Exits 2 where Docker is missing.
compose-check: $(STAMP)
	$(PY) -m deploy.compose_check $(if $(MATCHES),--matches $(MATCHES))

bench: $(STAMP)
	$(PY) bench/run_all.py --out $(BENCH_OUT) $(if $(QUICK),--quick)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .mypy_cache .import_linter_cache
