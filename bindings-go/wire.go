package toolnexus

// The engine's JSON shapes (snake_case) and their conversion to and from this package's
// types (which keep the Go port's JSON tags). Pure mapping, no I/O.

import (
	"bytes"
	"encoding/json"
	"math"
)

// wireToolResult is the engine's ToolResult.
type wireToolResult struct {
	Output   string         `json:"output"`
	IsError  bool           `json:"is_error"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Parts    []ContentPart  `json:"parts,omitempty"`
}

// The conversions below are plain type conversions: the field lists match, only the JSON
// tags differ.

func (w wireToolResult) toResult() ToolResult { return ToolResult(w) }

// UnmarshalJSON decodes a tool result with its metadata's integral numbers as int (see
// decodeMetadata).
func (w *wireToolResult) UnmarshalJSON(data []byte) error {
	type plain wireToolResult
	var p plain
	if err := decodeNumbers(data, &p); err != nil {
		return err
	}
	p.Metadata = decodeMetadata(p.Metadata)
	*w = wireToolResult(p)
	return nil
}

// decodeNumbers decodes data into v with every number of an `any` kept as a json.Number.
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// decodeMetadata turns the json.Numbers of metadata decoded by decodeNumbers (nested ones
// too) into Go's numbers, as a Go tool writes them: an integral number that fits is an int,
// any other a float64.
func decodeMetadata(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = goNumbers(v)
	}
	return m
}

func goNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil && i >= math.MinInt && i <= math.MaxInt {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		return decodeMetadata(x)
	case []any:
		for i, e := range x {
			x[i] = goNumbers(e)
		}
		return x
	}
	return v
}

func toWireResult(r ToolResult) wireToolResult { return wireToolResult(r) }

// wireTool is one entry of tn_toolkit_new's tools_json.
type wireTool struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	InputSchema any        `json:"input_schema,omitempty"` // nil: the engine's empty object schema
	Source      ToolSource `json:"source,omitempty"`
	Relay       bool       `json:"relay,omitempty"`
	HostRef     uint64     `json:"host_ref"` // the tool's index in its toolSet
}

// wireToolCall is the call_json a tool callback receives.
type wireToolCall struct {
	Name      string         `json:"name"`
	Args      map[string]any `json:"args"`
	CallID    string         `json:"call_id"`
	Answer    *Answer        `json:"answer"`
	TimeoutMs int            `json:"timeout_ms"`
	HostRef   *uint64        `json:"host_ref"`
}

// wireRunResult is the engine's RunResult.
type wireRunResult struct {
	Text          string               `json:"text"`
	Messages      []any                `json:"messages"`
	ToolCalls     []wireToolCallRecord `json:"tool_calls"`
	ToolCallCount int                  `json:"tool_call_count"`
	Turns         int                  `json:"turns"`
	Usage         wireUsage            `json:"usage"`
	Model         string               `json:"model"`
	Status        string               `json:"status"`
	Limit         string               `json:"limit"`
	Pending       *Request             `json:"pending"`
	// HistoryKept is how many of the input's history messages the engine left out of
	// Messages, unchanged (the input asked it to: ElideHistory).
	HistoryKept int `json:"history_kept"`
}

// withHistory puts back the first HistoryKept messages of history, the caller's own values.
func (w *wireRunResult) withHistory(history []any) {
	if w.HistoryKept <= 0 || w.HistoryKept > len(history) {
		return
	}
	messages := make([]any, 0, w.HistoryKept+len(w.Messages))
	w.Messages = append(append(messages, history[:w.HistoryKept]...), w.Messages...)
	w.HistoryKept = 0
}

type wireToolCallRecord struct {
	Name     string         `json:"name"`
	Args     map[string]any `json:"args"`
	Output   string         `json:"output"`
	IsError  bool           `json:"is_error"`
	Metadata map[string]any `json:"metadata"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (w wireRunResult) toResult() RunResult {
	calls := make([]ToolCall, len(w.ToolCalls))
	for i, c := range w.ToolCalls {
		calls[i] = ToolCall(c)
	}
	messages := w.Messages
	if messages == nil {
		messages = []any{}
	}
	return RunResult{
		Text:          w.Text,
		Messages:      messages,
		ToolCalls:     calls,
		ToolCallCount: w.ToolCallCount,
		Turns:         w.Turns,
		Usage:         Usage(w.Usage),
		Model:         w.Model,
		Status:        w.Status,
		Limit:         w.Limit,
		Pending:       w.Pending,
	}
}

// wireRunInput is tn_client_run_async's input_json: a prompt (a *string or []ContentPart,
// with optional history) or a resume (history, pending, answer); with an id, a turn of that
// stored conversation.
type wireRunInput struct {
	ID      *string  `json:"id,omitempty"`
	Prompt  any      `json:"prompt,omitempty"`
	History []any    `json:"history,omitempty"`
	Pending *Request `json:"pending,omitempty"`
	Answer  *Answer  `json:"answer,omitempty"`
	// ElideHistory asks the engine not to send History back: the result says how much of it
	// its transcript starts with, unchanged (wireRunResult.HistoryKept).
	ElideHistory bool `json:"elide_history,omitempty"`
}

// encode appends input's JSON to b, NUL-terminated for the engine. The history, often most
// of it, is encoded by appendJSON rather than encoding/json (see jsonenc.go).
func (input wireRunInput) encode(b []byte) ([]byte, error) {
	history := input.History
	input.History = nil
	head, err := json.Marshal(input)
	if err != nil {
		return b, err
	}
	if history == nil {
		return append(append(b, head...), 0), nil
	}
	// head is an object: its closing brace gives way to the history.
	b = append(b, head[:len(head)-1]...)
	if len(head) > 2 {
		b = append(b, ',')
	}
	b = append(b, `"history":`...)
	if b, err = appendJSON(b, history); err != nil {
		return b, err
	}
	return append(b, '}', 0), nil
}
