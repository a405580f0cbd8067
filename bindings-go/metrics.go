package toolnexus

// #include "bridge.h"
import "C"

import (
	"encoding/json"
	"log"
	"math"
	"runtime"
	"runtime/cgo"
)

// MetricEvent is one observability record (SPEC §8) of ClientOptions.OnMetric. Event says
// which fields are meaningful: "llm" (Model, Status, Ms, PromptTokens, CompletionTokens), one
// per model call, its retries included; "tool" (Tool, Source, IsError, Pending, Ms), one per
// tool execution, Pending (never IsError) when the tool suspended; "run" (Model, Turns,
// ToolCalls, TotalTokens, Ms, Error on failure), one per run, last.
type MetricEvent struct {
	Event            string        // "llm", "tool" or "run"
	Model            string        // the model ("llm", "run")
	Status           string        // "ok" or "error" ("llm")
	Ms               int64         // elapsed wall-clock milliseconds, rounded
	PromptTokens     int           // per-call prompt tokens ("llm")
	CompletionTokens int           // per-call completion tokens ("llm")
	Tool             string        // the tool ("tool")
	Source           string        // where the tool came from ("tool")
	IsError          bool          // the tool failed ("tool")
	Pending          bool          // the tool suspended, which is not a failure ("tool")
	Turns            int           // model round trips ("run")
	ToolCalls        int           // tool calls ("run")
	TotalTokens      int           // tokens over the run ("run")
	Error            string        // the failure, only on a failed run
	Warning          string        // an advisory text (the port's classifier events; the engine sets none)
	Question         string        // the classifier question an event is about (the engine sets none)
	Parts            []PartSummary // the request's content parts, never their data ("llm"; nil: none)
}

// PartSummary is what a metric event says of a content part: its type, MIME type and
// decoded size, never its data.
type PartSummary struct {
	Type     string `json:"type"`
	MimeType string `json:"mimeType"`
	Bytes    int64  `json:"bytes"`
}

// metricWire is the engine's event JSON.
type metricWire struct {
	Event            string        `json:"event"`
	Model            string        `json:"model"`
	Status           string        `json:"status"`
	Ms               float64       `json:"ms"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	Tool             string        `json:"tool"`
	Source           string        `json:"source"`
	IsError          bool          `json:"is_error"`
	Pending          bool          `json:"pending"`
	Turns            int           `json:"turns"`
	ToolCalls        int           `json:"tool_calls"`
	TotalTokens      int           `json:"total_tokens"`
	Error            string        `json:"error"`
	Parts            []PartSummary `json:"parts"`
}

//export goOnMetric
func goOnMetric(sink C.uintptr_t, eventJSON *C.char) {
	f, ok := handleValue(cgo.Handle(uintptr(sink))).(func(MetricEvent))
	if !ok {
		return
	}
	var w metricWire
	if err := json.Unmarshal([]byte(C.GoString(eventJSON)), &w); err != nil {
		log.Printf("[toolnexus] unreadable metric event: %v", err)
		return
	}
	ev := MetricEvent{
		Event: w.Event, Model: w.Model, Status: w.Status, Ms: int64(math.Round(w.Ms)),
		PromptTokens: w.PromptTokens, CompletionTokens: w.CompletionTokens, Tool: w.Tool, Source: w.Source,
		IsError: w.IsError, Pending: w.Pending, Turns: w.Turns, ToolCalls: w.ToolCalls,
		TotalTokens: w.TotalTokens, Error: w.Error, Parts: w.Parts,
	}
	// An observer cannot fail the run.
	if err := guard("OnMetric", func() error { f(ev); return nil }); err != nil {
		log.Printf("[toolnexus] %v", err)
	}
}

// Metrics renders every run's metrics so far as Prometheus text (SPEC §8), the same bytes
// upstream's ports render: HELP and TYPE lines only before the first run. A Client whose
// options were refused has none: "".
func (c *Client) Metrics() string {
	if c.native == nil {
		return ""
	}
	var text, errJSON *C.char
	status := C.tn_client_metrics(c.native, &text, &errJSON)
	runtime.KeepAlive(c)
	if check(status, errJSON) != nil {
		return ""
	}
	return takeString(text)
}
