# catalog-gateway — every set-up step lives here; `make run` and `make test` work on a bare Debian.
SHELL := /bin/bash
APT_PACKAGES := libwebsockets-dev libjansson-dev libsqlite3-dev sqlite3 pkg-config python3 python3-venv curl
VENV := .venv
PY := $(VENV)/bin/python
DEMO_DB ?= demo/catalog.sqlite
HOST ?= 127.0.0.1
PORT ?= 4000
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_FLAGS ?=

.PHONY: all deps venv build release run test test-swift test-python demo-db bench bench-python bench-smoke bench-deps bench-instructions clean \
	fuzz fuzz-smoke asan tsan soak

all: build

# Installs the Debian packages that are missing (and only those).
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(VENV)/.ok: tests/python/requirements.txt | deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r tests/python/requirements.txt
	touch $@

venv: $(VENV)/.ok

build: deps
	swift build $(SWIFT_FLAGS)

release: deps
	swift build -c release $(SWIFT_FLAGS)

$(DEMO_DB): | release
	@mkdir -p $(dir $(DEMO_DB))
	.build/release/catalog-gateway demo-db --out $(DEMO_DB)

demo-db: $(DEMO_DB)

# Serves the demo catalog (created at demo/catalog.sqlite on first use by `serve` itself).
run: release
	.build/release/catalog-gateway serve --host $(HOST) --port $(PORT)

test: deps venv
	swift build --build-tests $(SWIFT_FLAGS)
	swift test --skip-build $(SWIFT_FLAGS)
	$(MAKE) --no-print-directory bench-smoke
	$(MAKE) --no-print-directory fuzz-smoke FUZZ_SMOKE_SECONDS=$(TEST_FUZZ_SECONDS)
	@if ls tests/python/test_*.py >/dev/null 2>&1; then \
	  swift build -c release $(SWIFT_FLAGS) && \
	  CATALOG_GATEWAY=.build/release/catalog-gateway $(PY) -m pytest -q -o tmp_path_retention_policy=failed tests/python; fi

# Benchmarks (bench/README.md): every figure beside its floor, measured in the same run.
# `make bench` (BENCH_FANOUT=10000 for the 10,000-subscriber fan-out target); `make bench-smoke`
# runs every scenario for a fraction of a second (CI: it keeps working; no timing is asserted).
# BENCH_COMPARE='CMD --db {db} --port {port}' (BENCH_COMPARE_NAME, BENCH_COMPARE_PATH) also runs
# the scenarios against that server, side by side in the same run (bench/README.md).
BENCH_DATA := bench/data
BENCH_FANOUT ?= 1000
BENCH_IDLE ?= 10000

# wrk (Debian package) drives the HTTP scenario; installed when missing.
bench-deps:
	@command -v wrk >/dev/null 2>&1 || { echo "installing: wrk"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq wrk; }

# $(call bench-catalog,PRODUCTS): a demo catalog with the gateway's indexes, renamed into place
# only when complete.
define bench-catalog
	@mkdir -p $(BENCH_DATA)
	rm -f $@.gen
	.build/release/catalog-gateway demo-db --out $@.gen --products $(1)
	.build/release/catalog-gateway prepare --db $@.gen >/dev/null
	mv $@.gen $@
endef

$(BENCH_DATA)/demo.sqlite: | release
	$(call bench-catalog,560)

$(BENCH_DATA)/catalog-1m.sqlite: | release
	$(call bench-catalog,1000000)

$(BENCH_DATA)/smoke-20k.sqlite: | release
	$(call bench-catalog,20000)

bench: release bench-deps $(BENCH_DATA)/demo.sqlite $(BENCH_DATA)/catalog-1m.sqlite
	python3 bench/run.py --fanout $(BENCH_FANOUT) --connections $(BENCH_IDLE)

bench-smoke: release bench-deps $(BENCH_DATA)/demo.sqlite $(BENCH_DATA)/smoke-20k.sqlite
	python3 bench/run.py --smoke

# The cold category page in instructions (callgrind), which repeat on a shared machine where wall
# times do not: row floor, engine in process, and the page served at 1 x 1, per catalog
# (bench/tools/instructions.py; minutes each under valgrind). valgrind is installed when missing.
bench-instructions: release $(BENCH_DATA)/demo.sqlite $(BENCH_DATA)/catalog-1m.sqlite
	@command -v valgrind >/dev/null 2>&1 || { echo "installing: valgrind"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq valgrind; }
	python3 bench/tools/instructions.py --db $(BENCH_DATA)/demo.sqlite
	python3 bench/tools/instructions.py --db $(BENCH_DATA)/catalog-1m.sqlite

# `make bench` with bench/python-server (graphql-core + aiohttp from the venv) side by side: every
# compared scenario against a Python GraphQL server of the same contract over the same catalog file.
bench-python: venv
	$(MAKE) --no-print-directory bench BENCH_COMPARE_NAME=python \
	  BENCH_COMPARE='$(CURDIR)/$(PY) $(CURDIR)/bench/python-server/server.py --db {db} --port {port}'

# Minutes of mixed queries, subscriptions and version bumps (a separate writer process) from
# SOAK_CONNECTIONS WebSockets against the release server; fails on any error, missed
# notification or RSS growth after warm-up. Not part of `make test`.
SOAK_SECONDS ?= 120
SOAK_CONNECTIONS ?= 200

soak: deps venv
	swift build -c release $(SWIFT_FLAGS)
	$(PY) tests/soak/soak.py --binary .build/release/catalog-gateway \
	  --seconds $(SOAK_SECONDS) --connections $(SOAK_CONNECTIONS)

# libFuzzer targets (Fuzz/, built only with CG_FUZZ set) with address sanitizer, each run for
# FUZZ_SECONDS from the seeds in Fuzz/corpus/; new inputs accumulate in .build-fuzz/corpus/.
FUZZ_TARGETS ?= FuzzParser FuzzVariables FuzzExecute FuzzTransportWS FuzzLegacyWS FuzzHTTP FuzzPlainJSON
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
# `make test` (CI) runs every fuzz target this long from the committed seeds.
TEST_FUZZ_SECONDS ?= 3

fuzz: deps
	Fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Each target for FUZZ_SMOKE_SECONDS from the committed seeds alone (CI).
fuzz-smoke: deps
	Fuzz/run.sh --fresh $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

# The test suites under address and thread sanitizer, each in its own scratch directory.
# detect_leaks=0: LeakSanitizer cannot see pointers Swift keeps in enum payloads with tag bits.
asan: deps
	swift build --build-tests --sanitize=address --scratch-path .build-asan $(SWIFT_FLAGS)
	ASAN_OPTIONS=detect_leaks=0 swift test --skip-build --sanitize=address --scratch-path .build-asan $(SWIFT_FLAGS)

tsan: deps
	swift build --build-tests --sanitize=thread --scratch-path .build-tsan $(SWIFT_FLAGS)
	TSAN_OPTIONS=suppressions=$(CURDIR)/.tsan-suppressions swift test --skip-build --sanitize=thread --scratch-path .build-tsan $(SWIFT_FLAGS)

clean:
	rm -rf .build .build-fuzz .build-asan .build-tsan $(VENV) demo
