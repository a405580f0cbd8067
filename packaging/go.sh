#!/usr/bin/env bash
# The Go artefact: the module github.com/toolnexus/toolnexus/bindings-go at v<version> as a
# module proxy serves it (dist/go/proxy/<module>/@v/{list,v<version>.info,.mod,.zip}), the
# release libtoolnexus.a for linux-amd64 at lib/linux-amd64/ and the header at include/ inside
# it: `go get` and `go build` link it with no step before them. Publishing is copying the
# proxy folder to a GOPROXY, or committing the same files on the release tag.
#   packaging/go.sh build
#   packaging/go.sh check   a scratch module that only imports it builds and runs a two-line
#                           program and the Go seed examples, with no Rust on PATH
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

module="github.com/toolnexus/toolnexus/bindings-go"
version="v$engine_version"
proxy="$dist/go/proxy"
gobin="$(dirname "$(command -v go)")"

build() {
  local stage="$CARGO_TARGET_DIR/dist-stage/go" at="$proxy/$module/@v"
  rm -rf "$stage" "$dist/go" && mkdir -p "$stage/include" "$stage/lib/linux-amd64" "$at"
  # The module's files as committed (git ls-files), without what build-lib.sh makes locally.
  (cd "$repo/bindings-go" && git ls-files -z | xargs -0 cp --parents -t "$stage")
  cp "$repo/include/toolnexus.h" "$stage/include/"
  cp "$release_dir/libtoolnexus.a" "$stage/lib/linux-amd64/"
  strip --strip-debug "$stage/lib/linux-amd64/libtoolnexus.a"
  cp "$stage/go.mod" "$at/$version.mod"
  echo "$version" >"$at/list"
  printf '{"Version":"%s","Time":"%s"}\n' "$version" \
    "$(git -C "$repo" log -1 --format=%cI 2>/dev/null | xargs -I{} date -u -d {} +%Y-%m-%dT%H:%M:%SZ)" >"$at/$version.info"
  # A module zip: every file under <module>@<version>/, as `go mod download` expects.
  python3 - "$stage" "$at/$version.zip" "$module@$version" <<'PY'
import os, sys, zipfile
stage, out, prefix = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(stage):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(root, f)
            z.write(path, prefix + "/" + os.path.relpath(path, stage))
PY
  echo "$at/$version.zip"
}

check() {
  local dir out gocache
  dir="$(scratch go)"
  assert_norust "$dir" "$gobin"
  # A build cache of its own: the user's may hold entries another toolchain setup wrote (seen
  # here: "could not import sync/atomic (open : no such file)" under env -i, a fresh cache fine).
  gocache="$dir/gocache"
  local env=(env GOPROXY="file://$proxy" GONOSUMDB=github.com/toolnexus GOTOOLCHAIN=local GOFLAGS=-modcacherw
    GOPATH="$dir/home/go" GOCACHE="$gocache" CGO_ENABLED=1)
  mkdir -p "$dir/app"
  cat >"$dir/app/main.go" <<GO
package main

import toolnexus "$module"

func main() { println("toolnexus", toolnexus.EngineVersion(), toolnexus.AnswerOutput("r1", "yes").Ok) }
GO
  (cd "$dir/app" && norust "$dir" "$gobin" "${env[@]}" go mod init scratch >/dev/null 2>&1 &&
    norust "$dir" "$gobin" "${env[@]}" go mod tidy)
  grep -q "$module $version" "$dir/app/go.mod" || die "the scratch module did not require $module $version"
  out="$(cd "$dir/app" && norust "$dir" "$gobin" "${env[@]}" go run . 2>&1)"
  echo "go: $out"
  [[ "$out" == "toolnexus $engine_version true" ]] || die "the Go program printed: $out"
  # The seeds, their upstream import line replaced by this module's, in the same scratch module.
  local upstream='toolnexus "github.com/muthuishere/toolnexus/golang"' seed n
  for seed in "$repo"/tests/seeds/go/example*.go; do
    n="$(basename "$seed" .go)"
    mkdir -p "$dir/app/$n"
    sed "s#^  $upstream\$#  toolnexus \"$module\"#" "$seed" >"$dir/app/$n/main.go"
    out="$(cd "$dir/app" && norust "$dir" "$gobin" "${env[@]}" go run "./$n" 2>&1)"
    [[ "$out" == ok:* ]] || die "go seed $n printed: $out"
    echo "go seed $n: $out"
  done
}

"${1:?usage: packaging/go.sh build|check}"
