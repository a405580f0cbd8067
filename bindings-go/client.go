package toolnexus

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"log"
	"net/http"
	"runtime"
	"runtime/cgo"
)

// ClientStyle selects the provider's wire format.
type ClientStyle string

// The styles the engine speaks.
const (
	StyleOpenAI    ClientStyle = "openai"    // POST {BaseURL}/chat/completions
	StyleAnthropic ClientStyle = "anthropic" // POST {BaseURL}/v1/messages ({BaseURL}/messages when it ends in /v1)
)

// ClientOptions configures CreateClient. Zero values mean the defaults; every field reaches the
// engine, which refuses a bad value by name. What a run warns about (a tool's content part
// sent as its text placeholder, said once per kind of part and client) goes to the standard
// logger, as the Go port logs it.
type ClientOptions struct {
	// BaseURL is the provider's API root, e.g. https://api.openai.com/v1.
	BaseURL string
	// Style is the wire format; empty means StyleOpenAI.
	Style ClientStyle
	// Model is the model name.
	Model string
	// APIKey; empty reads OPENROUTER_API_KEY, the style's own variable, OPENAI_API_KEY,
	// ANTHROPIC_API_KEY at run time; with no key anywhere a run fails (a *Error of
	// KindConfig) before any request, HTTPClient set or not, as in the Go port. Never logged
	// or put in an error.
	APIKey string
	// Headers are extra request headers.
	Headers map[string]string
	// SystemPrompt opens a fresh conversation.
	SystemPrompt string
	// MaxTurns caps the model round trips of a run; 0 means 10.
	MaxTurns int
	// Hooks are lifecycle callbacks around the loop (see Hooks).
	Hooks *Hooks
	// Retries on 429/500/502/503/504/529 and network errors; 0 means 2.
	Retries int
	// RetryBaseMs is the backoff base (exponential, with jitter); 0 means 500.
	RetryBaseMs int
	// RetryableStatuses adds statuses to the retryable set (it can only widen it).
	RetryableStatuses []int
	// TimeoutMs bounds the whole run (its in-flight request included); 0 means none.
	TimeoutMs int
	// WaitFor resolves suspensions inline: an Ok Answer re-runs the tool once with it; a
	// refusal (or the zero Answer, "no answer") becomes the error result
	// "declined/expired: <prompt>". Nil makes a suspension halt the run (Status "pending").
	// It runs on its own goroutine and may block. An Answer with an empty ID answers the
	// Request it was given. An error ends the run.
	WaitFor func(Request) (Answer, error)
	// RequestParams are extra top-level keys merged into every request body (they win on
	// collision; "messages", "tools" and "stream" are dropped with a logged warning).
	RequestParams map[string]any
	// HTTPClient, when set, sends the engine's model requests (bound to the run's context);
	// nil uses the engine's own HTTP/1.1 client.
	HTTPClient *http.Client
	// OnError decides, per failed model call, to retry (within Retries) or fail.
	OnError func(ErrorInfo) Tier

	// BodyTransform rewrites each model request body just before it is sent (the whole
	// body: model, messages, tools, parameters); returning nil sends it as built. A panic
	// ends the run with an error.
	BodyTransform func(body map[string]any) map[string]any
	// MaxPartBytes is the largest content part sent, in decoded bytes (0: no limit). A
	// tool's part over it is sent as a text placeholder.
	MaxPartBytes int
	// OnUnsupportedPart is what a content part the provider cannot take becomes: "error"
	// fails the run, "text" sends a placeholder; "" goes by where the part came from.
	OnUnsupportedPart string
	// Store is where Ask (and StreamWithID, AskWithAnswer) remembers conversations by id:
	// an engine store (NewInMemoryConversationStore, OpenSqliteConversationStore) or any
	// ConversationStore of the host's. Nil: an in-memory store of the client's own.
	Store ConversationStore
	// OnMetric receives each metric event (see MetricEvent), in order, on the library's
	// thread driving the run: keep it quick. A panic in it is logged and the run goes on.
	// Client.Metrics counts the events either way.
	OnMetric func(MetricEvent)

	// generate is the model of a client made by CreateInProcessClient.
	generate func(InProcessRequest) (InProcessResponse, error)
}

// Client runs the loop against a model. It may run many times, concurrently: every run uses
// the one engine client made for it (freed once the Client is unreachable), each with its own
// scope.
type Client struct {
	opts   ClientOptions
	native *C.tn_client // nil when err is set
	err    error        // why the options cannot run
	store  ConversationStore
}

