package toolnexus_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func TestToolPanicBecomesAnErrorResult(t *testing.T) {
	mock := newMock(t)
	explode := fn("explode", func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		panic("boom")
	})
	mock.script(callReply("c1:explode", "c2:fine"), textReply("recovered"))
	res, err := openaiClient(t, mock, nil).Run(testCtx(t), "go", toolkit(t, explode, text("fine", "ok")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "done" || res.Text != "recovered" {
		t.Fatalf("the run must go on: %+v", res)
	}
	got := res.ToolCalls[0]
	if !got.IsError || got.Output != "tool explode panicked: boom" {
		t.Fatalf("the panicking tool's result: %+v", got)
	}
	if res.ToolCalls[1].Output != "ok" || res.ToolCalls[1].IsError {
		t.Fatalf("the other tool: %+v", res.ToolCalls[1])
	}
	tools := toolMessages(mock.seen()[1].Body)
	if tools[0]["content"] != "tool explode panicked: boom" {
		t.Fatalf("the model saw %v", tools)
	}
}

func TestToolErrorBecomesAnErrorResult(t *testing.T) {
	mock := newMock(t)
	failing := fn("db", func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		return tn.ToolResult{}, errors.New("connection refused")
	})
	mock.script(callReply("c1:db"), textReply("db is down"))
	res, err := openaiClient(t, mock, nil).Run(testCtx(t), "query", toolkit(t, failing))
	if err != nil {
		t.Fatal(err)
	}
	if c := res.ToolCalls[0]; !c.IsError || c.Output != "connection refused" {
		t.Fatalf("got %+v", c)
	}
}

// hostFailure runs one tool call with client options edited by edit and returns the error.
func hostFailure(t *testing.T, edit func(*tn.ClientOptions)) error {
	t.Helper()
	mock := newMock(t)
	mock.script(callReply("c1:deploy"), textReply("unreachable"))
	_, err := openaiClient(t, mock, edit).Run(testCtx(t), "ship", toolkit(t, (&deployTool{}).tool()))
	return err
}

func hostKind(t *testing.T, err error, needle string) {
	t.Helper()
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindHost || !strings.Contains(te.Message, needle) {
		t.Fatalf("want a host error containing %q, got %v", needle, err)
	}
}

func TestWaitForPanicEndsTheRunAsAHostError(t *testing.T) {
	err := hostFailure(t, func(o *tn.ClientOptions) {
		o.WaitFor = func(tn.Request) (tn.Answer, error) { panic("no human today") }
	})
	hostKind(t, err, "WaitFor panicked: no human today")
}

func TestWaitForErrorUnwrapsToTheHostsError(t *testing.T) {
	sentinel := errors.New("approval service down")
	err := hostFailure(t, func(o *tn.ClientOptions) {
		o.WaitFor = func(tn.Request) (tn.Answer, error) { return tn.Answer{}, sentinel }
	})
	hostKind(t, err, "approval service down")
	if !errors.Is(err, sentinel) {
		t.Fatalf("%v does not unwrap to the WaitFor's error", err)
	}
}

func TestHookPanicEndsTheRunAsAHostError(t *testing.T) {
	err := hostFailure(t, func(o *tn.ClientOptions) {
		o.Hooks = &tn.Hooks{AfterLLM: func(context.Context, tn.AfterLLMEvent) error { panic("hook bug") }}
	})
	hostKind(t, err, "hook after_llm panicked: hook bug")
}
