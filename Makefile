# toolnexus: one engine in Rust, bindings for every language.
#
#   make demo       build and run the demo (scripted model, no network)
#   make test       every check: format, lints, all tests (Rust and C), the header, wire shapes
#   make cli-tests  the toolnexus command line's tests (a mock model, durable resumes, tmux)
#   make inbox-tests  the approvals inbox: HTTP tests, then headless Chromium against a demo server
#   make bench      the engine's cost per agent run against the shared mock, beside the bare floor
#   make bench-transports  the same, over the engine's own transport and over reqwest, interleaved
#   make bench-memory  durable halts and resumes per second through each conversation store
#   make bench-peers  the engine, every binding, their raw loops and the peers; writes docs/benchmarks.md
#   make header     regenerate include/toolnexus.h with the pinned cbindgen
#   make c-install  install libtoolnexus, its header and toolnexus.pc under PREFIX (/usr/local)
#   make dist       every release artefact into dist/: wheel and sdist, npm tarballs, Go module, jar, crate, C tarball
#   make dist-check  make dist, then install each artefact in a scratch environment without Rust and use it
#   make fuzz       every fuzz target for FUZZ_SECONDS each (600); make fuzz-short is part of test
#   make reliability  refresh docs/reliability.md's figures (fault suites, load, fuzzing, sanitizers, Miri)
#   make help       this list

CARGO ?= cargo
# One target directory for the whole run, so each crate is built once.
export CARGO_TARGET_DIR ?= $(CURDIR)/target
BENCH_DIR ?= $(CURDIR)/../shared/bench
BENCH_RUNS ?= 2000
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)

# The header generator, pinned: CI fails when include/toolnexus.h differs from its output.
CBINDGEN_VERSION := 0.29.4
TOOLS_DIR ?= $(CARGO_TARGET_DIR)/tools
CBINDGEN := $(TOOLS_DIR)/cbindgen-$(CBINDGEN_VERSION)/bin/cbindgen

# The C tests link the debug library the Rust tests already built.
CC ?= cc
CXX ?= c++
C_FLAGS := -std=c99 -pedantic -Wall -Wextra -Werror -g -D_DEFAULT_SOURCE -Iinclude
# --gc-sections drops the archive's unused functions from each test binary.
C_LIBS := -lpthread -ldl -lm -lrt -Wl,--gc-sections
# The tests' own JSON module, so that building them needs no JSON package.
C_JSON := tests/c/json.c
# The sanitizer builds. The archive is not instrumented, but ASan intercepts every malloc and
# free, the library's too: leaks and bad frees show on both sides, overruns on the C side.
C_ASAN := -fsanitize=address,undefined -fno-omit-frame-pointer
C_ASAN_ENV := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
LIB_DIR := $(CARGO_TARGET_DIR)/debug
C_OUT := $(CARGO_TARGET_DIR)/c-tests
VALGRIND := valgrind --quiet --child-silent-after-fork=yes --leak-check=full --errors-for-leak-kinds=definite,indirect \
	--show-leak-kinds=definite,indirect --error-exitcode=1
PREFIX ?= /usr/local
PROFILE ?= release

.PHONY: help demo test suites setup fmt-check clippy rust-tests cli-tests spec-check bench bench-transports bench-memory bench-mock bench-peers header header-check c-lib c-tests c-asan c-install python-tests upstream-suite node-tests go-tests clojure-tests inbox-tests fuzz fuzz-short miri reliability dist dist-check

help:
	@sed -n '3,17p' Makefile | sed 's/^# \{0,1\}//'

demo:
	$(CARGO) run --quiet -p toolnexus --example demo

# Two lanes: the suites run one after the other while the release builds dist-check packages
# compile beside them at the lowest CPU priority (tests/with-release-builds.sh says why).
test: setup fmt-check clippy
	tests/with-release-builds.sh $(MAKE) --no-print-directory suites
	$(MAKE) --no-print-directory dist-check
	@echo "make test: all checks passed"

suites: rust-tests cli-tests header-check c-tests python-tests upstream-suite node-tests go-tests clojure-tests inbox-tests spec-check fuzz-short miri

# What the tests need beyond the registries, installed when missing (tests/setup.sh).
setup:
	tests/setup.sh

