package toolnexus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// TestTranslateAnthropicComesBackOpenAIShaped: one call, the toolkit declared first and never
// run, tool_use blocks back as OpenAI calls with string arguments.
func TestTranslateAnthropicComesBackOpenAIShaped(t *testing.T) {
	mock := newMock(t)
	reply, _ := json.Marshal(map[string]any{
		"content": []any{
			map[string]any{"type": "tool_use", "id": "t1", "name": "add", "input": map[string]any{"a": 1}},
			map[string]any{"type": "tool_use", "id": "t2", "name": "get_weather", "input": map[string]any{"city": "X"}},
		},
		"stop_reason": "tool_use", "usage": map[string]any{"input_tokens": 4, "output_tokens": 2},
	})
	mock.script(mockReply{Body: reply})
	ran := 0
	add := fn("add", func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		ran++
		return tn.ToolResult{Output: "2"}, nil
	})
	c, err := tn.NewClient(tn.ClientOptions{BaseURL: mock.anthropicURL(), Style: tn.StyleAnthropic, Model: "m", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	weather := []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": map[string]any{"type": "object"}}}}
	r, err := c.Translate(testCtx(t), tn.TranslateRequest{
		Messages: []any{map[string]any{"role": "system", "content": "Brief."}, map[string]any{"role": "user", "content": "go"}},
		Tools:    weather, Toolkit: toolkit(t, add), ToolChoice: "required", MaxTokens: 64,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.FinishReason != "tool_calls" || len(r.ToolCalls) != 2 || r.ToolCalls[0] != (tn.TranslatedToolCall{ID: "t1", Name: "add", Arguments: `{"a":1}`}) {
		t.Fatalf("result: %+v", r)
	}
	if r.Usage.TotalTokens != 6 || r.Raw["stop_reason"] != "tool_use" || ran != 0 {
		t.Errorf("usage %+v, raw %v, ran %d", r.Usage, r.Raw, ran)
	}
	seen := mock.seen()
	if len(seen) != 1 {
		t.Fatalf("%d requests", len(seen))
	}
	body := seen[0].Body.(map[string]any)
	tools := body["tools"].([]any)
	if body["system"] != "Brief." || body["max_tokens"] != float64(64) || tools[0].(map[string]any)["name"] != "add" {
		t.Errorf("sent: %v", body)
	}
}

// TestTranslateParts: content parts in the messages go out as Anthropic blocks (a tool's inside
// its tool_result), the llm event lists them, never their data, and a malformed part is
// KindContentPart before anything is sent.
func TestTranslateParts(t *testing.T) {
	mock := newMock(t)
	mock.script(mockReply{Body: []byte(`{"content":[{"type":"text","text":"a chart"}],"stop_reason":"end_turn"}`)})
	var events []tn.MetricEvent
	c, err := tn.NewClient(tn.ClientOptions{BaseURL: mock.anthropicURL(), Style: tn.StyleAnthropic, Model: "m", APIKey: "k",
		OnMetric: func(ev tn.MetricEvent) { events = append(events, ev) }})
	if err != nil {
		t.Fatal(err)
	}
	png := tn.Bytes([]byte("\x89PNG\r\n\x1a\n"), "image/png")
	call := map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "shot", "arguments": "{}"}}
	r, err := c.Translate(testCtx(t), tn.TranslateRequest{Messages: []any{
		map[string]any{"role": "user", "content": []any{tn.Text("what is this"), png}},
		map[string]any{"role": "assistant", "tool_calls": []any{call}},
		map[string]any{"role": "tool", "tool_call_id": "c1", "content": []any{tn.Text("taken"), png}},
	}})
	if err != nil || r.Text != "a chart" {
		t.Fatalf("translate: %+v, %v", r, err)
	}
	block := map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
	msgs := mock.seen()[0].Body.(map[string]any)["messages"].([]any)
	want := []any{map[string]any{"type": "text", "text": "what is this"}, block}
	if got := msgs[0].(map[string]any)["content"]; !reflect.DeepEqual(got, want) {
		t.Errorf("user content: %v", got)
	}
	result := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	want = []any{map[string]any{"type": "text", "text": "taken"}, block}
	if !reflect.DeepEqual(result["content"], want) {
		t.Errorf("tool_result content: %v", result["content"])
	}
	summary := tn.PartSummary{Type: "image", MimeType: "image/png", Bytes: 8}
	if len(events) == 0 || !reflect.DeepEqual(events[0].Parts, []tn.PartSummary{summary, summary}) {
		t.Errorf("llm event parts: %+v", events)
	}
	if strings.Contains(fmt.Sprintf("%+v", events), "iVBORw0KGgo=") {
		t.Error("an event carries a part's data")
	}
	both := map[string]any{"type": "image", "mimeType": "image/png", "data": "AA==", "url": "https://x.test/a.png"}
	_, err = c.Translate(testCtx(t), tn.TranslateRequest{Messages: []any{map[string]any{"role": "user", "content": []any{both}}}})
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindContentPart || len(mock.seen()) != 1 {
		t.Errorf("a malformed part: %v, %d requests", err, len(mock.seen()))
	}
}

// TestTranslateErrors: a bad request is the engine's error before anything is sent; a
// cancelled context is KindCancelled.
func TestTranslateErrors(t *testing.T) {
	mock := newMock(t)
	c := openaiClient(t, mock, nil)
	_, err := c.Translate(testCtx(t), tn.TranslateRequest{Messages: []any{map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "image", "mimeType": "image/png", "data": "AA==", "url": "https://x.test/a.png"}}}}})
	var e *tn.Error
	if !errors.As(err, &e) || e.Kind != tn.KindContentPart || len(mock.seen()) != 0 {
		t.Fatalf("a malformed content part: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Translate(ctx, tn.TranslateRequest{}); !errors.As(err, &e) || e.Kind != tn.KindCancelled {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestTranslateResultHelpers(t *testing.T) {
	r := tn.TranslateResult{ToolCalls: []tn.TranslatedToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}}
	got, _ := json.Marshal(r.ToolCallsJSON())
	if string(got) != `[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"c1","type":"function"}]` {
		t.Errorf("ToolCallsJSON: %s", got)
	}
	if s := r.ToolCalls[0].String(); s != `f({"a":1}) id=c1` {
		t.Errorf("String: %s", s)
	}
}
