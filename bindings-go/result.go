package toolnexus

// ToolCall is one tool call the model made, with the result it was given.
type ToolCall struct {
	Name     string         `json:"name"`               // the tool the model called
	Args     map[string]any `json:"args"`               // the arguments it ran with
	Output   string         `json:"output"`             // the output fed back to the model
	IsError  bool           `json:"isError"`            // whether that output is an error
	Metadata map[string]any `json:"metadata,omitempty"` // the result's metadata
}

// Usage is token usage summed across the model calls of a run.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`     // prompt (input) tokens
	CompletionTokens int `json:"completionTokens"` // completion (output) tokens
	TotalTokens      int `json:"totalTokens"`      // total tokens
}

// RunResult is the outcome of a run.
type RunResult struct {
	// Text is the final assistant text (the pending prompt when the run halted).
	Text string `json:"text"`
	// Messages is the whole transcript in the provider's own message shape; store it and pass
	// it back (RunWithHistory, RunWithAnswer) unchanged.
	Messages []any `json:"messages"`
	// ToolCalls is every tool call made, in call order.
	ToolCalls []ToolCall `json:"toolCalls"`
	// ToolCallCount is len(ToolCalls).
	ToolCallCount int `json:"toolCallCount"`
	// Turns is the number of model round trips.
	Turns int `json:"turns"`
	// Usage is the token usage summed across turns.
	Usage Usage `json:"usage"`
	// Model is the model of the last turn.
	Model string `json:"model"`
	// Status is "done"; "pending" when a tool suspended and no WaitFor was set (see Pending);
	// "incomplete" when a limit stopped the run while the model was still calling tools.
	Status string `json:"status"`
	// Limit names the limit that stopped an incomplete run ("maxTurns").
	Limit string `json:"limit,omitempty"`
	// Pending is the unresolved suspension of a pending run; resume with RunWithAnswer.
	Pending *Request `json:"pending,omitempty"`
}
