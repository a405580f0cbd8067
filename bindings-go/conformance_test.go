package toolnexus_test

// Replays every scenario in tests/conformance/ (format: tests/conformance/README.md) with Go
// tools, a Go WaitFor and a loopback mock model, twice: the engine's own HTTP client talking
// to the mock, and ClientOptions.HTTPClient (Go's net/http) talking to it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

const scenarioDir = "../tests/conformance"

type scenario struct {
	Name   string `json:"name"`
	Style  string `json:"style"`
	Client struct {
		Model         string         `json:"model"`
		APIKey        string         `json:"api_key"`
		SystemPrompt  string         `json:"system_prompt"`
		MaxTurns      int            `json:"max_turns"`
		Retries       int            `json:"retries"`
		RetryBaseMs   *int           `json:"retry_base_ms"`
		TimeoutMs     int            `json:"timeout_ms"`
		RequestParams map[string]any `json:"request_params"`
	} `json:"client"`
	Tools      []scenarioTool        `json:"tools"`
	Sources    *scenarioSources      `json:"sources"`
	WaitFor    *[]json.RawMessage    `json:"wait_for"`
	BeforeTool map[string]tn.Request `json:"before_tool"`
	BeforeLLM  *struct {
		Fail string `json:"fail"`
	} `json:"before_llm"`
	OnError tn.Tier        `json:"on_error"`
	Steps   []scenarioStep `json:"steps"`
}

// scenarioSources is the scenario's `sources`: the tool-source options of CreateToolkit.
type scenarioSources struct {
	Skills           []tn.SkillDef   `json:"skills"`
	SkillsFilter     map[string]bool `json:"skills_filter"`
	SkillSampleLimit int             `json:"skill_sample_limit"`
	DisableSkills    []string        `json:"disable_skills"`
	Builtins         any             `json:"builtins"` // absent: nil, the engine's default
	DisableTools     []string        `json:"disable_tools"`
}

type scenarioTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
	Behavior    struct {
		Type     string     `json:"type"`
		Output   string     `json:"output"`
		Message  string     `json:"message"`
		Request  tn.Request `json:"request"`
		OnAnswer string     `json:"on_answer"`
		Always   bool       `json:"always"`
		DelayMs  int        `json:"delay_ms"`
	} `json:"behavior"`
}

type scenarioStep struct {
	Run *struct {
		Prompt  string `json:"prompt"`
		History []any  `json:"history"`
	} `json:"run"`
	Resume *struct {
		Answer  tn.Answer   `json:"answer"`
		History *[]any      `json:"history"`
		Pending *tn.Request `json:"pending"`
	} `json:"resume"`
	Replies []mockReply `json:"replies"`
	Expect  struct {
		Requests []struct {
			Path    string            `json:"path"`
			Headers map[string]string `json:"headers"`
			Body    any               `json:"body"`
		} `json:"requests"`
		Result          json.RawMessage   `json:"result"`
		Error           json.RawMessage   `json:"error"`
		Calls           map[string]int    `json:"calls"`
		WaitForRequests []json.RawMessage `json:"wait_for_requests"`
		OnErrorCalls    []json.RawMessage `json:"on_error_calls"`
		Metrics         []string          `json:"metrics"`
	} `json:"expect"`
}

func loadScenarios(t *testing.T) []scenario {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s: %v", scenarioDir, err)
	}
	sort.Strings(files)
	var out []scenario
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var sc scenario
		if err := json.Unmarshal(raw, &sc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".json"); sc.Name != want {
			t.Fatalf("%s: name %q", f, sc.Name)
		}
		out = append(out, sc)
	}
	return out
}

func TestConformance(t *testing.T) {
	scenarios := loadScenarios(t)
	if len(scenarios) < 28 {
		t.Fatalf("expected at least 28 scenarios, found %d", len(scenarios))
	}
	for _, transport := range []string{"engine-http", "go-http"} {
		t.Run(transport, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.Name, func(t *testing.T) {
					t.Parallel()
					replay(t, sc, transport == "go-http")
				})
			}
		})
	}
}

