package toolnexus_test

// The fault suite through the public Go API: every scenario of tests/faults/scenarios.json
// against tests/faults/fault_server.py (spawned here; it exits when its stdin closes). Each
// must end in its typed *tn.Error (or one that unwraps to the host's own error) or its error
// tool result within its bound, and leave nothing running: the goroutine count is back to
// what it was before the scenario, and the server saw every connection closed.
//
// Where Go cannot fail the way a scenario says, the runner does the nearest thing: OnError
// returns a Tier and no error, so "raise" there is a panic (a host error naming it, without
// the host's object); WaitFor has no context, so "hang" there blocks until the run has ended
// and the runner releases it (the binding must not add goroutines of its own meanwhile).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

type faultSpec struct {
	Behavior    string         `json:"behavior"`
	Message     string         `json:"message"`
	Output      string         `json:"output"`
	Prompt      string         `json:"prompt"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

type faultScenario struct {
	Name   string `json:"name"`
	Server string `json:"server"`
	Style  string `json:"style"`
	Client struct {
		Model       string            `json:"model"`
		APIKey      string            `json:"api_key"`
		Headers     map[string]string `json:"headers"`
		Retries     int               `json:"retries"`
		RetryBaseMs int               `json:"retry_base_ms"`
		TimeoutMs   int               `json:"timeout_ms"`
	} `json:"client"`
	Prompt  string                `json:"prompt"`
	Runs    int                   `json:"runs"`
	PauseMs int                   `json:"pause_ms"`
	Tool    *faultSpec            `json:"tool"`
	WaitFor *faultSpec            `json:"wait_for"`
	Hooks   map[string]*faultSpec `json:"hooks"`
	OnError *faultSpec            `json:"on_error"`
	Skip    map[string]string     `json:"skip"`
	Expect  struct {
		Text       *string `json:"text"`
		TextPrefix *string `json:"text_prefix"`
		ToolCalls  []struct {
			Name    string  `json:"name"`
			Output  *string `json:"output"`
			IsError bool    `json:"is_error"`
		} `json:"tool_calls"`
		Error *struct {
			Kind            string           `json:"kind"`
			Status          *int             `json:"status"`
			RetryAfter      *json.RawMessage `json:"retry_after"`
			Body            *string          `json:"body"`
			BodyContains    *string          `json:"body_contains"`
			Message         *string          `json:"message"`
			MessageContains *string          `json:"message_contains"`
		} `json:"error"`
		Requests        *int     `json:"requests"`
		MustNotContain  []string `json:"must_not_contain"`
		MaxMessageChars *int     `json:"max_message_chars"`
		MinMs           *int     `json:"min_ms"`
	} `json:"expect"`
	BoundMs int `json:"bound_ms"`
}

func faultsDir(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "tests", "faults")
}

// faultServer is the running fault server.
type faultServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	port  int
}

func startFaultServer(t *testing.T) *faultServer {
	t.Helper()
	cmd := exec.Command("python3", filepath.Join(faultsDir(t), "fault_server.py"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("python3 must be on PATH to run the fault suite: %v", err)
	}
	s := &faultServer{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		_ = s.stdin.Close() // the server exits on its own...
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill() // ...or now
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("fault server: %v", err)
	}
	if _, err := fmt.Sscanf(line, "%d", &s.port); err != nil {
		t.Fatalf("fault server said %q", line)
	}
	return s
}

// stats is what the server knows of prefix: the POSTs it saw and its connections still open.
// A raw request, so no HTTP client goroutine outlives it.
func (s *faultServer) stats(t *testing.T, prefix string) (requests, open int) {
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /_stats/%s HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n", prefix)
	raw, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(raw), "\r\n\r\n")
	var st struct{ Requests, Open int }
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("stats %q: %v", raw, err)
	}
	return st.Requests, st.Open
}

func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

// faultError is the host's own failure: the run's error must unwrap to it.
type faultError struct{ msg string }

func (e *faultError) Error() string { return e.msg }

// faultHost builds the scenario's host functions and records what they returned.
type faultHost struct {
	raised  []error
	release chan struct{} // closed once the runs are over: unblocks a hanging WaitFor
}

func (h *faultHost) fail(spec *faultSpec) error {
	e := &faultError{spec.Message}
	h.raised = append(h.raised, e)
	return e
}

// misbehave fails or blocks until ctx ends, as spec says.
func (h *faultHost) misbehave(ctx context.Context, spec *faultSpec) error {
	if spec.Behavior == "raise" {
		return h.fail(spec)
	}
	<-ctx.Done()
	return ctx.Err()
}

func (h *faultHost) tool(spec *faultSpec) tn.Tool {
	return tn.Tool{
		Name: spec.Name, Description: spec.Description, InputSchema: spec.InputSchema, Source: tn.SourceNative,
		Execute: func(_ map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
			switch spec.Behavior {
			case "text":
				return tn.ToolResult{Output: spec.Output}, nil
			case "suspend":
				if ctx.Answer != nil {
					return tn.ToolResult{Output: "approved"}, nil
				}
				return tn.Pending(tn.Request{Kind: "approval", Prompt: spec.Prompt}), nil
			case "garbage":
				// Metadata that encoding/json cannot encode.
				return tn.ToolResult{Output: "x", Metadata: map[string]any{"ch": make(chan int)}}, nil
			}
			return tn.ToolResult{}, h.misbehave(ctx.Ctx, spec)
		},
	}
}

func (h *faultHost) options(sc *faultScenario, baseURL string) tn.ClientOptions {
	c := sc.Client
	o := tn.ClientOptions{
		BaseURL: baseURL, Style: tn.ClientStyle(sc.Style), Model: c.Model, APIKey: c.APIKey, Headers: c.Headers,
		Retries: c.Retries, RetryBaseMs: c.RetryBaseMs, TimeoutMs: c.TimeoutMs,
	}
	if spec := sc.WaitFor; spec != nil {
		o.WaitFor = func(tn.Request) (tn.Answer, error) {
			if spec.Behavior == "raise" {
				return tn.Answer{}, h.fail(spec)
			}
			<-h.release
			return tn.Answer{}, errors.New("released after the run")
		}
	}
	if spec := sc.OnError; spec != nil {
		o.OnError = func(tn.ErrorInfo) tn.Tier { panic(spec.Message) }
	}
	if len(sc.Hooks) > 0 {
		hk := &tn.Hooks{}
		if spec := sc.Hooks["before_llm"]; spec != nil {
			hk.BeforeLLM = func(ctx context.Context, _ tn.BeforeLLMEvent) (*tn.LLMOverride, error) {
				return nil, h.misbehave(ctx, spec)
			}
		}
		if spec := sc.Hooks["after_llm"]; spec != nil {
			hk.AfterLLM = func(ctx context.Context, _ tn.AfterLLMEvent) error { return h.misbehave(ctx, spec) }
		}
		if spec := sc.Hooks["before_tool"]; spec != nil {
			hk.BeforeTool = func(ctx context.Context, _ tn.BeforeToolEvent) (*tn.ToolOverride, error) {
				return nil, h.misbehave(ctx, spec)
			}
		}
		if spec := sc.Hooks["after_tool"]; spec != nil {
			hk.AfterTool = func(ctx context.Context, _ tn.AfterToolEvent) (*tn.ToolOverride, error) {
				return nil, h.misbehave(ctx, spec)
			}
		}
		o.Hooks = hk
	}
	return o
}

func (sc *faultScenario) secrets() []string {
	s := append([]string{sc.Client.APIKey}, sc.Expect.MustNotContain...)
	for _, v := range sc.Client.Headers {
		s = append(s, v)
	}
	return s
}

func checkFaultError(sc *faultScenario, h *faultHost, err error) []string {
	want := sc.Expect.Error
	var problems []string
	var te *tn.Error
	if !errors.As(err, &te) {
		return []string{fmt.Sprintf("%T %v is not a *tn.Error", err, err)}
	}
	if string(te.Kind) != want.Kind {
		return []string{fmt.Sprintf("kind %s (%v), want %s", te.Kind, err, want.Kind)}
	}
	message := err.Error()
	if want.Kind == "host" {
		if sc.OnError != nil {
			// A panic: the host error names it (see the file comment).
			if !strings.Contains(message, "panicked: "+*want.Message) {
				problems = append(problems, fmt.Sprintf("message %q does not name the panic %q", message, *want.Message))
			}
		} else {
			found := false
			for _, r := range h.raised {
				found = found || errors.Is(err, r)
			}
			if !found {
				problems = append(problems, fmt.Sprintf("%v does not unwrap to the host's own error", err))
			}
			if want.Message != nil && message != *want.Message {
				problems = append(problems, fmt.Sprintf("message %q, want %q", message, *want.Message))
			}
		}
	} else if want.Message != nil && message != *want.Message {
		problems = append(problems, fmt.Sprintf("message %q, want %q", message, *want.Message))
	}
	if want.MessageContains != nil && !strings.Contains(message, *want.MessageContains) {
		problems = append(problems, fmt.Sprintf("message %q lacks %q", message, *want.MessageContains))
	}
	texts := []string{message, fmt.Sprintf("%+v", te)}
	if want.Status != nil {
		var pe *tn.ProviderError
		if !errors.As(err, &pe) || pe.Status != *want.Status {
			problems = append(problems, fmt.Sprintf("%v, want status %d", err, *want.Status))
		} else {
			texts = append(texts, pe.Body, pe.RetryAfter, pe.Error())
			if want.RetryAfter != nil {
				var ra *string
				_ = json.Unmarshal(*want.RetryAfter, &ra)
				if (ra == nil && pe.RetryAfter != "") || (ra != nil && pe.RetryAfter != *ra) {
					problems = append(problems, fmt.Sprintf("retry after %q, want %s", pe.RetryAfter, *want.RetryAfter))
				}
			}
			if want.Body != nil && pe.Body != *want.Body {
				problems = append(problems, fmt.Sprintf("body %q, want %q", pe.Body, *want.Body))
			}
			if want.BodyContains != nil && !strings.Contains(pe.Body, *want.BodyContains) {
				problems = append(problems, fmt.Sprintf("body %q lacks %q", pe.Body, *want.BodyContains))
			}
		}
	}
	if max := sc.Expect.MaxMessageChars; max != nil && len([]rune(message)) > *max {
		problems = append(problems, fmt.Sprintf("the message is %d chars long", len([]rune(message))))
	}
	for _, secret := range sc.secrets() {
		for _, text := range texts {
			if strings.Contains(text, secret) {
				problems = append(problems, fmt.Sprintf("the error shows the secret %q: %s", secret, text))
				break
			}
		}
	}
	return problems
}

func checkFaultResult(sc *faultScenario, r tn.RunResult) []string {
	var problems []string
	e := sc.Expect
	if r.Status != "done" {
		problems = append(problems, fmt.Sprintf("status %q, want done", r.Status))
	}
	if e.Text != nil && r.Text != *e.Text {
		problems = append(problems, fmt.Sprintf("text %q, want %q", r.Text, *e.Text))
	}
	if e.TextPrefix != nil && !strings.HasPrefix(r.Text, *e.TextPrefix) {
		problems = append(problems, fmt.Sprintf("text %q, want it to start with %q", r.Text, *e.TextPrefix))
	}
	if e.ToolCalls != nil {
		if len(r.ToolCalls) != len(e.ToolCalls) {
			problems = append(problems, fmt.Sprintf("tool calls %+v, want %+v", r.ToolCalls, e.ToolCalls))
		}
		for i := 0; i < len(r.ToolCalls) && i < len(e.ToolCalls); i++ {
			got, want := r.ToolCalls[i], e.ToolCalls[i]
			if got.Name != want.Name || got.IsError != want.IsError || (want.Output != nil && got.Output != *want.Output) {
				problems = append(problems, fmt.Sprintf("tool call %+v, want %+v", got, want))
			}
		}
	}
	return problems
}

// replayFault runs one scenario; it returns what went wrong and how long the runs took.
func replayFault(t *testing.T, sc *faultScenario, server *faultServer) ([]string, time.Duration) {
	prefix := fmt.Sprintf("%s~go-%s", sc.Server, sc.Name)
	port := server.port
	if sc.Server == "refused" {
		port = closedPort(t)
	}
	h := &faultHost{release: make(chan struct{})}
	client, err := tn.NewClient(h.options(sc, fmt.Sprintf("http://127.0.0.1:%d/%s/v1", port, prefix)))
	if err != nil {
		t.Fatal(err)
	}
	var tk *tn.Toolkit
	if sc.Tool != nil {
		tk = toolkit(t, h.tool(sc.Tool))
	}
	runs := max(sc.Runs, 1)
	bound := time.Duration(sc.BoundMs) * time.Millisecond
	var problems []string

	started := time.Now()
	for run := 0; run < runs; run++ {
		if run > 0 {
			time.Sleep(time.Duration(sc.PauseMs) * time.Millisecond)
		}
		fails := sc.Expect.Error != nil && run == runs-1
		// A hang past the bound (and a grace) is reported, never waited out.
		ctx, cancel := context.WithTimeout(context.Background(), bound+5*time.Second)
		r, err := client.Run(ctx, sc.Prompt, tk)
		hung := ctx.Err() != nil
		cancel()
		switch {
		case hung:
			problems = append(problems, fmt.Sprintf("run %d hung past %v", run, bound+5*time.Second))
		case err != nil && fails:
			problems = append(problems, checkFaultError(sc, h, err)...)
		case err != nil:
			problems = append(problems, fmt.Sprintf("run %d failed: %v", run, err))
		case fails:
			problems = append(problems, fmt.Sprintf("run %d succeeded (%q), want an error", run, r.Text))
		default:
			problems = append(problems, checkFaultResult(sc, r)...)
		}
		if hung {
			break
		}
	}
	took := time.Since(started)
	close(h.release)

	if took > bound {
		problems = append(problems, fmt.Sprintf("took %v, bound %v", took, bound))
	}
	if sc.Expect.MinMs != nil && took < time.Duration(*sc.Expect.MinMs)*time.Millisecond {
		problems = append(problems, fmt.Sprintf("took %v, less than %d ms", took, *sc.Expect.MinMs))
	}
	requests, open := server.stats(t, prefix)
	if sc.Expect.Requests != nil && requests != *sc.Expect.Requests {
		problems = append(problems, fmt.Sprintf("the server saw %d requests, want %d", requests, *sc.Expect.Requests))
	}
	// The engine let go of every connection it opened (a timed-out run's included).
	for i := 0; i < 100 && open > 0; i++ {
		time.Sleep(10 * time.Millisecond)
		_, open = server.stats(t, prefix)
	}
	if open > 0 {
		problems = append(problems, fmt.Sprintf("%d connections still open a second after the run", open))
	}
	return problems, took
}

// goroutines counts the goroutines running Go code, and lists them. Not counted: the ones
// standing for the engine's own threads (a C thread that called into Go keeps a goroutine
// with no Go frame but runtime.goexit, parked for its next call).
func goroutines() (int, string) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var live []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		if len(lines) == 3 && strings.HasPrefix(lines[1], "runtime.goexit(") {
			continue
		}
		live = append(live, g)
	}
	return len(live), strings.Join(live, "\n\n")
}

func TestFaults(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(faultsDir(t), "scenarios.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios []faultScenario `json:"scenarios"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	server := startFaultServer(t)
	for i := range doc.Scenarios {
		sc := &doc.Scenarios[i]
		t.Run(sc.Name, func(t *testing.T) {
			if why, ok := sc.Skip["go"]; ok {
				t.Skip(why)
			}
			before, _ := goroutines()
			problems, took := replayFault(t, sc, server)
			// Nothing left running: every goroutine the run (or a host callback) started is gone.
			now, dump := goroutines()
			for deadline := time.Now().Add(2 * time.Second); now > before && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				now, dump = goroutines()
			}
			if now > before {
				problems = append(problems, fmt.Sprintf("%d goroutines left running:\n%s", now-before, dump))
			}
			if len(problems) > 0 {
				t.Errorf("%s (%v):\n  %s", sc.Name, took, strings.Join(problems, "\n  "))
			}
		})
	}
}
