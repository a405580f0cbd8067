package toolnexus

import "context"

// JSONSchema is a JSON Schema object ({"type": "object", "properties": ...}), kept as a free
// map so it reaches the provider exactly as written.
type JSONSchema = map[string]any

// ToolSource says where a tool comes from. The values are the engine's wire strings.
type ToolSource string

// The tool sources the engine knows.
const (
	SourceMCP     ToolSource = "mcp"
	SourceSkill   ToolSource = "skill"
	SourceNative  ToolSource = "native"
	SourceHTTP    ToolSource = "http"
	SourceCustom  ToolSource = "custom"
	SourceBuiltin ToolSource = "builtin"
	SourceA2A     ToolSource = "a2a"
	// SourceRelay marks a declaration-only tool: the model may call it, the host runs it
	// (see RelayTool).
	SourceRelay ToolSource = "relay"
)

// ToolResult is what a tool hands back to the model. A result whose Metadata["pending"] is a
// Request is a suspension (see Pending).
type ToolResult struct {
	Output   string         `json:"output"`             // the text the model sees
	IsError  bool           `json:"isError"`            // whether the tool failed
	Metadata map[string]any `json:"metadata,omitempty"` // free-form; "pending" makes a suspension
	// Parts are content parts beside Output (images, files, audio), sent where the provider's
	// style can carry them and as a text placeholder where it cannot. A part that carries a
	// constructor's error (Err) fails the call as a returned error does.
	Parts []ContentPart `json:"parts,omitempty"`
}

// ToolContext is what a tool is told about the call it serves.
type ToolContext struct {
	// Ctx is the run's context: it carries the caller's values and is cancelled when the
	// caller's ctx is, when the run's deadline passes, and when the run ends.
	Ctx context.Context
	// Timeout is the time left before the run's deadline, in milliseconds (0: no deadline).
	Timeout int
	// Answer is set only when the tool is re-run to consume the resolution of its own
	// suspension (inline through WaitFor, or durably through RunWithAnswer).
	Answer *Answer
	// CallID is the provider's tool-call id: the same on the first run, the re-run and a
	// durable resume, so a tool with side effects can use it as an idempotency key.
	CallID string
}

// Request is a suspension: what a tool waits for (a login, an approval, a typed reply, a
// relayed call). The JSON keys are pinned across every port and language.
type Request struct {
	ID        string         `json:"id"`                  // unique per suspension; the Answer echoes it
	Kind      string         `json:"kind"`                // "authorization", "approval", "input", "tool_call", ...
	Prompt    string         `json:"prompt"`              // what is asked, in human words
	URL       string         `json:"url,omitempty"`       // where the action happens, if at a link
	Data      map[string]any `json:"data,omitempty"`      // kind-specific data (relay calls ride "calls")
	ExpiresAt string         `json:"expiresAt,omitempty"` // RFC 3339 time after which it is stale
}

// Answer resolves a Request; ID echoes Request.ID. Ok false is a refusal (declined,
// cancelled, expired), not an error; Reason says why.
type Answer struct {
	ID     string         `json:"id"`               // echoes Request.ID
	Ok     bool           `json:"ok"`               // satisfied, or refused
	Data   map[string]any `json:"data,omitempty"`   // the payload (AnswerOutput puts the reply under "output")
	Reason string         `json:"reason,omitempty"` // why it was refused (advisory)
}

// Tool is one tool the model may call.
type Tool struct {
	Name        string     `json:"name"`        // sanitized to [a-zA-Z0-9_-] when declared
	Description string     `json:"description"` // what the model reads
	InputSchema JSONSchema `json:"inputSchema"` // nil: an object with no properties
	Source      ToolSource `json:"source"`      // empty: SourceNative; SourceRelay: a relay tool
	// Execute runs the tool. It runs on its own goroutine and may block. A returned error,
	// or a panic, becomes an error result the model sees; it never ends the run. ctx is never
	// nil when the engine calls it.
	Execute func(args map[string]any, ctx *ToolContext) (ToolResult, error) `json:"-"`

	http *HTTPToolOptions // set by HTTPTool: declared to the engine as an HTTP tool
}
