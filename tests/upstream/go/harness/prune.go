package main

// Fitting upstream's internal test files to our package. Upstream's golang/*_test.go are
// `package toolnexus` tests: they call unexported identifiers of upstream's package and use
// options we do not have, and one missing name fails the whole package's compile. So the
// harness compiles them together with our package and, while the compiler reports errors,
// blanks out each top-level declaration of an upstream file that an error falls in (a test,
// a helper, a type, one spec of a var block, an import no longer used), then compiles again.
// A declaration is blanked with spaces (its newlines kept), so every line that remains is
// upstream's own, at upstream's line number. Tests that remain run unchanged; a test that was
// blanked is a failure whose message lists the compiler errors that took it out, the errors
// of helpers it needed included.

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// unit is one removable top-level declaration of an upstream file.
type unit struct {
	file       string
	start, end int      // byte range, doc comment included
	names      []string // what it declares: "F", "T", "T.m", or an import's local name
	test       string   // the Test function it is, if it is one
	importPath string   // for an import spec
	removed    bool
	causes     map[string]bool // the root compiler errors that removed it
}

type upstreamFile struct {
	name  string // base name in the package directory
	src   []byte
	tf    *token.File
	units []*unit
}

func parseUpstream(path string) (*upstreamFile, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	uf := &upstreamFile{name: filepath.Base(path), src: src, tf: fset.File(f.Pos())}
	off := func(p token.Pos) int { return uf.tf.Offset(p) }
	add := func(start, end token.Pos, names []string, test, importPath string) {
		uf.units = append(uf.units, &unit{file: uf.name, start: off(start), end: off(end), names: names,
			test: test, importPath: importPath, causes: map[string]bool{}})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			start := d.Pos()
			if d.Doc != nil {
				start = d.Doc.Pos()
			}
			name, test := d.Name.Name, ""
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = recvName(d.Recv.List[0].Type) + "." + name
			} else if isTestFunc(d) {
				test = d.Name.Name
			}
			add(start, d.End(), []string{name}, test, "")
		case *ast.GenDecl:
			grouped := d.Lparen.IsValid()
			for _, s := range d.Specs {
				var names []string
				importPath := ""
				switch s := s.(type) {
				case *ast.ImportSpec:
					importPath, _ = strconv.Unquote(s.Path.Value)
					local := importPath[strings.LastIndex(importPath, "/")+1:]
					if s.Name != nil {
						local = s.Name.Name
					}
					names = []string{local}
				case *ast.TypeSpec:
					names = []string{s.Name.Name}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
				}
				start, end := s.Pos(), s.End()
				if !grouped {
					start, end = d.Pos(), d.End()
					if d.Doc != nil {
						start = d.Doc.Pos()
					}
				} else if doc := specDoc(s); doc != nil {
					start = doc.Pos()
				}
				add(start, end, names, "", importPath)
			}
		}
	}
	return uf, nil
}

func specDoc(s ast.Spec) *ast.CommentGroup {
	switch s := s.(type) {
	case *ast.ImportSpec:
		return s.Doc
	case *ast.TypeSpec:
		return s.Doc
	case *ast.ValueSpec:
		return s.Doc
	}
	return nil
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

// isTestFunc: func TestXxx(t *testing.T), as `go test` finds them (TestMain is not a test).
func isTestFunc(d *ast.FuncDecl) bool {
	n := d.Name.Name
	if !strings.HasPrefix(n, "Test") || n == "TestMain" || d.Recv != nil {
		return false
	}
	if len(n) > 4 {
		r := n[4]
		if r >= 'a' && r <= 'z' {
			return false
		}
	}
	p := d.Type.Params.List
	if len(p) != 1 || len(p[0].Names) > 1 {
		return false
	}
	star, ok := p[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// write puts the file in dir with its removed units blanked out (newlines kept).
func (uf *upstreamFile) write(dir string) error {
	out := append([]byte(nil), uf.src...)
	for _, u := range uf.units {
		if !u.removed {
			continue
		}
		for i := u.start; i < u.end; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, uf.name), out, 0o644)
}

func (uf *upstreamFile) unitAt(line, col int) *unit {
	if line < 1 || line > uf.tf.LineCount() {
		return nil
	}
	off := uf.tf.Offset(uf.tf.LineStart(line)) + col - 1
	for _, u := range uf.units {
		if off >= u.start && off < u.end {
			return u
		}
	}
	return nil
}

var (
	errLine    = regexp.MustCompile(`^(?:\./)?([^\s:]+\.go):(\d+):(\d+): (.*)$`)
	otherDecl  = regexp.MustCompile(`^\t(?:\./)?([^\s:]+\.go):(\d+):(\d+): other declaration of`)
	unusedImp  = regexp.MustCompile(`^"[^"]+" imported (?:as \S+ )?and not used$`)
	undefName  = regexp.MustCompile(`^undefined: (\S+)$`)
	noMethod   = regexp.MustCompile(`\(type \*?(\w+) has no field or method (\w+)`)
	noModule   = regexp.MustCompile(`no required module provides package|cannot find module providing package|could not import`)
	pathPrefix = regexp.MustCompile(`(?:/[^\s:]+/)([^/\s:]+\.go)`)
)

type compileError struct {
	file      string
	line, col int
	msg       string
	other     []string // continuation lines
}

// compile runs the test build once and returns its errors (none: it built).
func compile(dir string, env []string) ([]compileError, string, error) {
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-gcflags=-e", "-o", os.DevNull, ".")
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		return nil, out.String(), nil
	}
	var errs []compileError
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := errLine.FindStringSubmatch(line); m != nil {
			ln, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			errs = append(errs, compileError{file: filepath.Base(m[1]), line: ln, col: col, msg: m[4]})
		} else if strings.HasPrefix(line, "\t") && len(errs) > 0 {
			errs[len(errs)-1].other = append(errs[len(errs)-1].other, line)
		}
	}
	return errs, out.String(), fmt.Errorf("go test -c: %v", err)
}

