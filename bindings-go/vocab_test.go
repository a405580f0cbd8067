package toolnexus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAnswersHaveThePinnedWireShapes(t *testing.T) {
	for _, c := range []struct {
		got  tn.Answer
		want string
	}{
		{tn.AnswerOutput("p", "yes"), `{"id":"p","ok":true,"data":{"output":"yes"}}`},
		{tn.AnswerDeclined("p", ""), `{"id":"p","ok":false,"reason":"declined"}`},
		{tn.AnswerDeclined("p", "not today"), `{"id":"p","ok":false,"reason":"not today"}`},
		{tn.RelayAnswer("r", []tn.RelayResult{{ID: "c1", Output: "done"}}),
			`{"id":"r","ok":true,"data":{"results":[{"id":"c1","isError":false,"output":"done"}]}}`},
	} {
		if got := jsonOf(t, c.got); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
	req := tn.Request{ID: "p", Kind: "approval", Prompt: "ok?", ExpiresAt: "2030-01-01T00:00:00Z"}
	if got := jsonOf(t, req); got != `{"id":"p","kind":"approval","prompt":"ok?","expiresAt":"2030-01-01T00:00:00Z"}` {
		t.Errorf("Request: %s", got)
	}
}

func TestPendingIsBuiltByTheEngine(t *testing.T) {
	r := tn.Pending(tn.Request{Kind: "authorization", Prompt: "Log in", URL: "https://x/login"})
	req := tn.PendingOf(r)
	if !r.IsError || r.Output != "Log in\nhttps://x/login" || req == nil || !strings.HasPrefix(req.ID, "pnd-") {
		t.Fatalf("got %+v / %+v", r, req)
	}
	other := tn.PendingOf(tn.Pending(tn.Request{Kind: "k", Prompt: "p"}))
	if other.ID == req.ID {
		t.Fatal("generated ids must differ")
	}
	if kept := tn.PendingOf(tn.Pending(tn.Request{ID: "mine", Kind: "k", Prompt: "p"})); kept.ID != "mine" {
		t.Fatalf("explicit id lost: %+v", kept)
	}
	auth := tn.PendingOf(tn.AuthRequired("https://a", ""))
	if auth.Kind != "authorization" || auth.Prompt != "Authorization required to continue" || auth.URL != "https://a" {
		t.Fatalf("AuthRequired: %+v", auth)
	}
	// The JSON form, as RunResult.ToolCalls carries metadata.
	var decoded tn.ToolResult
	if err := json.Unmarshal([]byte(jsonOf(t, r)), &decoded); err != nil {
		t.Fatal(err)
	}
	if p := tn.PendingOf(decoded); p == nil || p.ID != req.ID || p.URL != "https://x/login" {
		t.Fatalf("PendingOf(json form) = %+v", p)
	}
	if tn.PendingOf(tn.ToolResult{Output: "x"}) != nil ||
		tn.PendingOf(tn.ToolResult{Metadata: map[string]any{"pending": map[string]any{"id": "p"}}}) != nil {
		t.Fatal("not a suspension")
	}
}

func TestRelayHelpers(t *testing.T) {
	if tn.IsRelayRequest(nil) || tn.IsRelayRequest(&tn.Request{Kind: "approval"}) || tn.RelayCallsOf(&tn.Request{Kind: "approval"}) != nil {
		t.Fatal("not a relay request")
	}
	tool := tn.RelayTool("refund", "Refund.", nil)
	if tool.Source != tn.SourceRelay || jsonOf(t, tool.InputSchema) != `{"properties":{},"type":"object"}` {
		t.Fatalf("RelayTool: %+v", tool)
	}
}

func TestSanitizeMatchesTheEngine(t *testing.T) {
	for in, want := range map[string]string{"my tool!é": "my_tool__", "ok-name_1": "ok-name_1", "a\xffb": "a_b", "a\xff\xfeb": "a__b", "a\x00b": "a_b", "": ""} {
		if got := tn.Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false, ExtraTools: []tn.Tool{text("bad\xff\xfename", "x")}}); err != nil {
		t.Fatalf("a name with invalid bytes: %v", err)
	}
	mock := newMock(t)
	tk := toolkit(t, text("my tool!", "sanitized ok"), text("my_tool_", "a duplicate once sanitized"))
	if n := len(tk.Tools()); n != 1 {
		t.Fatalf("the duplicate must be dropped: %d tools", n)
	}
	decl := tk.ToOpenAI()[0].(map[string]any)["function"].(map[string]any)
	if decl["name"] != "my_tool_" {
		t.Fatalf("declared %v", decl)
	}
	mock.script(callReply("c1:my_tool_"), textReply("done"))
	res, err := openaiClient(t, mock, nil).Run(testCtx(t), "go", tk)
	if err != nil || res.ToolCalls[0].Output != "sanitized ok" {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestDeclarationsComeFromTheEngine(t *testing.T) {
	tk := toolkit(t, text("add", "2"), tn.RelayTool("refund", "Refund.", nil))
	if got := jsonOf(t, tk.ToAnthropic()); got != `[{"description":"add.","input_schema":{"type":"object"},"name":"add"},`+
		`{"description":"Refund.","input_schema":{"properties":{},"type":"object"},"name":"refund"}]` {
		t.Errorf("anthropic: %s", got)
	}
	if got := tk.ToGemini(); len(got) != 1 {
		t.Errorf("gemini: %v", got)
	}
	if _, ok := tk.Get("add"); !ok {
		t.Error("Get(add)")
	}
	bare := toolkit(t, tn.Tool{Name: "a b", InputSchema: tn.JSONSchema{}, Execute: text("x", "x").Execute}, tn.Tool{Name: "c", Execute: text("x", "x").Execute})
	if got := jsonOf(t, bare.ToAnthropic()); got != `[{"description":"","input_schema":{},"name":"a_b"},`+
		`{"description":"","input_schema":{"properties":{},"type":"object"},"name":"c"}]` {
		t.Errorf("an empty schema is sent as written, a nil one is the empty object schema: %s", got)
	}
	if _, ok := bare.Get("a b"); !ok {
		t.Error(`Get("a b")`)
	}
	var none *tn.Toolkit
	if none.Tools() != nil || len(none.ToOpenAI()) != 0 {
		t.Error("a nil toolkit has no tools")
	}
}

func TestAnEmptyToolkitRuns(t *testing.T) {
	tk, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false})
	if err != nil {
		t.Fatal(err)
	}
	mock := newMock(t)
	mock.script(textReply("hi"))
	res, err := openaiClient(t, mock, nil).Run(testCtx(t), "hello", tk)
	if err != nil || res.Text != "hi" {
		t.Fatalf("got %+v, %v", res, err)
	}
	if _, sent := mock.seen()[0].Body.(map[string]any)["tools"]; sent {
		t.Fatal("no tools key without tools")
	}
}

