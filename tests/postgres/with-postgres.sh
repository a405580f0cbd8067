#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server on loopback (the Debian package's
# binaries; tests/setup.sh installs them when missing): its URL is in TN_POSTGRES_URL. The
# cluster lives in a temporary folder, on a free port, with fsync off, and is removed when the
# command ends, whatever its outcome.
set -euo pipefail

bin=""
if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
  bin="$(dirname "$(command -v initdb)")"
else
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bin="$d"; done
fi
if [ -z "$bin" ]; then
  echo "tests/postgres/with-postgres.sh: PostgreSQL's initdb is not installed (Debian: postgresql)" >&2
  exit 1
fi

dir="$(mktemp -d)"
as=()
# The server refuses to run as root: it runs as the package's own user.
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  chown postgres "$dir"
  as=(runuser -u postgres --)
fi
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

stop() {
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT

"${as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null ||
  { cat "$dir/server.log" >&2; exit 1; }

export TN_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
"$@"
