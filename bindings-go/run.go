package toolnexus

// #include "bridge.h"
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"time"
)

// runOutcome is what the engine's done callback delivers.
type runOutcome struct {
	status int
	json   string
}

// run executes one run on the client's engine client (and the toolkit's engine toolkit).
func (c *Client) run(ctx context.Context, tk *Toolkit, input wireRunInput) (RunResult, error) {
	if c.err != nil {
		return RunResult{}, c.err
	}
	input.ElideHistory = len(input.History) > 0
	in, err := cinput(input)
	if err != nil {
		return RunResult{}, bindingError(KindInvalidArgument, "cannot encode the run input: %v", err)
	}
	defer freeC(in)
	out, err := c.engineCall(ctx, tk, "run", nil, func(toolkit *C.tn_toolkit, cancel *C.tn_cancel, h C.uintptr_t, errJSON **C.char) C.int32_t {
		if reserveDriver() {
			defer drivers.Add(-1)
			return C.tn_go_run_here(c.native, toolkit, in, cancel, h, errJSON)
		}
		return C.tn_go_run_async(c.native, toolkit, in, cancel, h, errJSON)
	})
	if err != nil {
		return RunResult{}, err
	}
	w, err := decodeRunResult(out)
	if err != nil {
		return RunResult{}, bindingError(KindInternal, "unreadable run result: %v", err)
	}
	w.withHistory(input.History)
	return w.toResult(), nil
}

// drivers counts the runs being driven on their callers' threads.
var drivers atomic.Int32

// reserveDriver says whether a run may be driven on its caller's thread (tn_go_run_here),
// taking the slot if so. Driven there, a run's callbacks enter Go without a hop between
// threads, the cheaper way for a few runs at once; beyond one run per P, every wake-up of a
// driven run is an OS thread switch, and the library's threads (tn_go_run_async), which
// carry many runs each, are the cheaper way (measured: docs/benchmarks.md, concurrent-100).
func reserveDriver() bool {
	if drivers.Add(1) <= int32(runtime.GOMAXPROCS(0)) {
		return true
	}
	drivers.Add(-1)
	return false
}

// engineCall makes one asynchronous engine call (a run, a translation) with a scope bound to
// this call's context as its user_data, fires the engine's cancellation when ctx ends, and
// waits for the outcome's JSON; a failed call is its *Error. what names it in errors; events,
// when set, gets a streamed run's events (their JSON) on the pump.
func (c *Client) engineCall(ctx context.Context, tk *Toolkit, what string, events func(string),
	start func(*C.tn_toolkit, *C.tn_cancel, C.uintptr_t, **C.char) C.int32_t) (string, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return "", &Error{Kind: KindCancelled, Code: codeOfKind(KindCancelled),
			Message: what + " cancelled before it started: " + err.Error(), cause: err}
	}
	runCtx, stop := c.runContext(ctx)
	defer stop()
	sc := newScope(runCtx, &c.opts)
	sc.onEvent = events
	sc.endsOnlyByItself = ctx.Done() == nil && c.opts.TimeoutMs <= 0
	out, err := awaitEngine(ctx, sc, func(cancel *C.tn_cancel, h C.uintptr_t) error {
		return withToolkit(tk, func(toolkit *C.tn_toolkit) error {
			defer runtime.KeepAlive(c) // its engine client is freed by its finalizer
			var errJSON *C.char
			return check(start(toolkit, cancel, h, &errJSON), errJSON)
		})
	})
	if err != nil {
		return "", err
	}
	if out.status != statusOK {
		return "", c.runError(ctx, sc, out)
	}
	return out.json, nil
}

// withToolkit calls start with tk's engine toolkit (NULL for a nil tk), holding it so that
// Close or Register cannot free it before the engine took its own reference (the engine
// keeps what a run uses alive from the moment the run starts).
func withToolkit(tk *Toolkit, start func(*C.tn_toolkit) error) error {
	if tk == nil {
		return start(nil)
	}
	return tk.tkState.with(start)
}