// engineOptions is tn_client_new's options_json.
type engineOptions struct {
	BaseURL           string            `json:"base_url"`
	Style             ClientStyle       `json:"style"`
	Model             string            `json:"model"`
	APIKey            string            `json:"api_key,omitempty"`
	Headers           map[string]string `json:"headers,omitempty"`
	SystemPrompt      string            `json:"system_prompt,omitempty"`
	MaxTurns          int               `json:"max_turns,omitempty"`
	Retries           int               `json:"retries,omitempty"`
	RetryBaseMs       int               `json:"retry_base_ms,omitempty"`
	RetryableStatuses []int             `json:"retryable_statuses,omitempty"`
	TimeoutMs         int               `json:"timeout_ms,omitempty"`
	RequestParams     map[string]any    `json:"request_params,omitempty"`
	MaxPartBytes      int               `json:"max_part_bytes,omitempty"`
	OnUnsupportedPart string            `json:"on_unsupported_part,omitempty"`
}

// inProcessEngineOptions is tn_client_new_in_process's options_json.
type inProcessEngineOptions struct {
	Model         string            `json:"model"`
	Headers       map[string]string `json:"headers,omitempty"`
	SystemPrompt  string            `json:"system_prompt,omitempty"`
	MaxTurns      int               `json:"max_turns,omitempty"`
	TimeoutMs     int               `json:"timeout_ms,omitempty"`
	RequestParams map[string]any    `json:"request_params,omitempty"`
	MaxPartBytes  int               `json:"max_part_bytes,omitempty"`
	OnUnsupported string            `json:"on_unsupported_part,omitempty"`
}

// CreateClient builds a Client. Options the engine refuses (or that are not supported) are
// reported by every run; NewClient reports them at once.
func CreateClient(opts ClientOptions) *Client {
	c := &Client{opts: opts}
	c.native, c.err = newEngineClient(opts)
	c.keep()
	c.store = c.conversationStore()
	return c
}

// keep frees the engine client once c is unreachable.
func (c *Client) keep() {
	if c.native != nil {
		runtime.SetFinalizer(c, func(c *Client) { C.tn_client_free(c.native) })
	}
}

// NewClient is CreateClient that returns the options' error right away.
func NewClient(opts ClientOptions) (*Client, error) {
	c := CreateClient(opts)
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}

// newEngineClient has the engine read the options and makes the client every run uses; its
// warnings go to the standard logger, once.
func newEngineClient(o ClientOptions) (*C.tn_client, error) {
	if abiErr != nil {
		return nil, abiErr
	}
	style := o.Style
	if style == "" {
		style = StyleOpenAI
	}
	eo := engineOptions{
		BaseURL: o.BaseURL, Style: style, Model: o.Model, APIKey: o.APIKey, Headers: o.Headers,
		SystemPrompt: o.SystemPrompt, MaxTurns: o.MaxTurns, Retries: o.Retries, RetryBaseMs: o.RetryBaseMs,
		RetryableStatuses: o.RetryableStatuses, TimeoutMs: o.TimeoutMs, RequestParams: o.RequestParams,
		MaxPartBytes: o.MaxPartBytes, OnUnsupportedPart: o.OnUnsupportedPart,
	}
	var raw []byte
	var err error
	if o.generate != nil {
		// No wire: the engine sets it (and refuses it when given).
		raw, err = json.Marshal(inProcessEngineOptions{eo.Model, eo.Headers, eo.SystemPrompt, eo.MaxTurns, eo.TimeoutMs, eo.RequestParams,
			eo.MaxPartBytes, eo.OnUnsupportedPart})
	} else {
		raw, err = json.Marshal(eo)
	}
	if err != nil {
		return nil, bindingError(KindInvalidArgument, "cannot encode the client options: %v", err)
	}
	var wired C.uint32_t
	if o.WaitFor != nil {
		wired |= C.TN_GO_WAIT_FOR
	}
	if o.HTTPClient != nil {
		wired |= C.TN_GO_TRANSPORT
	}
	if o.OnError != nil {
		wired |= C.TN_GO_ON_ERROR
	}
	if o.BodyTransform != nil {
		wired |= C.TN_GO_BODY_TRANSFORM
	}
	if o.generate != nil {
		wired |= C.TN_GO_GENERATE
	}
	options := cstring(string(raw))
	defer freeC(options)
	var sink C.uintptr_t
	if o.OnMetric != nil {
		// Released by the engine with the client (goRelease), or now if making it fails.
		sink = C.uintptr_t(cgo.NewHandle(o.OnMetric))
	}
	var out *C.tn_client
	var errJSON *C.char
	status := C.int32_t(0)
	if o.generate != nil {
		status = C.tn_go_client_new_in_process(options, wired, hookMask(o.Hooks), sink, &out, &errJSON)
	} else {
		status = C.tn_go_client_new(options, wired, hookMask(o.Hooks), sink, &out, &errJSON)
	}
	if err := check(status, errJSON); err != nil {
		return nil, err
	}
	if o.Store != nil {
		if out, err = withStore(out, o.Store); err != nil {
			return nil, err
		}
	}
	var warnings *C.char
	if check(C.tn_client_warnings(out, &warnings, &errJSON), errJSON) == nil {
		logWarnings(takeString(warnings))
	}
	return out, nil
}

