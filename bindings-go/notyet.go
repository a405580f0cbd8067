package toolnexus

// The Go port's types for options the engine does not have yet (A2A agents). They are here,
// with the port's names and shapes, so that code written for the port compiles against this
// package; an option that carries one is rejected when set (CreateToolkit), never ignored.

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
