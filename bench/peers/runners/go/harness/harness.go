// Package harness is the Go side of the runners' line protocol (see
// bench/peers/runners/py/harness.py): the scenarios, the checks of every unit, and the
// result line, so a Go runner is interleaved with every other row of make bench-peers.
package harness

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	SystemPrompt = "You are a helpful assistant."
	Model        = "gpt-4o-mini"
	APIKey       = "sk-mock"
	MaxTurns     = 20
	WeatherDesc  = "Get the current weather for a city."
	AddDesc      = "Add two integers."
	ApproveDesc  = "Carry out an action once a human approves it."
	filler       = "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog."
)

// The tools' input schemas, as every runner declares them.
var (
	WeatherSchema = map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}
	AddSchema     = map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}, "b": map[string]any{"type": "integer"}}, "required": []any{"a", "b"}}
	ApproveSchema = map[string]any{"type": "object", "properties": map[string]any{"action": map[string]any{"type": "string"}}, "required": []any{"action"}}
)

// Spec is one scenario: what a unit does and what it must produce.
type Spec struct {
	Name        string
	Suspend     bool // an inline suspension, then a durable halt and its resume
	Chain       int
	History     int
	Concurrency int  // concurrent-N: N weather runs at once make one unit
	Stream      bool // weather, streamed
}

func parseSpec(name string) (Spec, error) {
	sp := Spec{Name: name, Concurrency: 1, Stream: name == "stream", Suspend: name == "suspend"}
	num := func(s string) (int, error) { return strconv.Atoi(s) }
	var err error
	switch {
	case strings.HasPrefix(name, "chain-"):
		sp.Chain, err = num(name[len("chain-"):])
	case strings.HasPrefix(name, "history-"):
		sp.History, err = num(name[len("history-"):])
	case strings.HasPrefix(name, "concurrent-"):
		sp.Concurrency, err = num(name[len("concurrent-"):])
	case name == "weather" || name == "stream" || name == "suspend":
	default:
		err = fmt.Errorf("unknown scenario %s", name)
	}
	return sp, err
}

// Expected is (model calls, tool executions) per unit.
func (s Spec) Expected() (int, int) {
	switch {
	case s.Suspend:
		return 4, 4 // two runs; approve suspends, then re-runs with the answer, in each
	case s.Chain > 0:
		return s.Chain + 1, s.Chain
	}
	return 2 * s.Concurrency, 2 * s.Concurrency
}

// Prompt is the user turn of one run.
func (s Spec) Prompt() string {
	switch {
	case s.Suspend:
		return "Deploy the release once it is approved."
	case s.Chain > 0:
		return "Add the numbers step by step using the add tool."
	}
	return "What is the weather in Paris, and what is 2+2?"
}

func (s Spec) expectedText() []string {
	switch {
	case s.Suspend:
		return []string{"FINAL", "approved: deploy"}
	case s.Chain > 0:
		out := []string{"FINAL"}
		for i := 0; i < s.Chain; i++ {
			out = append(out, strconv.Itoa(i+2))
		}
		return out
	}
	return []string{"FINAL", "Sunny, 22C in Paris", "4"}
}

// HistoryMessages is the prior transcript of history-N, OpenAI-shaped.
func (s Spec) HistoryMessages() []any {
	out := make([]any, 0, s.History)
	for i := 0; i < s.History; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out = append(out, map[string]any{"role": role, "content": fmt.Sprintf("Earlier message %d: %s", i, filler)})
	}
	return out
}

// Ctx is what a runner builds from.
type Ctx struct {
	Spec  Spec
	V1URL string // the mock's OpenAI base URL for the scenario
	Calls atomic.Int64
}

// Count records one tool execution.
func (c *Ctx) Count() { c.Calls.Add(1) }

// Weather and Add are the trivial tools' bodies.
func Weather(city string) string { return "Sunny, 22C in " + city }
func Add(a, b float64) string    { return strconv.FormatFloat(a+b, 'f', -1, 64) }

// Runner is a library under test.
type Runner struct {
	Label, Kind string
	Version     func() string
	// Build makes one run of the scenario (for suspend, the whole unit); it returns the text.
	Build func(ctx *Ctx) (func() (string, error), error)
}

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

func cpuMs() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec)*1e3 + float64(t.Usec)/1e3 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func peakRSSMB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}

