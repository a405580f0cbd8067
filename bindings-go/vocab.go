package toolnexus

// #include "bridge.h"
import "C"

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Pending returns a suspension: an error ToolResult whose Metadata["pending"] is req. The
// engine builds it (an empty req.ID gets a fresh id; Output is the prompt, plus "\n" and the
// URL when there is one). A tool returns it to ask for a login, an approval or a reply.
func Pending(req Request) ToolResult {
	if abiErr != nil {
		return ToolResult{Output: abiErr.Error(), IsError: true}
	}
	spec, err := json.Marshal(req)
	if err != nil {
		return ToolResult{Output: "toolnexus: cannot suspend: " + err.Error(), IsError: true}
	}
	cspec := cstring(string(spec))
	defer freeC(cspec)
	var out, errJSON *C.char
	if err := check(C.tn_pending(cspec, &out, &errJSON), errJSON); err != nil {
		return ToolResult{Output: "toolnexus: cannot suspend: " + err.Error(), IsError: true}
	}
	return suspensionResult(takeString(out))
}

// suspensionResult reads the engine's suspension JSON, with Metadata["pending"] typed as the
// Request a tool author would build.
func suspensionResult(wire string) ToolResult {
	var r wireToolResult
	if err := json.Unmarshal([]byte(wire), &r); err != nil {
		return ToolResult{Output: "toolnexus: cannot suspend: " + err.Error(), IsError: true}
	}
	result := r.toResult()
	if req := PendingOf(result); req != nil {
		result.Metadata["pending"] = *req
	}
	return result
}

// AuthRequired is the suspension for a login at url; an empty prompt means
// "Authorization required to continue" (the engine's default, as in the Go port).
func AuthRequired(url, prompt string) ToolResult {
	if abiErr != nil {
		return ToolResult{Output: abiErr.Error(), IsError: true}
	}
	curl, cprompt := cstring(url), cstring(prompt)
	defer freeC(curl)
	defer freeC(cprompt)
	var out, errJSON *C.char
	if err := check(C.tn_auth_required(curl, cprompt, &out, &errJSON), errJSON); err != nil {
		return ToolResult{Output: "toolnexus: cannot suspend: " + err.Error(), IsError: true}
	}
	return suspensionResult(takeString(out))
}

// PendingOf returns the suspension a result carries, or nil. Metadata["pending"] may be a
// Request, a *Request, or its JSON object form (as in RunResult.ToolCalls); an object needs
// string "id", "kind" and "prompt" to count.
func PendingOf(result ToolResult) *Request {
	switch v := result.Metadata["pending"].(type) {
	case Request:
		return &v
	case *Request:
		return v
	case map[string]any:
		for _, k := range []string{"id", "kind", "prompt"} {
			if _, ok := v[k].(string); !ok {
				return nil
			}
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		var r Request
		if json.Unmarshal(raw, &r) != nil {
			return nil
		}
		return &r
	default:
		return nil
	}
}

// Sanitize replaces every character outside [a-zA-Z0-9_-] with "_", as providers require of
// tool names; it is the engine's own rule (tn_sanitize), the one applied to every tool name.
// Bytes that are not UTF-8, and NUL, are outside the set too: each is replaced before the
// engine sees the string (as encoding/json turns each into U+FFFD in a declared name).
func Sanitize(value string) string {
	clean := strings.Map(func(r rune) rune {
		if r == 0 || r == utf8.RuneError {
			return '_'
		}
		return r
	}, value)
	in := cstring(clean)
	defer freeC(in)
	var out, errJSON *C.char
	if check(C.tn_sanitize(in, &out, &errJSON), errJSON) != nil {
		return clean // not reached: clean is UTF-8 without NUL, all tn_sanitize asks for
	}
	return takeString(out)
}

// AnswerOutput is the Answer that supplies a reply: Ok, with Data {"output": output}.
func AnswerOutput(id, output string) Answer {
	cid, cout := ctext(id), ctext(output)
	defer freeC(cid)
	defer freeC(cout)
	var out, errJSON *C.char
	return engineAnswer(id, C.tn_answer_output(cid, cout, &out, &errJSON), out, errJSON)
}

// AnswerDeclined is the Answer that refuses a request: not Ok, no Data, and Reason (an empty
// reason means "declined", the engine's default, so the model never sees a refusal with
// nothing to explain it). Any reason is carried; the advisory vocabulary is "declined",
// "cancelled", "expired".
func AnswerDeclined(id, reason string) Answer {
	cid, creason := ctext(id), ctext(reason)
	defer freeC(cid)
	defer freeC(creason)
	var out, errJSON *C.char
	return engineAnswer(id, C.tn_answer_declined(cid, creason, &out, &errJSON), out, errJSON)
}

// engineAnswer reads the Answer JSON an engine constructor wrote. The constructors refuse
// only what ctext never passes (NULL, text that is not UTF-8); should one fail, the Answer
// is a refusal of id that says why.
func engineAnswer(id string, status C.int32_t, out, errJSON *C.char) Answer {
	if err := check(status, errJSON); err != nil {
		return Answer{ID: id, Reason: err.Error()}
	}
	var a Answer
	if err := json.Unmarshal([]byte(takeString(out)), &a); err != nil {
		return Answer{ID: id, Reason: "toolnexus: unreadable answer: " + err.Error()}
	}
	return a
}
