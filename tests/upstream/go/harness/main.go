// The upstream Go suite's harness (docs/upstream-suites.md): runs upstream toolnexus's
// golang/ tests against our Go module, and checks every outcome against expectations.txt.
//
//	harness prepare -checkout DIR -ours DIR -include DIR -lib FILE -work DIR
//	harness run -work DIR [-expectations FILE] [-record FILE] [test id or name ...]
//
// prepare (network allowed: upstream's test dependencies come from the Go module proxy,
// pinned by upstream's go.sum) lays out work/tree as upstream's repository is laid out:
// golang/ holds a copy of our package (its non-test files) with upstream's test files beside
// it, lib/ the static libtoolnexus, and examples/ and include/ beside golang/ (upstream's tests
// read ../examples; our cgo flags read ../include). It prunes what does not compile (prune.go),
// builds the test binary and writes work/plan.json.
//
// run (inside the network namespace run.sh makes) runs each remaining test in its own process
// of that binary (-test.run '^Name$'), so a test that hangs or leaves goroutines behind cannot
// take the others with it, bounded by -test.timeout; then it applies the expectations.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

const upstreamModule = "github.com/muthuishere/toolnexus/golang"

type plannedTest struct {
	ID      string `json:"id"`   // <file relative to golang/>::<TestName>
	Name    string `json:"name"` // TestName
	Run     bool   `json:"run"`  // compiled into the binary
	Message string `json:"message,omitempty"`
}

