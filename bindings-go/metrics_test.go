package toolnexus_test

import (
	"strings"
	"sync"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// TestOnMetricSeesEveryEventInOrder: llm, the suspension (Pending, never IsError), the re-run,
// llm, and the run last; Metrics renders them as Prometheus text.
func TestOnMetricSeesEveryEventInOrder(t *testing.T) {
	mock := newMock(t)
	mock.script(callReply("c1:ask"), textReply("done"))
	var mu sync.Mutex
	var events []tn.MetricEvent
	c := openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.OnMetric = func(ev tn.MetricEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev)
		}
		o.WaitFor = func(r tn.Request) (tn.Answer, error) { return tn.AnswerOutput(r.ID, "blue"), nil }
	})
	if before := c.Metrics(); !strings.HasPrefix(before, "# HELP toolnexus_llm_requests_total ") || strings.Contains(before, "\ntoolnexus_") {
		t.Fatalf("before a run: %q", before)
	}
	ask := fn("ask", func(_ map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
		if ctx.Answer == nil {
			return tn.Pending(tn.Request{Kind: "question", Prompt: "Which?"}), nil
		}
		return tn.ToolResult{Output: "told " + ctx.Answer.Data["output"].(string)}, nil
	})
	r, err := c.Run(testCtx(t), "go", toolkit(t, ask))
	if err != nil || r.Text != "done" {
		t.Fatalf("run: %v %+v", err, r)
	}
	mu.Lock()
	defer mu.Unlock()
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Event)
	}
	if strings.Join(kinds, ",") != "llm,tool,tool,llm,run" {
		t.Fatalf("events: %v", kinds)
	}
	if e := events[1]; !e.Pending || e.IsError || e.Tool != "ask" || e.Source != "native" {
		t.Errorf("the suspension: %+v", e)
	}
	if e := events[0]; e.Status != "ok" || e.PromptTokens != 3 || e.CompletionTokens != 2 || e.Model != "mock-model" {
		t.Errorf("the llm event: %+v", e)
	}
	if e := events[4]; e.Turns != 2 || e.ToolCalls != 1 || e.TotalTokens != 10 || e.Error != "" {
		t.Errorf("the run event: %+v", e)
	}
	text := c.Metrics()
	for _, want := range []string{
		"toolnexus_llm_requests_total{model=\"mock-model\",status=\"ok\"} 2\n",
		"toolnexus_tool_calls_total{tool=\"ask\",source=\"native\",is_error=\"false\",pending=\"true\"} 1\n",
		"toolnexus_tool_duration_seconds_count{tool=\"ask\"} 2\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
}

// TestAFailedRunIsCountedAndAPanickingSinkIsNot: the error reaches the run event without
// the key; a sink that panics does not end the run.
func TestAFailedRunIsCountedAndAPanickingSinkIsNot(t *testing.T) {
	mock := newMock(t)
	mock.script(statusReply(401, nil, `{"error":"bad key test-key"}`))
	var runErr string
	c := openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.OnMetric = func(ev tn.MetricEvent) {
			if ev.Event == "run" {
				runErr = ev.Error
			}
		}
	})
	if _, err := c.Run(testCtx(t), "hi", nil); err == nil {
		t.Fatal("the run must fail")
	}
	if runErr == "" || strings.Contains(runErr, "test-key") {
		t.Errorf("run event error: %q", runErr)
	}
	if !strings.Contains(c.Metrics(), "toolnexus_run_errors_total{model=\"mock-model\"} 1\n") {
		t.Errorf("metrics: %s", c.Metrics())
	}
	mock.script(textReply("fine"))
	p := openaiClient(t, mock, func(o *tn.ClientOptions) { o.OnMetric = func(tn.MetricEvent) { panic("sink down") } })
	if r, err := p.Run(testCtx(t), "hi", nil); err != nil || r.Text != "fine" {
		t.Fatalf("a panicking sink ended the run: %v", err)
	}
}
