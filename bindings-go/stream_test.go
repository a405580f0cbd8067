package toolnexus_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// sseServer answers each request with the next stream of events; "<wait>" holds the rest
// until gate is closed (5 s at most).
func sseServer(t *testing.T, gate chan struct{}, answers ...[]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		events := answers[0]
		answers = answers[1:]
		w.Header().Set("content-type", "text/event-stream")
		for _, ev := range events {
			if ev == "<wait>" {
				select {
				case <-gate:
				case <-time.After(5 * time.Second):
				}
				continue
			}
			fmt.Fprint(w, ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func textEvents(parts ...string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, fmt.Sprintf(`data: {"choices":[{"delta":{"content":%q}}]}`+"\n\n", p))
	}
	return append(out, `data: {"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}`+"\n\n", "data: [DONE]\n\n")
}

// TestStreamDeltasArriveWhileStreaming: the server holds the rest of its answer until the
// reader has the first delta; then tool calls, a suspension and the result come in order.
func TestStreamDeltasArriveWhileStreaming(t *testing.T) {
	gate := make(chan struct{})
	call := []string{`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"ask","arguments":"{}"}}]}}]}` + "\n\n",
		`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n", "data: [DONE]\n\n"}
	first := append(textEvents("Hel")[:1], append([]string{"<wait>"}, textEvents("lo")...)...)
	url := sseServer(t, gate, first, call, textEvents("ok"))
	c, err := tn.NewClient(tn.ClientOptions{BaseURL: url, Model: "m", APIKey: "k",
		WaitFor: func(r tn.Request) (tn.Answer, error) { return tn.AnswerOutput(r.ID, "x"), nil }})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Stream(testCtx(t), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var kinds []string
	var text string
	for ev := range ch {
		if ev.Type == "text" && text == "" {
			close(gate)
		}
		text += ev.Delta
		kinds = append(kinds, ev.Type)
		if ev.Type == "done" && (ev.Result.Text != "Hello" || ev.Usage.TotalTokens != 3) {
			t.Errorf("done: %+v", ev.Result)
		}
	}
	if strings.Join(kinds, ",") != "text,text,usage,done" || time.Since(start) > 4*time.Second {
		t.Fatalf("events %v after %v", kinds, time.Since(start))
	}
	ask := fn("ask", func(_ map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
		if ctx.Answer == nil {
			return tn.Pending(tn.Request{ID: "q-1", Kind: "question", Prompt: "Which?"}), nil
		}
		return tn.ToolResult{Output: "told"}, nil
	})
	ch, _ = c.Stream(testCtx(t), "go", toolkit(t, ask))
	kinds = nil
	for ev := range ch {
		kinds = append(kinds, ev.Type)
		if ev.Type == "pending" && ev.Request.ID != "q-1" {
			t.Errorf("pending: %+v", ev.Request)
		}
		if ev.Type == "tool_result" && (ev.Output != "told" || ev.ID != "c1") {
			t.Errorf("tool_result: %+v", ev)
		}
	}
	if strings.Join(kinds, ",") != "tool_call,pending,tool_result,text,usage,done" {
		t.Fatalf("events %v", kinds)
	}
}

// TestStreamFailureIsTheLastEvent: a garbled stream ends with an "error" event.
func TestStreamFailureIsTheLastEvent(t *testing.T) {
	url := sseServer(t, nil, []string{"data: {nope\n\n"})
	c, _ := tn.NewClient(tn.ClientOptions{BaseURL: url, Model: "m", APIKey: "k"})
	ch, err := c.Stream(context.Background(), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	var last tn.StreamEvent
	for ev := range ch {
		last = ev
	}
	var e *tn.Error
	if last.Type != "error" || !errors.As(last.Err, &e) || e.Kind != tn.KindProtocol {
		t.Fatalf("last: %+v", last)
	}
}
