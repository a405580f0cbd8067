package toolnexus

// The Go port's types for options the engine does not have yet (a conversation store, metrics,
// A2A agents). They are here, with the port's names and shapes, so that code
// written for the port compiles against this package; an option that carries one is rejected
// when set (CreateClient, CreateToolkit), never ignored.

// ConversationStore is where the port's Client.Ask keeps conversations by id
// (ClientOptions.Store). Get returns nil when id has no transcript.
type ConversationStore interface {
	// Get returns the stored transcript for id, or nil when there is none.
	Get(id string) ([]any, error)
	// Save stores the updated transcript for id.
	Save(id string, messages []any) error
}

// MetricEvent is one observability record of the port's ClientOptions.OnMetric. Event says
// which fields are meaningful: "llm" (Model, Status, Ms, PromptTokens, CompletionTokens),
// "tool" (Tool, Source, IsError, Pending, Ms), "run" (Model, Turns, ToolCalls, TotalTokens, Ms,
// Error on failure).
type MetricEvent struct {
	Event            string // "llm", "tool" or "run"
	Model            string // the model ("llm", "run")
	Status           string // "ok" or "error" ("llm")
	Ms               int64  // elapsed wall-clock milliseconds
	PromptTokens     int    // per-call prompt tokens ("llm")
	CompletionTokens int    // per-call completion tokens ("llm")
	Tool             string // the tool ("tool")
	Source           string // where the tool came from ("tool")
	IsError          bool   // the tool failed ("tool")
	Pending          bool   // the tool suspended, which is not a failure ("tool")
	Turns            int    // model round trips ("run")
	ToolCalls        int    // tool calls ("run")
	TotalTokens      int    // tokens over the run ("run")
	Error            string // the failure, only on a failed run
	Warning          string // an advisory text (the port's classifier events)
	Question         string // the classifier question an event is about
}

// Agent points at a remote A2A agent's card; each skill it advertises becomes a tool
// (Options.Agents).
type Agent struct {
	// Card is the URL of the Agent Card (/.well-known/agent-card.json).
	Card string `json:"card"`
	// Headers are request headers; ${ENV_VAR} values expand at call time.
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout is the poll budget in milliseconds (0: 300000).
	Timeout int `json:"timeout,omitempty"`
	// PollEvery is the interval between task polls in milliseconds (0: 1000).
	PollEvery int `json:"pollEvery,omitempty"`
}
