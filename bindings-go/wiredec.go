package toolnexus

// The engine's documents that come on every run, read with jsonReader (jsondec.go) into the
// wire types of wire.go, stream.go: field by field, as encoding/json fills them (a null
// leaves the zero value, an unknown key is skipped), metadata's numbers as decodeMetadata
// makes them. The test beside this file holds each decoder to encoding/json's result.

import "encoding/json"

// decodeRunResult reads a run's result.
func decodeRunResult(s string) (wireRunResult, error) {
	var w wireRunResult
	r := jsonReader{s: s}
	r.members(func(key string) {
		switch key {
		case "text":
			w.Text = r.str()
		case "messages":
			w.Messages = r.array(floats)
		case "tool_calls":
			w.ToolCalls = nil
			if !r.null() {
				w.ToolCalls = []wireToolCallRecord{}
				r.elements(func() { w.ToolCalls = append(w.ToolCalls, r.toolCallRecord()) })
			}
		case "tool_call_count":
			w.ToolCallCount = r.integer()
		case "turns":
			w.Turns = r.integer()
		case "usage":
			w.Usage = r.usage()
		case "model":
			w.Model = r.str()
		case "status":
			w.Status = r.str()
		case "limit":
			w.Limit = r.str()
		case "pending":
			w.Pending = r.request()
		case "history_kept":
			w.HistoryKept = r.integer()
		default:
			r.value(floats)
		}
	})
	return w, r.end()
}

func (r *jsonReader) toolCallRecord() wireToolCallRecord {
	var c wireToolCallRecord
	r.members(func(key string) {
		switch key {
		case "name":
			c.Name = r.str()
		case "args":
			c.Args = r.object(floats)
		case "output":
			c.Output = r.str()
		case "is_error":
			c.IsError = r.boolean()
		case "metadata":
			c.Metadata = r.object(goInts)
		default:
			r.value(floats)
		}
	})
	return c
}

func (r *jsonReader) usage() wireUsage {
	var u wireUsage
	r.members(func(key string) {
		switch key {
		case "prompt_tokens":
			u.PromptTokens = r.integer()
		case "completion_tokens":
			u.CompletionTokens = r.integer()
		case "total_tokens":
			u.TotalTokens = r.integer()
		default:
			r.value(floats)
		}
	})
	return u
}

// request reads a Request (nil for null) with encoding/json: it is rare, and its own type.
func (r *jsonReader) request() *Request {
	return rawInto[Request](r)
}

// rawInto reads one value with encoding/json into a new T; nil for null.
func rawInto[T any](r *jsonReader) *T {
	if r.null() {
		return nil
	}
	start := r.i
	text := r.raw()
	if r.err != nil {
		return nil
	}
	v := new(T)
	if err := json.Unmarshal([]byte(text), v); err != nil {
		r.i = start
		r.fail("%v", err)
		return nil
	}
	return v
}

// decodeToolCall reads a tool callback's call.
func decodeToolCall(s string) (wireToolCall, error) {
	var c wireToolCall
	r := jsonReader{s: s}
	r.members(func(key string) {
		switch key {
		case "name":
			c.Name = r.str()
		case "args":
			c.Args = r.object(floats)
		case "call_id":
			c.CallID = r.str()
		case "answer":
			c.Answer = rawInto[Answer](&r)
		case "timeout_ms":
			c.TimeoutMs = r.integer()
		case "host_ref":
			if r.null() {
				c.HostRef = nil
			} else {
				ref := r.uinteger()
				c.HostRef = &ref
			}
		default:
			r.value(floats)
		}
	})
	return c, r.end()
}

// decodeStreamEvent reads one event of a streamed run.
func decodeStreamEvent(s string) (wireStreamEvent, error) {
	var e wireStreamEvent
	r := jsonReader{s: s}
	r.members(func(key string) {
		switch key {
		case "type":
			e.Type = r.str()
		case "delta":
			e.Delta = r.str()
		case "id":
			e.ID = r.str()
		case "name":
			e.Name = r.str()
		case "args":
			e.Args = r.object(floats)
		case "output":
			e.Output = r.str()
		case "is_error":
			e.IsError = r.boolean()
		case "usage":
			if r.null() {
				e.Usage = nil
			} else {
				u := r.usage()
				e.Usage = &u
			}
		case "request":
			e.Request = r.request()
		default:
			r.value(floats)
		}
	})
	return e, r.end()
}