func TestToolkitExecuteRunsThroughTheEngine(t *testing.T) {
	type key struct{}
	probe := fn("probe", func(args map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
		if _, ok := ctx.Ctx.Deadline(); ok && (ctx.Timeout <= 0 || ctx.Timeout > 60000) {
			return tn.ToolResult{}, fmt.Errorf("timeout %d", ctx.Timeout)
		}
		return tn.ToolResult{Output: ctx.Ctx.Value(key{}).(string) + jsonOf(t, args)}, nil
	})
	boom := fn("boom", func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) { panic("bang") })
	tk := toolkit(t, probe, boom, tn.RelayTool("refund", "Refund.", nil))
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "ctx:"), time.Minute)
	defer cancel()
	for name, want := range map[string]tn.ToolResult{
		"probe":   {Output: `ctx:{"a":1}`},
		"boom":    {Output: "tool boom panicked: bang", IsError: true},
		"refund":  {Output: "relay tool refund is executed by the host, not the toolkit", IsError: true},
		"missing": {Output: "Unknown tool: missing", IsError: true},
	} {
		got, err := tk.Execute(ctx, name, map[string]any{"a": 1})
		if err != nil || got.Output != want.Output || got.IsError != want.IsError {
			t.Errorf("%s: got %+v, %v", name, got, err)
		}
	}
}
