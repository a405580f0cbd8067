package toolnexus

import (
	"encoding/json"
	"fmt"
)

// InProcessToolCall is one tool call an in-process model asks for. Arguments may be any
// value (encoded for you), or a string, []byte or json.RawMessage already encoded (passed
// unchanged).
// An empty ID becomes call_<index>.
type InProcessToolCall struct {
	ID        string
	Name      string
	Arguments any
}

// InProcessRequest is what an in-process model is handed: the assembled request of this call.
type InProcessRequest struct {
	Messages []any
	Tools    []any
	Model    string
	// Body is the whole request body.
	Body map[string]any
}

// InProcessUsage is optional token reporting; absent, the run reports zero.
type InProcessUsage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int // 0: PromptTokens + CompletionTokens
}

// InProcessResponse is one assistant message: Content to finish, or ToolCalls to ask for tools.
type InProcessResponse struct {
	Content   string
	ToolCalls []InProcessToolCall
	Usage     *InProcessUsage
}

// InProcessOptions is CreateClient's options without the wire (BaseURL, APIKey, Style,
// HTTPClient), plus Generate.
type InProcessOptions struct {
	// Model is the model id handed to Generate and reported in metrics.
	Model string
	// Generate is the model: it receives the assembled request and returns one assistant
	// message. It runs on its own goroutine and may block. An error (or a panic) ends the run
	// at once: nothing is retried.
	Generate func(InProcessRequest) (InProcessResponse, error)
	// OnError is the port's way to retry a failed Generate. A failed Generate ends the run at
	// once here, so the engine refuses it when set rather than never consult it.
	OnError       func(ErrorInfo) Tier
	SystemPrompt  string
	MaxTurns      int
	Hooks         *Hooks
	TimeoutMs     int
	Store         ConversationStore
	OnMetric      func(MetricEvent)
	WaitFor       func(Request) (Answer, error)
	RequestParams map[string]any
	BodyTransform func(map[string]any) map[string]any
	Headers       map[string]string
}

// CreateInProcessClient makes a client whose model runs in this process: no URL, no key, no
// socket. The loop, hooks, metrics and suspensions behave as with any client. Options the
// engine refuses are reported by every run, as with CreateClient.
func CreateInProcessClient(opts InProcessOptions) *Client {
	c := &Client{opts: ClientOptions{
		Model: opts.Model, SystemPrompt: opts.SystemPrompt, MaxTurns: opts.MaxTurns, Hooks: opts.Hooks,
		TimeoutMs: opts.TimeoutMs, Store: opts.Store, OnMetric: opts.OnMetric, WaitFor: opts.WaitFor,
		RequestParams: opts.RequestParams, BodyTransform: opts.BodyTransform, Headers: opts.Headers,
		OnError: opts.OnError, generate: opts.Generate,
	}}
	if opts.Generate == nil {
		c.err = bindingError(KindInvalidArgument, "CreateInProcessClient requires a Generate function")
	} else {
		c.native, c.err = newEngineClient(c.opts)
	}
	c.keep()
	return c
}

// generateOutcome hands the engine's request to ClientOptions.generate and its answer back
// as the engine's JSON.
func (s *runScope) generateOutcome(requestJSON string) outcome {
	var raw struct {
		Messages []any          `json:"messages"`
		Tools    []any          `json:"tools"`
		Model    string         `json:"model"`
		Body     map[string]any `json:"body"`
	}
	if err := json.Unmarshal([]byte(requestJSON), &raw); err != nil {
		return reply(statusHost, "toolnexus: unreadable in-process request: "+err.Error())
	}
	var answer InProcessResponse
	if err := guard("Generate", func() error {
		var err error
		answer, err = s.opts.generate(InProcessRequest{Messages: raw.Messages, Tools: raw.Tools, Model: raw.Model, Body: raw.Body})
		return err
	}); err != nil {
		return failed(err)
	}
	wire := map[string]any{"content": answer.Content}
	if len(answer.ToolCalls) > 0 {
		calls := make([]any, 0, len(answer.ToolCalls))
		for _, tc := range answer.ToolCalls {
			args, err := encodeArguments(tc.Arguments)
			if err != nil {
				return failed(fmt.Errorf("tool call %q: arguments are not JSON: %w", tc.Name, err))
			}
			calls = append(calls, map[string]any{"id": tc.ID, "name": tc.Name, "arguments": args})
		}
		wire = map[string]any{"tool_calls": calls}
	}
	if u := answer.Usage; u != nil {
		wire["usage"] = map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
	}
	b, err := json.Marshal(wire)
	if err != nil {
		return failed(fmt.Errorf("Generate's answer is not JSON: %w", err))
	}
	return reply(statusOK, string(b))
}

// encodeArguments is a call's arguments as the engine reads them: a string (or raw JSON) as
// already encoded, anything else as the value to encode.
func encodeArguments(a any) (any, error) {
	switch v := a.(type) {
	case nil:
		return nil, nil
	case string:
		return v, nil
	case json.RawMessage:
		return string(v), nil
	case []byte:
		return string(v), nil
	default:
		if _, err := json.Marshal(v); err != nil {
			return nil, err
		}
		return v, nil
	}
}