// scenarioState is what the Go tools and WaitFor of one scenario share.
type scenarioState struct {
	mu           sync.Mutex
	calls        map[string]int
	answers      []json.RawMessage
	waitRequests []any
	errorCalls   []any // what OnError was told
}

// onError records what ClientOptions.OnError is told and answers the scenario's tier.
func (s *scenarioState) onError(tier tn.Tier) func(tn.ErrorInfo) tn.Tier {
	return func(info tn.ErrorInfo) tn.Tier {
		s.mu.Lock()
		defer s.mu.Unlock()
		call := map[string]any{"attempt": info.Attempt, "retryable": info.Retryable}
		if info.Status != 0 {
			call["status"] = info.Status
		}
		s.errorCalls = append(s.errorCalls, call)
		return tier
	}
}

func (s *scenarioState) count(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[name]++
}

// waitFor answers with the entry `for` the Request's id, else the next entry without one:
// null is "no answer" (the zero Answer), otherwise the entry with the Request's id copied in.
func (s *scenarioState) waitFor(req tn.Request) (tn.Answer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waitRequests = append(s.waitRequests, roundTrip(req))
	at := -1
	for i, a := range s.answers {
		var named struct {
			For *string `json:"for"`
		}
		_ = json.Unmarshal(a, &named)
		if named.For != nil && *named.For == req.ID {
			at = i
			break
		}
		if at < 0 && named.For == nil {
			at = i
		}
	}
	if at < 0 {
		return tn.Answer{}, nil
	}
	next := s.answers[at]
	s.answers = append(s.answers[:at:at], s.answers[at+1:]...)
	if string(next) == "null" {
		return tn.Answer{}, nil
	}
	var a tn.Answer
	if err := json.Unmarshal(next, &a); err != nil {
		return tn.Answer{}, err
	}
	a.ID = req.ID
	return a, nil
}

// goTool is a scenario tool written in Go.
func goTool(st scenarioTool, state *scenarioState) tn.Tool {
	b := st.Behavior
	if b.Type == "relay" {
		return tn.RelayTool(st.Name, st.Description, st.InputSchema)
	}
	return tn.Tool{
		Name: st.Name, Description: st.Description, InputSchema: st.InputSchema, Source: tn.SourceNative,
		Execute: func(args map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
			state.count(st.Name)
			if b.DelayMs > 0 {
				time.Sleep(time.Duration(b.DelayMs) * time.Millisecond)
			}
			switch b.Type {
			case "text":
				return tn.ToolResult{Output: b.Output}, nil
			case "error_result":
				return tn.ToolResult{Output: b.Output, IsError: true}, nil
			case "fail":
				return tn.ToolResult{}, errors.New(b.Message)
			case "suspend":
				if ctx.Answer == nil || b.Always {
					return tn.Pending(b.Request), nil
				}
				out, _ := ctx.Answer.Data["output"].(string)
				return tn.ToolResult{Output: strings.ReplaceAll(b.OnAnswer, "{output}", out)}, nil
			}
			return tn.ToolResult{}, fmt.Errorf("unknown behaviour %q", b.Type)
		},
	}
}

