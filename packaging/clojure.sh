#!/usr/bin/env bash
# The Clojure artefact: dist/clojure/toolnexus-clojure-<v>.jar (the sources, as a Clojure
# library ships, and the release libtoolnexus.so at linux-x86-64/, JNA's resource path, which
# JNA unpacks and loads when no `toolnexus.lib` / TOOLNEXUS_LIB / jna.library.path names one)
# and its pom, the coordinates io.github.toolnexus/toolnexus-clojure <v>.
#   packaging/clojure.sh build
#   packaging/clojure.sh check   the jar in a scratch Maven repository, the classpath Maven
#                                resolves for a project depending on it (Clojure and JNA from
#                                Maven Central), then `java -cp` runs a two-line program and
#                                the seed examples, with no Rust on PATH
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

artifact="toolnexus-clojure-$engine_version"
m2="${MAVEN_REPO:-$HOME/.m2/repository}"

build() {
  local native="$CARGO_TARGET_DIR/dist-stage/clojure/native"
  rm -rf "$native" "$dist/clojure" && mkdir -p "$native/linux-x86-64" "$dist/clojure"
  cp "$release_dir/libtoolnexus.so" "$native/linux-x86-64/"
  strip --strip-debug "$native/linux-x86-64/libtoolnexus.so"
  mvn -q -B -f "$repo/bindings-clojure/pom.xml" -Dtoolnexus.native.dir="$native" clean package
  cp "$repo/bindings-clojure/target/$artifact.jar" "$dist/clojure/"
  cp "$repo/bindings-clojure/pom.xml" "$dist/clojure/$artifact.pom"
  grep -qx 'linux-x86-64/libtoolnexus.so' <<<"$(jar tf "$dist/clojure/$artifact.jar")" || die "the jar has no linux-x86-64/libtoolnexus.so"
  ls "$dist/clojure"
}

check() {
  local dir out at
  dir="$(scratch clojure)"
  assert_norust "$dir"
  # The jar as `mvn install` (or `lein install`) lays it out, in a repository of the check's own.
  at="$dir/m2/io/github/toolnexus/toolnexus-clojure/$engine_version"
  mkdir -p "$at" "$dir/app"
  cp "$dist/clojure/$artifact.jar" "$dist/clojure/$artifact.pom" "$at/"
  # A project that depends on it. Third-party jars come from Maven Central, through this
  # machine's Maven cache first when it has them (a read-only file repository).
  cat >"$dir/app/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>scratch</groupId><artifactId>app</artifactId><version>1</version>
  <repositories><repository><id>cache</id><url>file://$m2</url></repository></repositories>
  <pluginRepositories><pluginRepository><id>cache</id><url>file://$m2</url></pluginRepository></pluginRepositories>
  <dependencies>
    <dependency><groupId>io.github.toolnexus</groupId><artifactId>toolnexus-clojure</artifactId><version>$engine_version</version></dependency>
  </dependencies>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version>
  </plugin></plugins></build>
</project>
POM
  (cd "$dir/app" && norust "$dir" "" mvn -q -B -Dmaven.repo.local="$dir/m2" dependency:build-classpath \
    -Dmdep.outputFile="$dir/app/classpath.txt" >"$dir/mvn.log" 2>&1) || { cat "$dir/mvn.log"; die "Maven could not resolve the jar's classpath"; }
  local cp java
  cp="$(cat "$dir/app/classpath.txt")"
  # Java takes its home from the password file, not HOME: the check's own, and JNA unpacks the
  # jar's library into the check's tmp (the path printed below shows it came from the jar).
  java=(norust "$dir" "" java -Duser.home="$dir/home" -Djna.tmpdir="$dir/tmp")
  grep -q "$artifact.jar" <<<"$cp" || die "the classpath does not hold $artifact.jar"
  grep -q "/org/clojure/clojure/" <<<"$cp" || die "the classpath does not hold Clojure"
  out="$(cd "$dir/app" && "${java[@]}" -cp "$cp" clojure.main -e \
    "(require '[toolnexus.client :as c]) (println \"clojure\" (:ok (c/answer-output \"r1\" \"yes\")) (str (.getFile (toolnexus.impl.ffi/lib))))")"
  echo "clojure: $out"
  [[ "$out" == "clojure true $dir/tmp/jna"* ]] || die "the Clojure program printed: $out"
  # The seeds require koine.json, which the library does not ship: test-support/ stands in.
  for seed in "$repo"/tests/seeds/clojure/*.clj; do
    out="$(cd "$dir/app" && "${java[@]}" -cp "$repo/bindings-clojure/test-support:$cp" clojure.main "$seed")"
    grep -qx OK <<<"$out" || die "clojure seed $(basename "$seed") printed: $out"
    echo "clojure seed $(basename "$seed"): OK"
  done
}

"${1:?usage: packaging/clojure.sh build|check}"
