package toolnexus_test

import (
	"context"
	"encoding/json"
	"errors"
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