fmt-check:
	$(CARGO) fmt --all -- --check
	rustfmt --edition 2021 --check fuzz/src/*.rs fuzz/fuzz_targets/*.rs

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

# With a throwaway PostgreSQL server on loopback, for the PostgreSQL store's tests. The CLI's
# and the inbox's tests run in cli-tests and inbox-tests.
rust-tests:
	tests/postgres/with-postgres.sh $(CARGO) test --workspace --exclude toolnexus-cli --exclude toolnexus-inbox --locked

# The `toolnexus` binary (cli/): its commands against a loopback mock model, durable halts
# resumed by another process (SQLite and PostgreSQL), and a tmux session typed into as a
# person would (tmux from tests/setup.sh).
cli-tests:
	tests/postgres/with-postgres.sh $(CARGO) test -p toolnexus-cli --locked

# The conformance scenarios' bodies, and a streamed run's (written by a core test), against
# the providers' SDK request types.
STREAMED_BODIES := $(CARGO_TARGET_DIR)/spec-check/streamed
spec-check:
	rm -rf $(STREAMED_BODIES)
	TN_STREAMED_BODIES=$(STREAMED_BODIES) $(CARGO) test -q -p toolnexus --locked --test streaming streamed_request_bodies
	tests/spec-check/run.sh tests/conformance $(STREAMED_BODIES)

python-tests:
	tests/postgres/with-postgres.sh bindings-python/test.sh

# Upstream toolnexus 0.21.0's own tests against our Python binding, checked against
# tests/upstream/python/expectations.txt (docs/upstream-suites.md). It reuses the binding
# python-tests installed; under `make test` it waits for it, so even -j builds it once.
upstream-suite: $(if $(filter test suites,$(MAKECMDGOALS)),python-tests)
	tests/upstream/python/run.sh

node-tests:
	tests/postgres/with-postgres.sh bindings-node/test.sh

go-tests:
	tests/postgres/with-postgres.sh bindings-go/test.sh

clojure-tests:
	tests/postgres/with-postgres.sh bindings-clojure/test.sh

# The approvals inbox (inbox/README.md): its HTTP tests against a loopback mock model and a
# SQLite store, then headless Chromium (tests/setup.sh installs it) driving the demo server.
inbox-tests:
	$(CARGO) test -p toolnexus-inbox --locked
	inbox/tests/browser/run.sh

# The fuzz targets (fuzz/README.md): nightly and cargo-fuzz, pinned in fuzz/run.sh, which
# installs them when missing. fuzz-short runs each target briefly from its committed seeds.
FUZZ_SHORT_SECONDS ?= 5
FUZZ_SECONDS ?= 600

fuzz-short:
	FUZZ_PROFILE=dev fuzz/run.sh $(FUZZ_SHORT_SECONDS)

fuzz:
	fuzz/run.sh $(FUZZ_SECONDS)

# The core's pure modules under Miri (the nightly pinned in tests/nightly.env).
miri:
	tests/miri.sh

# Refreshes the figures of docs/reliability.md: fault suites, load, fuzzing, sanitizers, Miri.
reliability:
	tests/reliability/report.sh

bench-mock:
	@test -d "$(BENCH_DIR)/mock" || { echo "make bench needs the shared bench harness at BENCH_DIR=$(BENCH_DIR)"; exit 1; }
	cd "$(BENCH_DIR)/mock" && CARGO_TARGET_DIR="$(CARGO_TARGET_DIR)/bench-mock" $(CARGO) build --release --quiet

bench: bench-mock
	$(CARGO) build --release --quiet -p toolnexus-bench
	@for style in openai anthropic; do \
	  "$(CARGO_TARGET_DIR)/release/toolnexus-bench" --mockllm "$(CARGO_TARGET_DIR)/bench-mock/release/mockllm" \
	    --scenario weather --style $$style --runs $(BENCH_RUNS); \
	done

# Durable halts and resumes per second through each conversation store (the model in-process).
bench-memory:
	$(CARGO) build --release --quiet -p toolnexus-bench --bin resumes
	@dir=$$(mktemp -d) && for store in memory $$dir/runs.db; do \
	  "$(CARGO_TARGET_DIR)/release/resumes" --store $$store --runs $(BENCH_RUNS); done; rm -rf $$dir
	@tests/postgres/with-postgres.sh sh -c '"$(CARGO_TARGET_DIR)/release/resumes" --store "$$TN_POSTGRES_URL" --runs $(BENCH_RUNS)'

# Why the engine has its own HTTP/1.1 transport rather than reqwest: DECISIONS.md.
bench-transports: bench-mock
	$(CARGO) build --release --quiet -p toolnexus-bench --features reqwest
	@for round in 1 2 3; do for transport in engine reqwest; do \
	  "$(CARGO_TARGET_DIR)/release/toolnexus-bench" --mockllm "$(CARGO_TARGET_DIR)/bench-mock/release/mockllm" \
	    --scenario weather --style openai --runs $(BENCH_RUNS) --transport $$transport | tail -n 1; \
	done; done

# The engine, every binding beside its language's raw loop, and the peers, interleaved in one
# run (bench/peers/README.md); keeps what it measured in docs/benchmarks.json and rewrites
# docs/benchmarks.md and docs/benchmarks.svg from it. BENCH_QUICK=1 runs a few units per row,
# to prove the pipeline; a full run takes about 14 minutes (measured on this 2-core machine).
# Not part of `make test`: it installs the peers from the registries and needs release builds
# of every binding.
bench-peers:
	bench/peers/setup.sh
	python3 bench/peers/run.py --out docs/benchmarks.json
	python3 bench/peers/report.py docs/benchmarks.json

# An unoptimised build: it installs in under half the time and still writes the header in a second.
$(CBINDGEN):
	$(CARGO) install cbindgen --version $(CBINDGEN_VERSION) --locked --quiet --debug --root $(TOOLS_DIR)/cbindgen-$(CBINDGEN_VERSION)

header: $(CBINDGEN)
	$(CBINDGEN) --config ffi-c/cbindgen.toml --crate toolnexus-ffi --output include/toolnexus.h ffi-c 2>/dev/null

header-check: $(CBINDGEN)
	@mkdir -p $(CARGO_TARGET_DIR)
	$(CBINDGEN) --config ffi-c/cbindgen.toml --crate toolnexus-ffi --output $(CARGO_TARGET_DIR)/toolnexus.h ffi-c 2>/dev/null
	@diff -u include/toolnexus.h $(CARGO_TARGET_DIR)/toolnexus.h || \
	  { echo "include/toolnexus.h is stale: run make header and commit it"; exit 1; }

c-lib:
	$(CARGO) build -p toolnexus-ffi --locked

# The ABI tests run under valgrind (no definite or indirect leaks); the header is compiled as
# C99 and as C++, included twice; every conformance scenario is replayed through the C ABI.
# c-asan runs the ABI tests and the conformance runner again under ASan, LSan and UBSan.
c-tests: c-lib c-asan
	@mkdir -p $(C_OUT)
	$(CC) $(C_FLAGS) tests/c/abi_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/abi_test
	$(VALGRIND) $(C_OUT)/abi_test
	$(CC) $(C_FLAGS) tests/c/vocab_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/vocab_test
	$(VALGRIND) $(C_OUT)/vocab_test tests/options/bad-client-options.json
	$(CC) $(C_FLAGS) tests/c/sources_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/sources_test
	$(VALGRIND) $(C_OUT)/sources_test
	$(CC) $(C_FLAGS) tests/c/body_transform_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/body_transform_test
	$(VALGRIND) $(C_OUT)/body_transform_test
	$(CC) $(C_FLAGS) tests/c/metrics_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/metrics_test
	$(VALGRIND) $(C_OUT)/metrics_test
	$(CC) $(C_FLAGS) tests/c/translate_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/translate_test
	$(VALGRIND) $(C_OUT)/translate_test
	$(CC) $(C_FLAGS) tests/c/in_process_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/in_process_test
	$(VALGRIND) $(C_OUT)/in_process_test
	$(CC) $(C_FLAGS) tests/c/run_here_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/run_here_test
	$(VALGRIND) $(C_OUT)/run_here_test
	$(CC) $(C_FLAGS) tests/c/stream_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/stream_test
	$(VALGRIND) $(C_OUT)/stream_test
	$(CC) $(C_FLAGS) tests/c/store_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/store_test
	$(VALGRIND) $(C_OUT)/store_test
	$(CC) $(C_FLAGS) tests/c/parts_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/parts_test
	$(VALGRIND) $(C_OUT)/parts_test
	$(CC) $(C_FLAGS) tests/c/header_twice.c $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/header_c
	$(C_OUT)/header_c
	$(CXX) -std=c++11 -Wall -Wextra -Werror -Iinclude -x c++ tests/c/header_twice.c -x none \
	  $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/header_cpp
	$(C_OUT)/header_cpp
	$(CC) $(C_FLAGS) tests/c/conformance_runner.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/conformance
	$(C_OUT)/conformance tests/conformance
	$(MAKE) --no-print-directory c-install PREFIX=$(C_OUT)/prefix PROFILE=debug
	$(CC) $(C_FLAGS) tests/c/header_twice.c $$(PKG_CONFIG_PATH=$(C_OUT)/prefix/lib/pkgconfig pkg-config --cflags --libs toolnexus) \
	  -o $(C_OUT)/header_pkgconfig
	LD_LIBRARY_PATH=$(C_OUT)/prefix/lib $(C_OUT)/header_pkgconfig

c-asan: c-lib
	@mkdir -p $(C_OUT)
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/abi_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/abi_test_asan
	$(C_ASAN_ENV) $(C_OUT)/abi_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/vocab_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/vocab_test_asan
	$(C_ASAN_ENV) $(C_OUT)/vocab_test_asan tests/options/bad-client-options.json
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/sources_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/sources_test_asan
	$(C_ASAN_ENV) $(C_OUT)/sources_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/body_transform_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/body_transform_test_asan
	$(C_ASAN_ENV) $(C_OUT)/body_transform_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/metrics_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/metrics_test_asan
	$(C_ASAN_ENV) $(C_OUT)/metrics_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/translate_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/translate_test_asan
	$(C_ASAN_ENV) $(C_OUT)/translate_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/in_process_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/in_process_test_asan
	$(C_ASAN_ENV) $(C_OUT)/in_process_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/run_here_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/run_here_test_asan
	$(C_ASAN_ENV) $(C_OUT)/run_here_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/stream_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/stream_test_asan
	$(C_ASAN_ENV) $(C_OUT)/stream_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/store_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/store_test_asan
	$(C_ASAN_ENV) $(C_OUT)/store_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/parts_test.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) -o $(C_OUT)/parts_test_asan
	$(C_ASAN_ENV) $(C_OUT)/parts_test_asan
	$(CC) $(C_FLAGS) $(C_ASAN) tests/c/conformance_runner.c $(C_JSON) $(LIB_DIR)/libtoolnexus.a $(C_LIBS) \
	  -o $(C_OUT)/conformance_asan
	$(C_ASAN_ENV) $(C_OUT)/conformance_asan tests/conformance

c-install:
	$(CARGO) build -p toolnexus-ffi --locked $(if $(filter release,$(PROFILE)),--release,)
	install -d $(PREFIX)/lib/pkgconfig $(PREFIX)/include
	install -m 644 $(CARGO_TARGET_DIR)/$(PROFILE)/libtoolnexus.a $(PREFIX)/lib/
	install -m 755 $(CARGO_TARGET_DIR)/$(PROFILE)/libtoolnexus.so $(PREFIX)/lib/
	install -m 644 include/toolnexus.h $(PREFIX)/include/
	sed -e 's|@PREFIX@|$(abspath $(PREFIX))|' -e 's|@VERSION@|$(VERSION)|' ffi-c/toolnexus.pc.in > $(PREFIX)/lib/pkgconfig/toolnexus.pc

# The release artefacts (packaging/, README "Installation"): built once, from one release build
# of the engine, into dist/; dist-check installs each one where no Rust toolchain is on PATH.
dist:
	packaging/dist.sh

dist-check: dist
	packaging/dist.sh --check

# The JS and Go upstream suites, given a checkout of upstream's repository (js/, golang/,
# examples/); not part of `make test`, since CI has none (docs/upstream-suites.md).
.PHONY: upstream-suites-ports
upstream-suites-ports:
	@test -n "$(UPSTREAM_CHECKOUT)" || { echo "usage: make upstream-suites-ports UPSTREAM_CHECKOUT=<dir>" >&2; exit 2; }
	tests/upstream/js/run.sh "$(UPSTREAM_CHECKOUT)"
	tests/upstream/go/run.sh "$(UPSTREAM_CHECKOUT)"