// prune compiles until the package builds, removing what the errors fall in. It returns the
// removed tests, each with its causes.
func prune(dir string, files []*upstreamFile, env []string, logf func(string, ...any)) (map[string][]string, error) {
	byName := map[string]*upstreamFile{}
	for _, f := range files {
		byName[f.name] = f
	}
	removedNames := map[string]*unit{} // declared name -> the removed unit declaring it
	for pass := 1; ; pass++ {
		for _, f := range files {
			if err := f.write(dir); err != nil {
				return nil, err
			}
		}
		errs, out, err := compile(dir, env)
		if err == nil {
			break
		}
		progress := 0
		for _, e := range errs {
			uf := byName[e.file]
			var u *unit
			if uf != nil {
				u = uf.unitAt(e.line, e.col)
			}
			if u == nil {
				// An error in our own file: a redeclaration whose other side is upstream's.
				for _, o := range e.other {
					if m := otherDecl.FindStringSubmatch(o); m != nil && byName[filepath.Base(m[1])] != nil {
						ln, _ := strconv.Atoi(m[2])
						col, _ := strconv.Atoi(m[3])
						u = byName[filepath.Base(m[1])].unitAt(ln, col)
					}
				}
			}
			if u == nil {
				return nil, fmt.Errorf("a compile error outside upstream's declarations (pass %d):\n%s", pass, out)
			}
			if !u.removed {
				u.removed = true
				progress++
				for _, n := range u.names {
					removedNames[n] = u
				}
			}
			if unusedImp.MatchString(e.msg) {
				continue // an import left unused by earlier removals: no cause
			}
			for c := range explain(e, removedNames) {
				u.causes[c] = true
			}
		}
		logf("upstream go: compile pass %d: %d errors, %d declarations removed", pass, len(errs), progress)
		if progress == 0 {
			return nil, fmt.Errorf("compile errors the harness cannot attribute:\n%s", out)
		}
	}
	removed := map[string][]string{}
	for _, f := range files {
		for _, u := range f.units {
			if u.removed && u.test != "" {
				removed[f.name+"::"+u.test] = sortedKeys(resolve(u, removedNames, map[*unit]bool{}))
			}
		}
	}
	return removed, nil
}

// explain turns one compiler error into its causes: itself, or, when it names something an
// earlier pass removed, a reference to that ("needs helper") resolved later.
func explain(e compileError, removedNames map[string]*unit) map[string]bool {
	msg := pathPrefix.ReplaceAllString(e.msg, "$1")
	if m := undefName.FindStringSubmatch(msg); m != nil {
		if u := removedNames[m[1]]; u != nil {
			return map[string]bool{"\x00" + m[1]: true}
		}
	}
	if m := noMethod.FindStringSubmatch(msg); m != nil {
		if u := removedNames[m[1]+"."+m[2]]; u != nil {
			return map[string]bool{"\x00" + m[1] + "." + m[2]: true}
		}
	}
	if noModule.MatchString(msg) {
		return map[string]bool{"missing module: " + msg: true}
	}
	return map[string]bool{msg: true}
}

// resolve follows "needs helper" references to the root compiler errors.
func resolve(u *unit, removedNames map[string]*unit, seen map[*unit]bool) map[string]bool {
	out := map[string]bool{}
	if seen[u] {
		return out
	}
	seen[u] = true
	for c := range u.causes {
		if strings.HasPrefix(c, "\x00") {
			dep := removedNames[c[1:]]
			sub := resolve(dep, removedNames, seen)
			if len(sub) == 0 {
				sub = map[string]bool{"needs " + c[1:]: true}
			}
			for s := range sub {
				out[s] = true
			}
			continue
		}
		out[c] = true
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