func stats(xs []float64) map[string]any {
	if len(xs) == 0 {
		return map[string]any{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pct := func(q float64) float64 {
		k := int(math.Ceil(q * float64(len(s))))
		return s[min(max(k, 1), len(s))-1]
	}
	var sum, sq float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	return map[string]any{"mean": mean, "p50": pct(0.5), "p95": pct(0.95), "min": s[0], "max": s[len(s)-1],
		"stdev": math.Sqrt(sq / float64(len(xs)))}
}

// Main runs r under the protocol; it never returns.
func Main(r Runner) {
	base := flag.String("base-url", "", "mock root")
	scenario := flag.String("scenario", "weather", "scenario")
	control := flag.Bool("control", false, "line protocol on stdin")
	label := flag.String("label", r.Label, "row label")
	runs := flag.Int("runs", 200, "timed units (standalone)")
	warmup := flag.Int("warmup", 20, "untimed units first (standalone)")
	flag.String("style", "openai", "wire style (openai only)")
	flag.Parse()
	fail := func(err error) {
		emit(map[string]any{"event": "error", "error": err.Error()})
		os.Exit(1)
	}
	spec, err := parseSpec(*scenario)
	if err != nil {
		fail(err)
	}
	ctx := &Ctx{Spec: spec, V1URL: strings.TrimRight(*base, "/") + "/s/" + spec.Name + "/v1"}
	t0 := time.Now()
	run, err := r.Build(ctx)
	if err != nil {
		fail(err)
	}
	initMs := float64(time.Since(t0).Microseconds()) / 1e3
	unit := func() ([]string, error) {
		if spec.Concurrency == 1 {
			t, err := run()
			return []string{t}, err
		}
		texts, errs := make([]string, spec.Concurrency), make([]error, spec.Concurrency)
		var wg sync.WaitGroup
		for i := range texts {
			wg.Add(1)
			go func(i int) { defer wg.Done(); texts[i], errs[i] = run() }(i)
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				return nil, e
			}
		}
		return texts, nil
	}
	var samples []float64
	var cpu float64
	var first any
	one := func() (float64, error) {
		before := ctx.Calls.Load()
		ts := time.Now()
		texts, err := unit()
		ms := float64(time.Since(ts).Nanoseconds()) / 1e6
		if err != nil {
			return 0, err
		}
		_, wantTools := spec.Expected()
		got := ctx.Calls.Load() - before
		for _, t := range texts {
			for _, w := range spec.expectedText() {
				if !strings.Contains(t, w) {
					return 0, fmt.Errorf("bad run: text %q lacks %q", t, w)
				}
			}
		}
		if got != int64(wantTools) {
			return 0, fmt.Errorf("bad run: tool calls %d (want %d)", got, wantTools)
		}
		if first == nil {
			first = ms
		}
		return ms, nil
	}
	timed := func(k int) error {
		c0 := cpuMs()
		for i := 0; i < k; i++ {
			ms, err := one()
			if err != nil {
				return err
			}
			samples = append(samples, ms)
		}
		cpu += cpuMs() - c0
		return nil
	}
	warm := func(k int) error {
		for i := 0; i < k; i++ {
			if _, err := one(); err != nil {
				return err
			}
		}
		return nil
	}
	if *control {
		emit(map[string]any{"event": "ready", "init_ms": initMs, "import_ms": 0.0, "version": r.Version()})
		in := bufio.NewScanner(os.Stdin)
	loop:
		for in.Scan() {
			parts := strings.Fields(in.Text())
			if len(parts) == 0 {
				continue
			}
			k := 0
			if len(parts) > 1 {
				k, _ = strconv.Atoi(parts[1])
			}
			switch parts[0] {
			case "warmup":
				if err := warm(k); err != nil {
					fail(err)
				}
				emit(map[string]any{"event": "ok"})
			case "run":
				if err := timed(k); err != nil {
					fail(err)
				}
				emit(map[string]any{"event": "ok", "n": len(samples)})
			case "done":
				break loop
			default:
				emit(map[string]any{"event": "error", "error": "bad command " + in.Text()})
			}
		}
	} else {
		if err := warm(*warmup); err != nil {
			fail(err)
		}
		if err := timed(*runs); err != nil {
			fail(err)
		}
	}
	turns, tools := spec.Expected()
	emit(map[string]any{"event": "result", "framework": *label, "version": r.Version(), "lang": "go", "kind": r.Kind,
		"style": "openai", "scenario": spec.Name, "runs": len(samples), "init_ms": initMs, "import_ms": 0.0,
		"first_run_ms": first, "per_run_ms": stats(samples), "cpu_ms_per_run": cpu / float64(max(len(samples), 1)),
		"peak_rss_mb": peakRSSMB(), "turns_per_run": turns, "tool_calls_per_run": tools})
	os.Exit(0)
}
