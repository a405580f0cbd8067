package toolnexus_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// TestInProcessRunHaltsAndResumes: the model sees the assembled request, asks for a tool that
// suspends, and the run resumes from JSON to the model's final answer.
func TestInProcessRunHaltsAndResumes(t *testing.T) {
	var seen []tn.InProcessRequest
	c := tn.CreateInProcessClient(tn.InProcessOptions{
		Model: "local", SystemPrompt: "Terse.",
		Generate: func(req tn.InProcessRequest) (tn.InProcessResponse, error) {
			seen = append(seen, req)
			if len(seen) == 1 {
				return tn.InProcessResponse{ToolCalls: []tn.InProcessToolCall{{Name: "ask", Arguments: map[string]any{}}},
					Usage: &tn.InProcessUsage{PromptTokens: 2, CompletionTokens: 1}}, nil
			}
			last := req.Messages[len(req.Messages)-1].(map[string]any)
			return tn.InProcessResponse{Content: "done: " + last["content"].(string)}, nil
		},
	})
	ask := fn("ask", func(_ map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
		if ctx.Answer == nil {
			return tn.Pending(tn.Request{ID: "q-1", Kind: "question", Prompt: "Which?"}), nil
		}
		return tn.ToolResult{Output: "told " + ctx.Answer.Data["output"].(string)}, nil
	})
	tk := toolkit(t, ask)
	halted, err := c.Run(testCtx(t), "pick", tk)
	if err != nil || halted.Status != "pending" || halted.Usage.TotalTokens != 3 {
		t.Fatalf("halt: %v %+v", err, halted)
	}
	raw, _ := json.Marshal(halted.Messages)
	var messages []any
	_ = json.Unmarshal(raw, &messages)
	done, err := c.RunWithAnswer(testCtx(t), tk, messages, *halted.Pending, tn.AnswerOutput("q-1", "red"))
	if err != nil || done.Text != "done: told red" {
		t.Fatalf("resume: %v %+v", err, done)
	}
	first := seen[0]
	if first.Model != "local" || first.Body["model"] != "local" || len(first.Tools) != 1 {
		t.Errorf("request: %+v", first)
	}
	if m := first.Messages[0].(map[string]any); m["role"] != "system" || m["content"] != "Terse." {
		t.Errorf("system message: %v", m)
	}
}

// TestInProcessRawArguments: pre-encoded arguments as []byte reach the tool as JSON.
func TestInProcessRawArguments(t *testing.T) {
	n := 0
	c := tn.CreateInProcessClient(tn.InProcessOptions{Model: "m", Generate: func(tn.InProcessRequest) (tn.InProcessResponse, error) {
		n++
		if n == 1 {
			return tn.InProcessResponse{ToolCalls: []tn.InProcessToolCall{{Name: "echo", Arguments: []byte(`{"a":1}`)}}}, nil
		}
		return tn.InProcessResponse{Content: "done"}, nil
	}})
	var got map[string]any
	echo := fn("echo", func(args map[string]any, _ *tn.ToolContext) (tn.ToolResult, error) {
		got = args
		return tn.ToolResult{Output: "ok"}, nil
	})
	if _, err := c.Run(testCtx(t), "go", toolkit(t, echo)); err != nil || got["a"] != float64(1) {
		t.Fatalf("%v %v", err, got)
	}
}

// TestInProcessFailuresAndRefusals: an error from Generate ends the run once; OnError and a
// missing Generate are refused.
func TestInProcessFailuresAndRefusals(t *testing.T) {
	var calls atomic.Int32
	c := tn.CreateInProcessClient(tn.InProcessOptions{Model: "m", Generate: func(tn.InProcessRequest) (tn.InProcessResponse, error) {
		calls.Add(1)
		return tn.InProcessResponse{}, errors.New("my model blew up")
	}})
	_, err := c.Run(testCtx(t), "hi", nil)
	var e *tn.Error
	if !errors.As(err, &e) || e.Kind != tn.KindHost || !strings.Contains(err.Error(), "my model blew up") || calls.Load() != 1 {
		t.Fatalf("failure: %v (calls %d)", err, calls.Load())
	}
	for name, o := range map[string]tn.InProcessOptions{
		"Generate":           {Model: "m"},
		"nothing is retried": {Model: "m", Generate: func(tn.InProcessRequest) (tn.InProcessResponse, error) { return tn.InProcessResponse{}, nil }, OnError: func(tn.ErrorInfo) tn.Tier { return tn.TierFail }},
	} {
		if _, err := tn.CreateInProcessClient(o).Run(testCtx(t), "hi", nil); !errors.As(err, &e) || e.Kind != tn.KindInvalidArgument || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