type plan struct {
	Binary string        `json:"binary"`
	Dir    string        `json:"dir"`
	Tests  []plannedTest `json:"tests"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: harness prepare|run ...")
		os.Exit(2)
	}
	var err error
	code := 0
	switch os.Args[1] {
	case "prepare":
		err = prepareCmd(os.Args[2:])
	case "run":
		code, err = runCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream go:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func logf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

func prepareCmd(args []string) error {
	fl := flag.NewFlagSet("prepare", flag.ExitOnError)
	checkout := fl.String("checkout", "", "upstream's tree (golang/, examples/)")
	ours := fl.String("ours", "", "our Go module (bindings-go)")
	include := fl.String("include", "", "our include/ (toolnexus.h)")
	lib := fl.String("lib", "", "the built libtoolnexus.a")
	work := fl.String("work", "", "the work directory")
	_ = fl.Parse(args)
	for name, v := range map[string]string{"checkout": *checkout, "ours": *ours, "include": *include, "lib": *lib, "work": *work} {
		if v == "" {
			return fmt.Errorf("prepare: -%s is required", name)
		}
	}
	golang := filepath.Join(*checkout, "golang")
	tree := filepath.Join(*work, "tree")
	pkg := filepath.Join(tree, "golang")
	if err := os.RemoveAll(tree); err != nil {
		return err
	}
	// Where our cgo flags look for the archive: lib/<GOOS>-<GOARCH> (bindings-go/cgo.go).
	libDir := filepath.Join(pkg, "lib", runtime.GOOS+"-"+runtime.GOARCH)
	if err := os.MkdirAll(libDir, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(*include, filepath.Join(tree, "include")); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(*checkout, "examples")); err == nil {
		if err := os.Symlink(filepath.Join(*checkout, "examples"), filepath.Join(tree, "examples")); err != nil {
			return err
		}
	}
	if err := copyFile(*lib, filepath.Join(libDir, "libtoolnexus.a")); err != nil {
		return err
	}
	// Our package: its non-test files.
	entries, err := os.ReadDir(*ours)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || n == "libstamp.go" || strings.HasSuffix(n, "_test.go") || !(strings.HasSuffix(n, ".go") || strings.HasSuffix(n, ".c") || strings.HasSuffix(n, ".h")) {
			continue
		}
		if err := copyFile(filepath.Join(*ours, n), filepath.Join(pkg, n)); err != nil {
			return err
		}
	}
	// The checksum of the archive linked here, not of the one bindings-go/lib holds: Go's build
	// cache does not see the archive, only this file (bindings-go/write-libstamp.sh).
	stamp := exec.Command(filepath.Join(*ours, "write-libstamp.sh"), *lib, filepath.Join(pkg, "libstamp.go"))
	if out, err := stamp.CombinedOutput(); err != nil {
		return fmt.Errorf("writing libstamp.go: %v\n%s", err, out)
	}
	if err := writeGoMod(*ours, golang, pkg); err != nil {
		return err
	}

	// Upstream's test files: those of golang/ itself go beside our package; a test file of
	// another package (golang/agents) has no counterpart here, so its tests fail unbuilt.
	p := plan{Binary: filepath.Join(*work, "upstream.test"), Dir: pkg}
	var files []*upstreamFile
	ourModule := modulePath(*ours)
	err = filepath.WalkDir(golang, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		dir := filepath.Dir(path)
		if ok, err := build.Default.MatchFile(dir, d.Name()); err != nil || !ok {
			rel, _ := filepath.Rel(golang, path)
			logf("upstream go: %s is not built by `go test` (build constraints): not counted", rel)
			return err
		}
		rel, _ := filepath.Rel(golang, path)
		if dir != golang {
			names, err := testNames(path)
			if err != nil {
				return err
			}
			sub, _ := filepath.Rel(golang, dir)
			for _, n := range names {
				p.Tests = append(p.Tests, plannedTest{ID: rel + "::" + n, Name: n,
					Message: fmt.Sprintf("not built: our module has no package %s (upstream's %s/%s)", sub, upstreamModule, sub)})
			}
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// An external test package imports upstream's module by path: ours instead.
		src = []byte(strings.ReplaceAll(string(src), `"`+upstreamModule+`"`, `"`+ourModule+`"`))
		staged := filepath.Join(*work, "staged", d.Name())
		if err := os.MkdirAll(filepath.Dir(staged), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(staged, src, 0o644); err != nil {
			return err
		}
		uf, err := parseUpstream(staged)
		if err != nil {
			return err
		}
		files = append(files, uf)
		return nil
	})
	if err != nil {
		return err
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "CGO_ENABLED=1", "GOTOOLCHAIN=local")
	// Our package alone first: an error there is ours, not something to prune.
	if out, err := runGo(pkg, env, "build", "-o", os.DevNull, "."); err != nil {
		return fmt.Errorf("our package (%s) does not build:\n%s", *ours, out)
	}
	removed, err := prune(pkg, files, env, logf)
	if err != nil {
		return err
	}
	for _, uf := range files {
		for _, u := range uf.units {
			if u.test == "" {
				continue
			}
			id := uf.name + "::" + u.test
			t := plannedTest{ID: id, Name: u.test, Run: !u.removed}
			if u.removed {
				t.Message = "does not compile against our package: " + strings.Join(removed[id], "; ")
			}
			p.Tests = append(p.Tests, t)
		}
	}
	sort.Slice(p.Tests, func(i, j int) bool { return p.Tests[i].ID < p.Tests[j].ID })
	if out, err := runGo(pkg, env, "test", "-c", "-vet=off", "-o", p.Binary, "."); err != nil {
		return fmt.Errorf("building the test binary: %v\n%s", err, out)
	}
	n := 0
	for _, t := range p.Tests {
		if t.Run {
			n++
		}
	}
	logf("upstream go: %d tests, %d of them compile against our package", len(p.Tests), n)
	data, _ := json.MarshalIndent(p, "", "  ")
	return os.WriteFile(filepath.Join(*work, "plan.json"), append(data, '\n'), 0o644)
}

// testNames lists a file's Test functions, without compiling it.
func testNames(path string) ([]string, error) {
	uf, err := parseUpstream(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range uf.units {
		if u.test != "" {
			out = append(out, u.test)
		}
	}
	return out, nil
}

func modulePath(dir string) string {
	data, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(l, "module "))
		}
	}
	return ""
}

// writeGoMod: our module's path, with upstream's requirements (its tests import mcp-go) and
// its go.sum, and the later of the two go versions.
func writeGoMod(ours, golang, pkg string) error {
	oursMod, err := os.ReadFile(filepath.Join(ours, "go.mod"))
	if err != nil {
		return err
	}
	upMod, err := os.ReadFile(filepath.Join(golang, "go.mod"))
	if err != nil {
		return err
	}
	goLine := func(mod []byte) string {
		for _, l := range strings.Split(string(mod), "\n") {
			if strings.HasPrefix(l, "go ") {
				return strings.TrimSpace(strings.TrimPrefix(l, "go "))
			}
		}
		return "1.22"
	}
	version := goLine(oursMod)
	if versionLess(version, goLine(upMod)) {
		version = goLine(upMod)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo %s\n", modulePath(ours), version)
	for _, l := range strings.Split(string(upMod), "\n") {
		if strings.HasPrefix(l, "module ") || strings.HasPrefix(l, "go ") || strings.HasPrefix(l, "toolchain ") {
			continue
		}
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(filepath.Join(pkg, "go.mod"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if sum, err := os.ReadFile(filepath.Join(golang, "go.sum")); err == nil {
		return os.WriteFile(filepath.Join(pkg, "go.sum"), sum, 0o644)
	}
	return nil
}

func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			fmt.Sscan(pa[i], &x)
		}
		if i < len(pb) {
			fmt.Sscan(pb[i], &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}
