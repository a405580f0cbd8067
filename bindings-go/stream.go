package toolnexus

// #include "bridge.h"
import "C"

import (
	"context"
	"runtime/cgo"
	"sync"
)

// StreamEvent is one step of a streamed run (Client.Stream). Type says which fields are set:
// "text" (Delta), "tool_call" (ID, Name, Args), "tool_result" (ID, Name, Output, IsError),
// "pending" (Request: before WaitFor is asked, or the one a durable halt stops on), "usage"
// (Usage), "done" (Result, Usage), "error" (Err; the channel closes right after).
type StreamEvent struct {
	Type    string
	Delta   string
	Name    string
	ID      string
	Args    map[string]any
	Output  string
	IsError bool
	Usage   *Usage
	Result  *RunResult
	Request *Request
	Err     error
}

// wireStreamEvent is the engine's event JSON.
type wireStreamEvent struct {
	Type    string         `json:"type"`
	Delta   string         `json:"delta"`
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Args    map[string]any `json:"args"`
	Output  string         `json:"output"`
	IsError bool           `json:"is_error"`
	Usage   *wireUsage     `json:"usage"`
	Request *Request       `json:"request"`
}

func (w wireStreamEvent) toEvent() StreamEvent {
	ev := StreamEvent{Type: w.Type, Delta: w.Delta, ID: w.ID, Name: w.Name, Args: w.Args, Output: w.Output,
		IsError: w.IsError, Request: w.Request}
	if w.Usage != nil {
		u := Usage(*w.Usage)
		ev.Usage = &u
	}
	return ev
}

//export goStreamEvent
func goStreamEvent(run C.uintptr_t, eventJSON *C.char) {
	if sc, ok := handleValue(cgo.Handle(uintptr(run))).(*runScope); ok && sc.onEvent != nil {
		sc.onEvent(C.GoString(eventJSON))
	}
}

// Stream runs the loop on prompt as Run does, streaming: the model's answers are read as
// server-sent events and each step comes on the channel as it happens, then "done" with the
// result (or "error"), and the channel closes. Events are buffered without bound: a slow
// reader never holds the run up. ctx and TimeoutMs bound it as they bound a run.
func (c *Client) Stream(ctx context.Context, prompt string, tk *Toolkit) (<-chan StreamEvent, error) {
	return c.stream(ctx, tk, wireRunInput{Prompt: &prompt})
}

// stream starts a streamed run of input (see Stream).
func (c *Client) stream(ctx context.Context, tk *Toolkit, input wireRunInput) (<-chan StreamEvent, error) {
	if c.err != nil {
		return nil, c.err
	}
	in, err := cinput(input)
	if err != nil {
		return nil, bindingError(KindInvalidArgument, "cannot encode the run input: %v", err)
	}
	q := &eventQueue{ready: make(chan struct{}, 1)}
	out := make(chan StreamEvent, 16)
	go q.forward(out)
	go func() {
		defer freeC(in)
		got, err := c.engineCall(ctx, tk, "stream", q.pushJSON, func(toolkit *C.tn_toolkit, cancel *C.tn_cancel, h C.uintptr_t, errJSON **C.char) C.int32_t {
			if reserveDriver() {
				defer drivers.Add(-1)
				return C.tn_go_stream_here(c.native, toolkit, in, cancel, h, errJSON)
			}
			return C.tn_go_stream_async(c.native, toolkit, in, cancel, h, errJSON)
		})
		if err != nil {
			q.finish(StreamEvent{Type: "error", Err: err})
			return
		}
		w, err := decodeRunResult(got)
		if err != nil {
			q.finish(StreamEvent{Type: "error", Err: bindingError(KindInternal, "unreadable run result: %v", err)})
			return
		}
		r := w.toResult()
		q.finish(StreamEvent{Type: "done", Result: &r, Usage: &r.Usage})
	}()
	return out, nil
}

// eventQueue holds a stream's events between the pump (which never waits on the
// reader) and the channel.
type eventQueue struct {
	mu     sync.Mutex
	events []StreamEvent
	ended  bool
	ready  chan struct{}
}

func (q *eventQueue) push(ev StreamEvent, last bool) {
	q.mu.Lock()
	q.events = append(q.events, ev)
	q.ended = q.ended || last
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *eventQueue) pushJSON(eventJSON string) {
	w, err := decodeStreamEvent(eventJSON)
	if err != nil {
		return
	}
	q.push(w.toEvent(), false)
}

func (q *eventQueue) finish(ev StreamEvent) { q.push(ev, true) }

// forward moves the events to out, in order, and closes it after the last.
func (q *eventQueue) forward(out chan<- StreamEvent) {
	defer close(out)
	for {
		<-q.ready
		q.mu.Lock()
		batch, ended := q.events, q.ended
		q.events = nil
		q.mu.Unlock()
		for _, ev := range batch {
			out <- ev
		}
		if ended {
			return
		}
	}
}
