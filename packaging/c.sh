#!/usr/bin/env bash
# The C artefact: dist/c/toolnexus-<version>-linux-x86_64.tar.gz holding include/toolnexus.h,
# lib/libtoolnexus.{so,a} and lib/pkgconfig/toolnexus.pc (relocatable: its prefix is the
# folder the tarball was unpacked in, through ${pcfiledir}).
#   packaging/c.sh build    from the release build of toolnexus-ffi (packaging/dist.sh makes it)
#   packaging/c.sh check    unpacks it in a scratch folder and compiles against it with pkg-config
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

name="toolnexus-$engine_version-linux-x86_64"
tarball="$dist/c/$name.tar.gz"

build() {
  local stage="$CARGO_TARGET_DIR/dist-stage/c/$name"
  rm -rf "$stage" && mkdir -p "$stage/include" "$stage/lib/pkgconfig" "$dist/c"
  install -m 644 "$repo/include/toolnexus.h" "$stage/include/"
  install -m 644 "$release_dir/libtoolnexus.a" "$stage/lib/"
  install -m 755 "$release_dir/libtoolnexus.so" "$stage/lib/"
  strip --strip-debug "$stage/lib/libtoolnexus.a"
  sed -e 's|@PREFIX@|${pcfiledir}/../..|' -e "s|@VERSION@|$engine_version|" \
    "$repo/ffi-c/toolnexus.pc.in" >"$stage/lib/pkgconfig/toolnexus.pc"
  tar -C "$(dirname "$stage")" --owner=0 --group=0 --numeric-owner -czf "$tarball" "$name"
  echo "$tarball"
}

check() {
  local dir out
  dir="$(scratch c)"
  assert_norust "$dir"
  tar -C "$dir" -xzf "$tarball"
  local prefix="$dir/$name"
  # Everything below runs as a user without Rust would (norust), the library found through
  # pkg-config and LD_LIBRARY_PATH only.
  local nr=(norust "$dir" "")
  local pc=("${nr[@]}" env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config)
  local run=("${nr[@]}" env LD_LIBRARY_PATH="$prefix/lib")
  [[ "$("${pc[@]}" --modversion toolnexus)" == "$engine_version" ]] || die "toolnexus.pc: wrong version"
  cat >"$dir/hello.c" <<'C'
#include <stdio.h>
#include <toolnexus.h>
int main(void) { printf("toolnexus %s, ABI %u\n", tn_version(), tn_abi_version()); return tn_abi_version() != TN_ABI_VERSION; }
C
  # Shared: what pkg-config gives, run against the tarball's .so.
  "${nr[@]}" cc -std=c99 -Wall -Werror "$dir/hello.c" $("${pc[@]}" --cflags --libs toolnexus) -o "$dir/hello"
  out="$("${run[@]}" "$dir/hello")"
  echo "c (shared): $out"
  [[ "$out" == "toolnexus $engine_version, ABI "* ]] || die "the C program printed: $out"
  out="$("${run[@]}" ldd "$dir/hello")"
  [[ "$out" == *"=> $prefix/lib/libtoolnexus.so "* ]] ||
    die "the C program did not load the tarball's libtoolnexus.so: $out"
  # Static: the archive with pkg-config's private libraries.
  "${nr[@]}" cc -std=c99 -Wall -Werror "$dir/hello.c" $("${pc[@]}" --cflags toolnexus) "$prefix/lib/libtoolnexus.a" \
    $("${pc[@]}" --static --libs-only-l toolnexus | sed 's/-ltoolnexus//') -o "$dir/hello-static"
  out="$("${nr[@]}" "$dir/hello-static")"
  echo "c (static): $out"
  out="$(ldd "$dir/hello-static" 2>&1 || true)"
  ! contains "$out" libtoolnexus || die "the static program still needs libtoolnexus.so"
  # The C library allocates with the host's malloc (DECISIONS.md, "The bindings allocate with
  # mimalloc"); only the Node addon and the Python extension bring mimalloc.
  out="$(nm "$prefix/lib/libtoolnexus.a" 2>/dev/null)" || die "nm could not read libtoolnexus.a"
  ! contains "$out" ' T mi_malloc$' ||
    die "libtoolnexus was built with the engine's mimalloc feature"
  # Every conformance scenario through the tarball's library.
  "${nr[@]}" cc -std=c99 -Wall -Werror -D_DEFAULT_SOURCE "$repo/tests/c/conformance_runner.c" "$repo/tests/c/json.c" \
    $("${pc[@]}" --cflags --libs toolnexus) -lm -o "$dir/conformance"
  "${run[@]}" "$dir/conformance" "$repo/tests/conformance" | tail -n 1
}

"${1:?usage: packaging/c.sh build|check}"
