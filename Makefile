# toolnexus: one engine in Rust, bindings for every language.
#
#   make demo    build and run the demo (scripted model, no network)
#   make test    every check: format, lints, all tests, wire shapes against the official SDK types
#   make bench   the engine's cost per agent run against the shared mock, beside the bare floor
#   make help    this list

CARGO ?= cargo
# One target directory for the whole run, so each crate is built once.
export CARGO_TARGET_DIR ?= $(CURDIR)/target
BENCH_DIR ?= $(CURDIR)/../shared/bench
BENCH_RUNS ?= 2000

.PHONY: help demo test fmt-check clippy rust-tests spec-check bench

help:
	@sed -n '3,7p' Makefile | sed 's/^# \{0,1\}//'

demo:
	$(CARGO) run --quiet -p toolnexus --example demo

test: fmt-check clippy rust-tests spec-check
	@echo "make test: all checks passed"

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

rust-tests:
	$(CARGO) test --workspace --locked

spec-check:
	tests/spec-check/run.sh tests/conformance

bench:
	@test -d "$(BENCH_DIR)/mock" || { echo "make bench needs the shared bench harness at BENCH_DIR=$(BENCH_DIR)"; exit 1; }
	cd "$(BENCH_DIR)/mock" && CARGO_TARGET_DIR="$(CARGO_TARGET_DIR)/bench-mock" $(CARGO) build --release --quiet
	$(CARGO) build --release --quiet -p toolnexus-bench
	@for style in openai anthropic; do \
	  "$(CARGO_TARGET_DIR)/release/toolnexus-bench" --mockllm "$(CARGO_TARGET_DIR)/bench-mock/release/mockllm" \
	    --scenario weather --style $$style --runs $(BENCH_RUNS); \
	done