func replay(t *testing.T, sc scenario, goHTTP bool) {
	mock := newMock(t)
	state := &scenarioState{}
	opts := tn.ClientOptions{
		Style: tn.ClientStyle(sc.Style), Model: sc.Client.Model, APIKey: sc.Client.APIKey,
		SystemPrompt: sc.Client.SystemPrompt, MaxTurns: sc.Client.MaxTurns, Retries: sc.Client.Retries,
		RetryBaseMs: 1, TimeoutMs: sc.Client.TimeoutMs,
	}
	if opts.APIKey == "" {
		opts.APIKey = "test-key"
	}
	if sc.Client.RetryBaseMs != nil {
		opts.RetryBaseMs = *sc.Client.RetryBaseMs
	}
	opts.BaseURL = mock.openaiURL()
	if sc.Style == "anthropic" {
		opts.BaseURL = mock.anthropicURL()
	}
	if goHTTP {
		opts.HTTPClient = &http.Client{}
	}
	if sc.WaitFor != nil {
		state.answers = append([]json.RawMessage(nil), (*sc.WaitFor)...)
		opts.WaitFor = state.waitFor
	}
	opts.RequestParams = sc.Client.RequestParams
	if sc.OnError != "" {
		opts.OnError = state.onError(sc.OnError)
	}
	opts.Hooks = scenarioHooks(sc)
	var tk *tn.Toolkit
	if sc.Tools != nil || sc.Sources != nil {
		var tools []tn.Tool
		for _, st := range sc.Tools {
			tools = append(tools, goTool(st, state))
		}
		// With sources the toolkit is built from them; else it is the file's tools alone.
		o := tn.Options{Builtins: false, ExtraTools: tools}
		if src := sc.Sources; src != nil {
			o = tn.Options{Skills: src.Skills, SkillsFilter: src.SkillsFilter, SkillSampleLimit: src.SkillSampleLimit,
				DisableSkills: src.DisableSkills, Builtins: src.Builtins, DisableTools: src.DisableTools, ExtraTools: tools}
		}
		var err error
		tk, err = tn.CreateToolkit(context.Background(), o)
		if err != nil {
			t.Fatalf("toolkit: %v", err)
		}
		defer tk.Close()
	}
	client, err := tn.NewClient(opts)
	if err != nil {
		t.Fatalf("client: %v", err)
	}

	var prev *tn.RunResult
	for i, step := range sc.Steps {
		mock.script(step.Replies...)
		state.mu.Lock()
		// Empty, not nil: a step in which the resolver is never asked expects [] (not null).
		state.calls, state.waitRequests, state.errorCalls = map[string]int{}, []any{}, []any{}
		state.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var res tn.RunResult
		var err error
		if step.Run != nil {
			res, err = client.RunWithHistory(ctx, step.Run.Prompt, tk, step.Run.History)
		} else {
			// The previous step's transcript and Request, unless the step gives its own.
			var history []any
			var pending tn.Request
			if prev != nil {
				history = prev.Messages
				if prev.Pending != nil {
					pending = *prev.Pending
				}
			}
			if step.Resume.History != nil {
				history = *step.Resume.History
			}
			if step.Resume.Pending != nil {
				pending = *step.Resume.Pending
			}
			res, err = client.RunWithAnswer(ctx, tk, history, pending, step.Resume.Answer)
		}
		cancel()
		where := fmt.Sprintf("step %d", i)
		checkRequests(t, where, step, mock.seen())
		prev = nil
		if err == nil {
			prev = &res
			same(t, where, "result", decode(step.Expect.Result), canonical(res))
		} else {
			same(t, where, "error", decode(step.Expect.Error), errorShape(err))
		}
		calls := map[string]int{}
		if step.Expect.Calls != nil {
			calls = step.Expect.Calls
		}
		state.mu.Lock()
		same(t, where, "calls", roundTrip(calls), roundTrip(state.calls))
		if sc.WaitFor != nil {
			same(t, where, "wait_for_requests", asSet(roundTrip(step.Expect.WaitForRequests)), asSet(roundTrip(state.waitRequests)))
		}
		if sc.OnError != "" {
			same(t, where, "on_error_calls", roundTrip(step.Expect.OnErrorCalls), roundTrip(state.errorCalls))
		}
		state.mu.Unlock()
		if step.Expect.Metrics != nil {
			same(t, where, "metrics", step.Expect.Metrics, maskedMetrics(client.Metrics()))
		}
		if n := mock.unused(); n != 0 {
			t.Errorf("%s: %d scripted replies were never requested", where, n)
		}
	}
}

// scenarioHooks is the scenario's hooks, or nil: BeforeTool answers a gated tool with its
// Request's suspension (see the format's before_tool), BeforeLLM fails with its message.
func scenarioHooks(sc scenario) *tn.Hooks {
	if sc.BeforeTool == nil && sc.BeforeLLM == nil {
		return nil
	}
	h := &tn.Hooks{}
	if sc.BeforeTool != nil {
		h.BeforeTool = func(_ context.Context, ev tn.BeforeToolEvent) (*tn.ToolOverride, error) {
			req, gated := sc.BeforeTool[ev.Name]
			if !gated {
				return nil, nil
			}
			r := tn.Pending(req)
			return &tn.ToolOverride{Result: &r}, nil
		}
	}
	if sc.BeforeLLM != nil {
		h.BeforeLLM = func(context.Context, tn.BeforeLLMEvent) (*tn.LLMOverride, error) {
			return nil, errors.New(sc.BeforeLLM.Fail)
		}
	}
	return h
}

