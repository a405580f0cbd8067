#!/usr/bin/env bash
# The Node artefacts, napi-rs's per-platform package convention: dist/node/toolnexus-<v>.tgz
# (the JS, the types, no addon; an optional dependency on toolnexus-linux-x64-gnu) and
# dist/node/toolnexus-linux-x64-gnu-<v>.tgz (the prebuilt release addon, os/cpu/libc set).
# From a registry, `npm install toolnexus` fetches the platform package itself; from the
# tarballs, both are named on one `npm install`.
#   packaging/node.sh build
#   packaging/node.sh check   an empty project installs both tarballs offline; CommonJS and ESM
#                             two-line programs, the seed tests, and `tsc --strict` on a TS file
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

platform=linux-x64-gnu
nodebin="$(dirname "$(command -v node)")"

build() {
  local stage="$CARGO_TARGET_DIR/dist-stage/node"
  rm -rf "$stage" "$dist/node" && mkdir -p "$stage/main" "$stage/$platform" "$dist/node"
  # The addon packaging/dist.sh built: building it here alone would compile the engine and
  # napi again, with other features unified than in dist.sh's run beside the CLI.
  [[ -f "$release_dir/libtoolnexus_node.so" ]] || die "no release addon: packaging/dist.sh builds it"
  cp "$release_dir/libtoolnexus_node.so" "$stage/$platform/toolnexus.$platform.node"
  strip --strip-debug "$stage/$platform/toolnexus.$platform.node"
  (cd "$repo/bindings-node" && cp index.js index.mjs errors.js index.d.ts README.md "$stage/main/")
  # The package.json files from the committed one, the version from the workspace's.
  node - "$repo/bindings-node/package.json" "$stage" "$engine_version" "$platform" <<'JS'
const fs = require('fs')
const [src, stage, version, platform] = process.argv.slice(2)
const pkg = JSON.parse(fs.readFileSync(src, 'utf8'))
const [os, cpu, abi] = platform.split('-')
const addon = `${pkg.name}-${platform}`
const main = { ...pkg, version, files: pkg.files.filter((f) => !f.endsWith('.node')), optionalDependencies: { [addon]: version } }
delete main.scripts
delete main.devDependencies
fs.writeFileSync(`${stage}/main/package.json`, JSON.stringify(main, null, 2) + '\n')
const native = {
  name: addon, version, description: `The prebuilt ${platform} addon of ${pkg.name}.`, license: pkg.license,
  os: [os], cpu: [cpu], libc: [abi === 'gnu' ? 'glibc' : 'musl'], main: `${pkg.napi.binaryName}.${platform}.node`,
  files: [`${pkg.napi.binaryName}.${platform}.node`], engines: pkg.engines,
}
fs.writeFileSync(`${stage}/${platform}/package.json`, JSON.stringify(native, null, 2) + '\n')
JS
  for p in main "$platform"; do
    (cd "$stage/$p" && npm pack --silent --pack-destination "$dist/node" >/dev/null)
  done
  ls "$dist/node"
}

check() {
  local dir out tsc="$repo/bindings-node/node_modules/.bin/tsc"
  dir="$(scratch node)"
  assert_norust "$dir" "$nodebin"
  mkdir -p "$dir/app"
  local npm=(norust "$dir" "$nodebin" npm --prefix "$dir/app" --no-audit --no-fund --loglevel=error)
  echo '{"name": "scratch", "version": "1.0.0", "private": true}' >"$dir/app/package.json"
  # Offline, with a registry that does not exist: everything must come from the two tarballs.
  "${npm[@]}" install --offline --registry=http://127.0.0.1:9/ \
    "$dist/node/toolnexus-$platform-$engine_version.tgz" "$dist/node/toolnexus-$engine_version.tgz"
  [[ -f "$dir/app/node_modules/toolnexus-$platform/toolnexus.$platform.node" ]] || die "the addon was not installed"
  cat >"$dir/app/hello.cjs" <<'JS'
const tn = require('toolnexus')
console.log('cjs', require('toolnexus/package.json').version, tn.answerOutput('r1', 'yes').ok)
JS
  cat >"$dir/app/hello.mjs" <<'JS'
import { answerOutput, createClient } from 'toolnexus'
console.log('esm', typeof createClient, answerOutput('r1', 'yes').ok)
JS
  out="$(cd "$dir/app" && norust "$dir" "$nodebin" node hello.cjs)"
  echo "node: $out"
  [[ "$out" == "cjs $engine_version true" ]] || die "the CommonJS program printed: $out"
  out="$(cd "$dir/app" && norust "$dir" "$nodebin" node hello.mjs)"
  echo "node: $out"
  [[ "$out" == "esm function true" ]] || die "the ESM program printed: $out"
  # Node has no seed files of its own: test/seeds.test.mjs is the seeds' behaviour in JS, run
  # here against the installed package.
  sed "s#from '../index.mjs'#from 'toolnexus'#" "$repo/bindings-node/test/seeds.test.mjs" >"$dir/app/seeds.test.mjs"
  (cd "$dir/app" && norust "$dir" "$nodebin" node --test seeds.test.mjs) | grep -E '^# (pass|fail)'
  # The types resolve from the package under tsc --strict (the TypeScript the binding pins).
  [[ -x $tsc ]] || (cd "$repo/bindings-node" && npm ci --no-audit --no-fund --loglevel=error)
  cat >"$dir/app/hello.mts" <<'TS'
import { answerOutput, createClient, type Answer } from 'toolnexus'
const a: Answer = answerOutput('r1', 'yes'); const ok: boolean = a.ok; console.log(ok, typeof createClient)
TS
  cat >"$dir/app/hello.cts" <<'TS'
import tn = require('toolnexus')
const a: tn.Answer = tn.answerOutput('r1', 'yes'); const ok: boolean = a.ok; console.log(ok, typeof tn.createClient)
TS
  # An ES module (.mts) and a CommonJS one (.cts), each resolved through the package's exports.
  local file
  for file in hello.mts hello.cts; do
    (cd "$dir/app" && norust "$dir" "$nodebin" "$tsc" --noEmit --strict --module nodenext \
      --moduleResolution nodenext --target es2022 --lib es2022,dom "$file") ||
      die "tsc --strict failed on $file against the installed types"
    echo "node: tsc --strict $file: ok"
  done
}

"${1:?usage: packaging/node.sh build|check}"
