package toolnexus

// #include "bridge.h"
import "C"

import "encoding/json"

// Relay tools: declared to the model, executed by the host. A relay call suspends the run
// with a Request of kind RelayKind carrying it under Data["calls"]: with WaitFor each call is
// its own Request; a durable halt carries every relay call of the turn in one. The host
// answers with RelayAnswer (or the single-call shorthand Data {"output", "isError"}). The
// engine does the routing; these are the host's helpers.

// RelayKind is the Request.Kind of a relayed tool call.
const RelayKind = "tool_call"

// The Answer.Data keys of the single-call shorthand (the Go port's names and values).
const (
	// RelayOutputKey holds the host's tool output.
	RelayOutputKey = "output"
	// RelayIsErrorKey marks the host's tool as failed.
	RelayIsErrorKey = "isError"
)

// RelayCall is one relayed call, as it appears in Request.Data["calls"].
type RelayCall struct {
	// ID is the provider's tool-call id: the key the result must carry.
	ID string `json:"id"`
	// Name is the tool the model called.
	Name string `json:"name"`
	// Input is the parsed arguments.
	Input map[string]any `json:"input"`
	// Arguments is the raw arguments JSON, so an OpenAI-shaped caller can echo it.
	Arguments string `json:"arguments"`
}

// RelayResult is one result the host executed, keyed to its relayed call's id.
type RelayResult struct {
	ID      string `json:"id"`      // the relayed call's id (RelayCall.ID)
	Output  string `json:"output"`  // what the model reads
	IsError bool   `json:"isError"` // whether the host's tool failed
}

// RelayTool returns a declaration-only tool (Source SourceRelay): when the model calls it the
// run suspends with a RelayKind Request and the host supplies the result. A nil schema is an
// object with no properties.
//
// In a run the engine routes relay calls itself and never calls Execute. Execute is for code
// that calls a tool directly, as the Go port's callers may, and asks the engine what the
// call does (tn_relay_execute): without ctx.Answer, the suspension for that one call, the
// Request a run would relay it with (for the call ctx.CallID; with none, a fresh Request id);
// with ctx.Answer, the result the model would read, as a run reads it: the result for
// ctx.CallID in Data["results"] (see RelayAnswer), else Data[RelayOutputKey] and
// Data[RelayIsErrorKey], or "relay declined for <name>: <reason>" for a refusal.
func RelayTool(name, description string, schema JSONSchema) Tool {
	if schema == nil {
		schema = JSONSchema{"type": "object", "properties": map[string]any{}}
	}
	return Tool{
		Name:        name,
		Description: description,
		InputSchema: schema,
		Source:      SourceRelay,
		Execute: func(args map[string]any, ctx *ToolContext) (ToolResult, error) {
			return relayExecute(name, args, ctx), nil
		},
	}
}

// relayExecute is RelayTool's Execute. A refusal or a failed host tool is an error result,
// never an error: the model recovers from it.
func relayExecute(name string, args map[string]any, ctx *ToolContext) ToolResult {
	if abiErr != nil {
		return ToolResult{Output: abiErr.Error(), IsError: true}
	}
	call := map[string]any{"args": args}
	if ctx != nil {
		call["call_id"] = ctx.CallID
		if ctx.Answer != nil {
			call["answer"] = ctx.Answer
		}
	}
	raw, err := json.Marshal(call)
	if err != nil {
		return ToolResult{Output: "toolnexus: cannot relay " + name + ": " + err.Error(), IsError: true}
	}
	cname, ccall := ctext(name), cstring(string(raw))
	defer freeC(cname)
	defer freeC(ccall)
	var out, errJSON *C.char
	if err := check(C.tn_relay_execute(cname, ccall, &out, &errJSON), errJSON); err != nil {
		return ToolResult{Output: "toolnexus: cannot relay " + name + ": " + err.Error(), IsError: true}
	}
	return suspensionResult(takeString(out))
}

// RelayAnswer is the Answer for a relay Request: Ok, with Data {"results": [...]} holding one
// result per relayed call (the engine's tn_relay_answer).
func RelayAnswer(requestID string, results []RelayResult) Answer {
	if results == nil {
		results = []RelayResult{}
	}
	raw, err := json.Marshal(results)
	if err != nil { // not reached: RelayResult is strings and a bool
		return Answer{ID: requestID, Reason: "toolnexus: " + err.Error()}
	}
	cid, cresults := ctext(requestID), cstring(string(raw))
	defer freeC(cid)
	defer freeC(cresults)
	var out, errJSON *C.char
	return engineAnswer(requestID, C.tn_relay_answer(cid, cresults, &out, &errJSON), out, errJSON)
}

// IsRelayRequest reports whether req is a relayed tool call.
func IsRelayRequest(req *Request) bool {
	return req != nil && req.Kind == RelayKind
}

// RelayCallsOf returns the relayed calls of req in call order, or nil when req is not a
// relay Request. Data["calls"] may hold RelayCall values or their JSON object form.
func RelayCallsOf(req *Request) []RelayCall {
	if !IsRelayRequest(req) {
		return nil
	}
	switch calls := req.Data["calls"].(type) {
	case []RelayCall:
		return append([]RelayCall(nil), calls...)
	case []any:
		out := make([]RelayCall, 0, len(calls))
		for _, c := range calls {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			id, _ := m["id"].(string)
			name, _ := m["name"].(string)
			input, _ := m["input"].(map[string]any)
			args, _ := m["arguments"].(string)
			out = append(out, RelayCall{ID: id, Name: name, Input: input, Arguments: args})
		}
		return out
	default:
		return nil
	}
}
