package toolnexus

// The engine's JSON shapes (snake_case) and their conversion to and from this package's
// types (which keep the Go port's JSON tags). Pure mapping, no I/O.

// wireToolResult is the engine's ToolResult.
type wireToolResult struct {
	Output   string         `json:"output"`
	IsError  bool           `json:"is_error"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// The conversions below are plain type conversions: the field lists match, only the JSON
// tags differ.

func (w wireToolResult) toResult() ToolResult { return ToolResult(w) }

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

// wireRunInput is tn_client_run_async's input_json: a prompt (with optional history) or a
// resume (history, pending, answer).
type wireRunInput struct {
	Prompt  *string  `json:"prompt,omitempty"`
	History []any    `json:"history,omitempty"`
	Pending *Request `json:"pending,omitempty"`
	Answer  *Answer  `json:"answer,omitempty"`
}