//export goOnWarning
func goOnWarning(warningJSON *C.char) {
	logWarnings("[" + C.GoString(warningJSON) + "]")
}

// logWarnings hands the engine's warnings (its `[{code, message}]` JSON) to the standard
// logger, as the Go port logs its own.
func logWarnings(warningsJSON string) {
	var warnings []struct {
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(warningsJSON), &warnings) != nil {
		return
	}
	for _, w := range warnings {
		log.Print(w.Message)
	}
}

// hookMask is the TN_HOOK_* bits of the hooks that are set.
func hookMask(h *Hooks) C.uint32_t {
	if h == nil {
		return 0
	}
	var m C.uint32_t
	if h.BeforeLLM != nil {
		m |= C.TN_HOOK_BEFORE_LLM
	}
	if h.AfterLLM != nil {
		m |= C.TN_HOOK_AFTER_LLM
	}
	if h.BeforeTool != nil {
		m |= C.TN_HOOK_BEFORE_TOOL
	}
	if h.AfterTool != nil {
		m |= C.TN_HOOK_AFTER_TOOL
	}
	return m
}

// Run runs the loop for prompt with the tools of tk (nil: no tools). ctx cancellation aborts
// the run, its in-flight request included.
func (c *Client) Run(ctx context.Context, prompt string, tk *Toolkit) (RunResult, error) {
	return c.RunWithHistory(ctx, prompt, tk, nil)
}

// RunWithHistory continues a prior transcript (RunResult.Messages, as stored) with prompt as
// the next user turn.
func (c *Client) RunWithHistory(ctx context.Context, prompt string, tk *Toolkit, history []any) (RunResult, error) {
	return c.run(ctx, tk, wireRunInput{Prompt: &prompt, History: history})
}

// RunParts is Run with a prompt of content parts (Text, File, Bytes, ...), in the order the
// model is to read them. The first part that carries a constructor's error (Err) is returned
// before anything is sent; so is a part the engine refuses (a *Error of KindContentPart, or
// KindUnsupportedPart for one the provider's style cannot take).
func (c *Client) RunParts(ctx context.Context, parts []ContentPart, tk *Toolkit) (RunResult, error) {
	return c.RunPartsWithHistory(ctx, parts, tk, nil)
}

// RunPartsWithHistory is RunWithHistory with a prompt of content parts (see RunParts).
func (c *Client) RunPartsWithHistory(ctx context.Context, parts []ContentPart, tk *Toolkit, history []any) (RunResult, error) {
	prompt, err := partsPrompt(parts)
	if err != nil {
		return RunResult{}, err
	}
	return c.run(ctx, tk, wireRunInput{Prompt: prompt, History: history})
}

// partsPrompt is a prompt of parts as the run input carries it, or the first part's
// constructor error.
func partsPrompt(parts []ContentPart) ([]ContentPart, error) {
	if err := firstPartErr(parts); err != nil {
		return nil, err
	}
	if parts == nil {
		return []ContentPart{}, nil // an empty prompt, not a missing one: the engine says what it makes of it
	}
	return parts, nil
}

// RunWithAnswer resumes a run that halted with Status "pending": history is its Messages,
// pending its Pending, answer the resolution (its ID must echo pending.ID, else a
// KindAnswerMismatch error and nothing is sent). The suspended tool re-runs with the answer
// (relay calls take their results from it) and the loop goes on with no new user turn.
func (c *Client) RunWithAnswer(ctx context.Context, tk *Toolkit, history []any, pending Request, answer Answer) (RunResult, error) {
	return c.run(ctx, tk, wireRunInput{History: history, Pending: &pending, Answer: &answer})
}