// checkRequests compares the requests the mock received with the expected ones: path, the
// listed headers, and the body exactly.
func checkRequests(t *testing.T, where string, step scenarioStep, got []seenRequest) {
	t.Helper()
	want := step.Expect.Requests
	if len(got) != len(want) {
		t.Errorf("%s: %d requests, want %d", where, len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i].Path != want[i].Path {
			t.Errorf("%s request %d: path %q, want %q", where, i, got[i].Path, want[i].Path)
		}
		for name, value := range want[i].Headers {
			if got[i].Headers[name] != value {
				t.Errorf("%s request %d: header %s = %q, want %q", where, i, name, got[i].Headers[name], value)
			}
		}
		same(t, fmt.Sprintf("%s request %d", where, i), "body", roundTrip(want[i].Body), roundTrip(got[i].Body))
	}
}

// canonical is a RunResult in the scenarios' snake_case form.
func canonical(r tn.RunResult) any {
	calls := make([]any, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		var meta any
		if c.Metadata != nil {
			meta = c.Metadata
		}
		calls[i] = map[string]any{"name": c.Name, "args": c.Args, "output": c.Output, "is_error": c.IsError, "metadata": meta}
	}
	m := map[string]any{
		"text": r.Text, "messages": r.Messages, "tool_calls": calls, "tool_call_count": r.ToolCallCount,
		"turns": r.Turns, "model": r.Model, "status": r.Status,
		"usage": map[string]any{"prompt_tokens": r.Usage.PromptTokens, "completion_tokens": r.Usage.CompletionTokens,
			"total_tokens": r.Usage.TotalTokens},
	}
	if r.Limit != "" {
		m["limit"] = r.Limit
	}
	if r.Pending != nil {
		m["pending"] = r.Pending
	}
	return roundTrip(m)
}

// errorShape is an error in the scenarios' form: {kind, status?}.
func errorShape(err error) any {
	var te *tn.Error
	if !errors.As(err, &te) {
		return map[string]any{"kind": "not a *toolnexus.Error: " + err.Error()}
	}
	m := map[string]any{"kind": string(te.Kind)}
	var pe *tn.ProviderError
	if errors.As(err, &pe) {
		m["status"] = pe.Status
	}
	return roundTrip(m)
}

// roundTrip is v as generic JSON (so values compare the way JSON does).
// asSet orders a list by each entry's compact JSON: one turn's suspensions are waited for
// concurrently, so the order the resolver saw them in is not the rule.
func asSet(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	keyed := make([]string, len(list))
	for i, e := range list {
		b, _ := json.Marshal(e)
		keyed[i] = string(b)
	}
	idx := make([]int, len(list))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return keyed[idx[a]] < keyed[idx[b]] })
	out := make([]any, len(list))
	for i, j := range idx {
		out[i] = list[j]
	}
	return out
}

func roundTrip(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable: %v", err)
	}
	return decode(raw)
}

func decode(raw []byte) any {
	var out any
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Sprintf("undecodable: %v", err)
	}
	return out
}

// maskedMetrics is the Prometheus text as lines, each duration sample's value (`_bucket`,
// `_sum`) made `*`: how long a call took is the one thing a replay cannot fix.
func maskedMetrics(text string) []string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, line := range lines {
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		if !strings.HasPrefix(line, "#") && (strings.HasSuffix(name, "_seconds_bucket") || strings.HasSuffix(name, "_seconds_sum")) {
			lines[i] = line[:strings.LastIndex(line, " ")] + " *"
		}
	}
	return lines
}

func same(t *testing.T, where, what string, want, got any) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	w, _ := json.MarshalIndent(want, "", "  ")
	g, _ := json.MarshalIndent(got, "", "  ")
	t.Errorf("%s: %s differs\n--- expected\n%s\n--- got\n%s", where, what, w, g)
}