// runContext is the context tools, hooks and the HTTPClient see: the caller's, reporting the
// run's deadline when there is one, and cancelled when the run ends. It does not fire on the
// deadline itself: the engine ends the run there (a KindTimeout error), and only then is the
// context cancelled. Were it to fire first, on Go's clock, a callback returning ctx.Err()
// would end the run with that host error (or, from a tool, an error result and one more
// model request) instead of the timeout.
func (c *Client) runContext(ctx context.Context) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithCancel(ctx)
	if c.opts.TimeoutMs > 0 {
		return deadlineOnly{inner, time.Now().Add(time.Duration(c.opts.TimeoutMs) * time.Millisecond)}, cancel
	}
	return inner, cancel
}

// deadlineOnly is a context that reports a deadline it leaves to someone else to enforce.
type deadlineOnly struct {
	context.Context
	deadline time.Time
}

// Deadline reports the run's deadline (or the caller's, when that is earlier).
func (d deadlineOnly) Deadline() (time.Time, bool) {
	if parent, ok := d.Context.Deadline(); ok && parent.Before(d.deadline) {
		return parent, true
	}
	return d.deadline, true
}

// runError is the *Error of a failed run, unwrapping to its most useful detail.
func (c *Client) runError(ctx context.Context, sc *runScope, out runOutcome) error {
	e := decodeEngineError(out.status, out.json)
	switch e.Kind {
	case KindCancelled:
		if err := ctx.Err(); err != nil {
			e.Message += ": " + err.Error()
			e.cause = err
		}
	case KindTimeout:
		e.cause = &RunTimeoutError{TimeoutMs: c.opts.TimeoutMs}
	case KindHost:
		e.cause = sc.hostErr(e.hostRef)
	}
	return e
}

// runHandles is what each run (or Execute) hands the engine besides its input: its scope as
// a handle (the run's user_data) and, when its ctx can end, a cancellation handle.
type runHandles struct {
	scope  cgo.Handle
	cancel *C.tn_cancel // nil when nothing can cancel the call
}

// openRun makes the handles of one call in the scope sc; cancellable says whether it needs a
// cancellation handle.
func openRun(sc *runScope, cancellable bool) (runHandles, error) {
	var h runHandles
	if cancellable {
		var errJSON *C.char
		if err := check(C.tn_cancel_new(&h.cancel, &errJSON), errJSON); err != nil {
			return h, err
		}
	}
	h.scope = cgo.NewHandle(sc)
	return h, nil
}

// close releases the cancellation handle. The scope's handle is released by goRunDone, or by
// abandon when the call never started.
func (h runHandles) close() { C.tn_cancel_free(h.cancel) }

// abandon releases the scope's handle of a call the engine refused (it then never calls done).
func (h runHandles) abandon() { h.scope.Delete() }

// fire fires the call's engine cancellation (idempotent).
func (h runHandles) fire() {
	var errJSON *C.char
	C.tn_cancel_fire(h.cancel, &errJSON)
	takeString(errJSON)
}

// awaitEngine starts an async engine call with start (given the call's cancellation handle
// and the scope's handle as its user_data) and waits for its outcome, firing the engine's
// cancellation if ctx ends first (the engine then aborts the in-flight request and ends the
// run). A callback that finishes after ctx ended fires it too, before the engine sees its
// answer: a tool that returns because it saw the cancellation must not race the watcher into
// another turn. Both are in place before the call starts, so even its first callback is
// covered. A ctx that is never cancelled needs no cancellation.
func awaitEngine(ctx context.Context, sc *runScope, start func(*C.tn_cancel, C.uintptr_t) error) (runOutcome, error) {
	h, err := openRun(sc, ctx.Done() != nil)
	if err != nil {
		return runOutcome{}, err
	}
	defer h.close() // last: the cancel handle outlives the watcher and every late callback
	if h.cancel != nil {
		sc.setSettled(func() {
			if ctx.Err() != nil {
				h.fire()
			}
		})
		stopWatch, watched := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-ctx.Done():
				h.fire()
			case <-stopWatch:
			}
		}()
		defer func() {
			close(stopWatch)
			<-watched
			sc.setSettled(nil)
		}()
	}
	if err := start(h.cancel, C.uintptr_t(h.scope)); err != nil {
		h.abandon()
		return runOutcome{}, err
	}
	return <-sc.done, nil
}
