package main

// Running the planned tests, one process each, and checking them against expectations.txt.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

type outcome struct {
	result  string // passed, failed, skipped
	message string
}

func runGo(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var (
	failLine  = regexp.MustCompile(`^\s+(\S+\.go:\d+: .*)$`)
	panicLine = regexp.MustCompile(`^panic: (.*)$`)
)

// runOne runs one test in its own process of the binary and reads its outcome.
func runOne(p plan, name string, timeout time.Duration) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Binary, "-test.run=^"+regexp.QuoteMeta(name)+"$", "-test.v",
		"-test.count=1", "-test.timeout="+timeout.String())
	cmd.Dir = p.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	switch {
	case strings.Contains(text, "\n--- PASS: "+name+" ") && err == nil:
		return outcome{result: "passed"}
	case strings.Contains(text, "\n--- SKIP: "+name+" ") && err == nil:
		return outcome{result: "skipped", message: firstFailure(text)}
	case strings.Contains(text, "testing: warning: no tests to run"):
		return outcome{result: "failed", message: "the test binary does not have this test"}
	}
	msg := firstFailure(text)
	if ctx.Err() != nil {
		msg = fmt.Sprintf("killed: still running %s after its -test.timeout", 30*time.Second)
	}
	if msg == "" {
		msg = fmt.Sprintf("the test process ended: %v", err)
	}
	return outcome{result: "failed", message: msg}
}

// firstFailure: the first `file.go:N: message` line (a t.Error/t.Fatal), else the panic.
func firstFailure(text string) string {
	var panicMsg string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := failLine.FindStringSubmatch(line); m != nil {
			return clip(m[1])
		}
		if m := panicLine.FindStringSubmatch(line); m != nil && panicMsg == "" {
			panicMsg = "panic: " + m[1]
		}
	}
	return clip(panicMsg)
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

var expLine = regexp.MustCompile(`^(\S.*?)\s{2,}(pass|xfail: (\S.*))$`)

func loadExpectations(path string) (map[string]*string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]*string{}
	for n, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimRight(raw, " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := expLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: not `<id>  pass` or `<id>  xfail: <reason>`: %s", path, n+1, line)
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, n+1, m[1])
		}
		if m[2] == "pass" {
			out[m[1]] = nil
		} else {
			reason := m[3]
			out[m[1]] = &reason
		}
	}
	return out, nil
}

func runCmd(args []string) (int, error) {
	fl := flag.NewFlagSet("run", flag.ExitOnError)
	work := fl.String("work", "", "the work directory prepare filled")
	expectations := fl.String("expectations", "", "expectations.txt")
	record := fl.String("record", "", "write outcomes here instead of checking them")
	timeoutS := fl.Int("timeout", 60, "seconds one test may run")
	_ = fl.Parse(args)
	data, err := os.ReadFile(filepath.Join(*work, "plan.json"))
	if err != nil {
		return 0, err
	}
	var p plan
	if err := json.Unmarshal(data, &p); err != nil {
		return 0, err
	}
	only := map[string]bool{}
	for _, a := range fl.Args() {
		only[a] = true
	}
	expected := map[string]*string{}
	if *record == "" {
		if expected, err = loadExpectations(*expectations); err != nil {
			return 0, err
		}
	}
	outcomes := map[string]outcome{}
	started := time.Now()
	for _, t := range p.Tests {
		if len(only) > 0 && !only[t.ID] && !only[t.Name] {
			continue
		}
		if !t.Run {
			outcomes[t.ID] = outcome{result: "failed", message: t.Message}
			continue
		}
		outcomes[t.ID] = runOne(p, t.Name, time.Duration(*timeoutS)*time.Second)
	}
	ids := make([]string, 0, len(outcomes))
	for id := range outcomes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	passed, xfail, failed := 0, 0, 0
	var bad []string
	for _, id := range ids {
		o := outcomes[id]
		switch o.result {
		case "passed":
			passed++
		case "failed":
			failed++
		}
		if *record != "" {
			continue
		}
		reason, listed := expected[id]
		switch {
		case !listed:
			detail := o.result
			if o.message != "" {
				detail += ": " + o.message
			}
			bad = append(bad, fmt.Sprintf("%s: not in expectations.txt (it %s)", id, detail))
		case o.result == "skipped":
			bad = append(bad, fmt.Sprintf("%s: skipped (%s), expected %s", id, o.message, map[bool]string{true: "pass", false: "xfail"}[reason == nil]))
		case reason == nil && o.result == "failed":
			bad = append(bad, fmt.Sprintf("%s: expected pass, failed: %s", id, o.message))
		case reason != nil && o.result == "passed":
			bad = append(bad, fmt.Sprintf("%s: passes now: make its line `pass` (it was xfail: %s)", id, *reason))
		case reason != nil:
			xfail++
		}
	}
	if *record == "" && len(only) == 0 {
		var stale []string
		for id := range expected {
			if _, ok := outcomes[id]; !ok {
				stale = append(stale, id+": in expectations.txt but no such upstream test")
			}
		}
		sort.Strings(stale)
		bad = append(bad, stale...)
	}
	if *record != "" {
		var b strings.Builder
		for _, id := range ids {
			o := outcomes[id]
			fmt.Fprintf(&b, "%s\t%s\t%s\n", id, o.result, strings.NewReplacer("\t", " ", "\n", " ").Replace(o.message))
		}
		if err := os.WriteFile(*record, []byte(b.String()), 0o644); err != nil {
			return 0, err
		}
		fmt.Printf("upstream go: %d passed, %d failed (recorded to %s) in %s\n", passed, failed, *record, time.Since(started).Round(time.Second))
		return 0, nil
	}
	if len(bad) > 0 {
		fmt.Println("upstream suite: mismatches with tests/upstream/go/expectations.txt")
		for _, l := range bad {
			fmt.Println("  " + l)
		}
	}
	tail := ""
	if len(bad) > 0 {
		tail = ", " + strconv.Itoa(len(bad)) + " mismatched"
	}
	fmt.Printf("upstream go: %d passed, %d xfail%s\n", passed, xfail, tail)
	if len(bad) > 0 {
		return 1, nil
	}
	return 0, nil
}
