package toolnexus

import "context"

// Hooks are lifecycle callbacks around the loop. A nil Hooks, or a nil field, is skipped (the
// engine is not even asked to call it). A hook that returns an error, or panics, ends the run
// with a KindHost error that unwraps to the hook's own error. ctx is the run's context.
type Hooks struct {
	// BeforeLLM runs before each model call; a non-nil override replaces the messages, the
	// tools (for the rest of the run) and/or the model (for this turn).
	BeforeLLM func(ctx context.Context, ev BeforeLLMEvent) (*LLMOverride, error)
	// AfterLLM runs after each model call with the provider's decoded answer.
	AfterLLM func(ctx context.Context, ev AfterLLMEvent) error
	// BeforeTool runs before a tool: an override with Result skips the tool (a suspension
	// included), one with Args rewrites the call.
	BeforeTool func(ctx context.Context, ev BeforeToolEvent) (*ToolOverride, error)
	// AfterTool runs after a tool (never on a suspension): an override with Result replaces it.
	AfterTool func(ctx context.Context, ev AfterToolEvent) (*ToolOverride, error)
}

// BeforeLLMEvent is passed to Hooks.BeforeLLM.
type BeforeLLMEvent struct {
	Messages []any  // the transcript about to be sent, in the provider's shape
	Tools    []any  // the tool declarations about to be sent
	Model    string // the client's model
	Turn     int    // the zero-based turn of the run
}

// AfterLLMEvent is passed to Hooks.AfterLLM; Response is the provider's decoded answer.
type AfterLLMEvent struct {
	Response map[string]any // the provider's answer, decoded
	Model    string         // the model of this turn
	Turn     int            // the zero-based turn of the run
}

// BeforeToolEvent is passed to Hooks.BeforeTool.
type BeforeToolEvent struct {
	Name string         // the tool the model called
	Args map[string]any // its arguments
	ID   string         // the provider's call id
	Turn int            // the zero-based turn of the run
}

// AfterToolEvent is passed to Hooks.AfterTool.
type AfterToolEvent struct {
	Name   string         // the tool that ran
	Args   map[string]any // the arguments it ran with
	Result ToolResult     // what it returned
	ID     string         // the provider's call id
	Turn   int            // the zero-based turn of the run
}

// LLMOverride is what Hooks.BeforeLLM may return. A nil field leaves that value unchanged; a
// non-nil (even empty) slice replaces it.
type LLMOverride struct {
	Messages []any // replaces the transcript
	Tools    []any // replaces the tool declarations for the rest of the run
	// Model, when not empty, is used for this turn only.
	Model string
}

// ToolOverride is what Hooks.BeforeTool and Hooks.AfterTool may return. In BeforeTool a
// non-nil Result skips the tool, otherwise a non-nil Args rewrites the call; in AfterTool a
// non-nil Result replaces the result.
type ToolOverride struct {
	Args   map[string]any // the arguments to run the tool with (BeforeTool)
	Result *ToolResult    // the result to use instead of running (BeforeTool) or of what ran (AfterTool)
}

// Tier is what to do with a failed model call.
type Tier string

// The tiers ClientOptions.OnError may return.
const (
	// TierRetry backs off and tries again, within ClientOptions.Retries.
	TierRetry Tier = "retry"
	// TierFail gives up now.
	TierFail Tier = "fail"
)

// ErrorInfo describes one failed model call to ClientOptions.OnError.
type ErrorInfo struct {
	// Err is the network failure, when no HTTP answer came (nil for a status).
	Err error
	// Status is the HTTP status of a non-success answer (0 for a network failure).
	Status int
	// Attempt is the zero-based attempt index.
	Attempt int
	// Retryable is the default classification (429/500/502/503/504/529, network errors,
	// and ClientOptions.RetryableStatuses).
	Retryable bool
}
