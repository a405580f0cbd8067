package toolnexus

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
)

// TranslateRequest is one OpenAI-shaped turn for Client.Translate (SPEC §11), handed over
// verbatim.
type TranslateRequest struct {
	// Messages is the OpenAI `messages` array: assistant turns with `tool_calls`, `tool`
	// results with `tool_call_id`, system and developer messages. Entries may be
	// map[string]any or any JSON-marshalable value.
	Messages []any
	// Tools is the OpenAI `tools` array: declared, never run. Empty means none.
	Tools []any
	// Toolkit's tools are declared before Tools; none of them runs. Nil means none.
	Toolkit *Toolkit
	// ToolChoice is the OpenAI `tool_choice` (converted for an Anthropic provider). Nil
	// leaves it out.
	ToolChoice any
	// System replaces the system prompt. Empty uses the messages' own system text and the
	// client's SystemPrompt.
	System string
	// MaxTokens is this call's max_tokens; 0 keeps the default.
	MaxTokens int
}

// TranslatedToolCall is one tool call the model asked for, in the OpenAI shape.
type TranslatedToolCall struct {
	// ID is the id the caller echoes on its `tool` result message.
	ID string `json:"id"`
	// Name is the function name.
	Name string `json:"name"`
	// Arguments is the arguments as a JSON string (the OpenAI wire form).
	Arguments string `json:"arguments"`
}

// TranslateResult is one translated turn, in the OpenAI shape.
type TranslateResult struct {
	// Text is the assistant text ("" when the model only called tools).
	Text string `json:"text"`
	// ToolCalls are the tool calls, in the provider's order.
	ToolCalls []TranslatedToolCall `json:"toolCalls"`
	// FinishReason is "stop", "tool_calls", "length" or "content_filter" (an OpenAI
	// provider's own value passes through).
	FinishReason string `json:"finishReason"`
	// Usage is this call's tokens.
	Usage Usage `json:"usage"`
	// Model is the model the call sent.
	Model string `json:"model"`
	// Raw is the provider's decoded response; nil when it was not a JSON object.
	Raw map[string]any `json:"-"`
}

// wireTranslate is the engine's request and result JSON.
type wireTranslateRequest struct {
	Messages   []any  `json:"messages"`
	Tools      []any  `json:"tools,omitempty"`
	ToolChoice any    `json:"tool_choice,omitempty"`
	System     string `json:"system,omitempty"`
	MaxTokens  int    `json:"max_tokens,omitempty"`
}

type wireTranslateResult struct {
	Text      string               `json:"text"`
	ToolCalls []TranslatedToolCall `json:"tool_calls"`
	Finish    string               `json:"finish_reason"`
	Usage     wireUsage            `json:"usage"`
	Model     string               `json:"model"`
	Raw       json.RawMessage      `json:"raw"`
}

// Translate sends one turn through the client's provider and returns it in the OpenAI shape:
// exactly one provider call (with the client's retries, RequestParams, BodyTransform, the
// BeforeLLM and AfterLLM hooks once, and the "llm" metric), no loop, no tool runs, no state,
// so calls may run concurrently. ctx and TimeoutMs bound it as they bound a run.
func (c *Client) Translate(ctx context.Context, req TranslateRequest) (TranslateResult, error) {
	if c.err != nil {
		return TranslateResult{}, c.err
	}
	messages := req.Messages
	if messages == nil {
		messages = []any{}
	}
	raw, err := json.Marshal(wireTranslateRequest{
		Messages: messages, Tools: req.Tools, ToolChoice: req.ToolChoice, System: req.System, MaxTokens: req.MaxTokens,
	})
	if err != nil {
		return TranslateResult{}, bindingError(KindInvalidArgument, "cannot encode the translate request: %v", err)
	}
	in := cstring(string(raw))
	defer freeC(in)
	out, err := c.engineCall(ctx, req.Toolkit, "translate", nil, func(toolkit *C.tn_toolkit, cancel *C.tn_cancel, h C.uintptr_t, errJSON **C.char) C.int32_t {
		return C.tn_go_translate_async(c.native, toolkit, in, cancel, h, errJSON)
	})
	if err != nil {
		return TranslateResult{}, err
	}
	var w wireTranslateResult
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		return TranslateResult{}, bindingError(KindInternal, "unreadable translate result: %v", err)
	}
	r := TranslateResult{Text: w.Text, ToolCalls: w.ToolCalls, FinishReason: w.Finish, Usage: Usage(w.Usage), Model: w.Model}
	_ = json.Unmarshal(w.Raw, &r.Raw)
	return r, nil
}

// ToolCallsJSON renders the tool calls as an OpenAI `tool_calls` array, for an assistant
// message.
func (r TranslateResult) ToolCallsJSON() []any {
	out := make([]any, 0, len(r.ToolCalls))
	for _, c := range r.ToolCalls {
		out = append(out, map[string]any{
			"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments},
		})
	}
	return out
}

// String shows a call in a log line, its arguments cut at 64 bytes.
func (t TranslatedToolCall) String() string {
	args := t.Arguments
	if len(args) > 64 {
		args = args[:64] + "…"
	}
	return fmt.Sprintf("%s(%s) id=%s", t.Name, args, t.ID)
}
