#!/usr/bin/env bash
# What `make test` needs beyond the registries, installed when missing: rustfmt and clippy
# (rustup components), and the Debian packages of the C tests and the bindings' toolchains
# (a C and C++ compiler, valgrind, pkg-config, Go, Node with npm, a JDK with Maven), tmux for
# the CLI's terminal test, Chromium for the approvals inbox's browser test (driven by
# playwright-core, which downloads no browser of its own), and
# PostgreSQL's server for the PostgreSQL store's tests. A machine
# that already has a newer toolchain keeps it. Everything else (crates, wheels, npm packages,
# jars, Go modules, the pinned nightly for fuzzing and Miri) is fetched by the tests
# themselves from the project's own pins.
set -euo pipefail

need() { command -v "$1" >/dev/null 2>&1 || { echo "tests/setup.sh: $1 is required but not installed" >&2; exit 1; }; }
need cargo
need python3
for c in rustfmt clippy; do
  if ! cargo "${c/rustfmt/fmt}" --version >/dev/null 2>&1; then rustup component add "$c"; fi
done
python3 -c 'import venv' 2>/dev/null || { echo "tests/setup.sh: the python3 venv module is missing" >&2; exit 1; }

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
# The CLI's terminal test types into a tmux session (cli/tests/tmux.rs).
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
# The PostgreSQL store's tests start a server of their own (tests/postgres/with-postgres.sh).
command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
# The inbox's browser test launches /usr/bin/chromium (inbox/tests/browser/).
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "tests/setup.sh: install these first (Debian names): ${missing[*]}" >&2
    exit 1
  fi
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "tests/setup.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
