package toolnexus

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"runtime/cgo"
	"time"
)

// runOutcome is what the engine's done callback delivers.
type runOutcome struct {
	status int
	json   string
}

// run executes one run: it declares the client and the tools to the engine with a scope bound
// to this run's context, starts the run asynchronously, fires the engine's cancellation when
// ctx ends, and waits for the outcome.
func (c *Client) run(ctx context.Context, tk *Toolkit, input wireRunInput) (RunResult, error) {
	if c.err != nil {
		return RunResult{}, c.err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	inputJSON, err := json.Marshal(input)
	if err != nil {
		return RunResult{}, bindingError(KindInvalidArgument, "cannot encode the run input: %v", err)
	}
	var tools map[string]Tool
	var decl string
	if tk != nil {
		if tools, decl, err = tk.forRun(); err != nil {
			return RunResult{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return RunResult{}, &Error{Kind: KindCancelled, Code: codeOfKind(KindCancelled),
			Message: "run cancelled before it started: " + err.Error(), cause: err}
	}
	runCtx, stop := c.runContext(ctx)
	defer stop()
	sc := &runScope{ctx: runCtx, opts: &c.opts, tools: tools}
	er, err := c.open(sc, tk != nil, decl)
	if err != nil {
		return RunResult{}, err
	}
	defer er.close()
	out, err := er.await(ctx, sc, string(inputJSON))
	if err != nil {
		return RunResult{}, err
	}
	if out.status != statusOK {
		return RunResult{}, c.runError(ctx, sc, out)
	}
	var w wireRunResult
	if err := json.Unmarshal([]byte(out.json), &w); err != nil {
		return RunResult{}, bindingError(KindInternal, "unreadable run result: %v", err)
	}
	return w.toResult(), nil
}

// runContext is the context tools, hooks and the HTTPClient see: the caller's, with the run's
// deadline when there is one, and cancelled when the run ends.
func (c *Client) runContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.TimeoutMs > 0 {
		return context.WithTimeout(ctx, time.Duration(c.opts.TimeoutMs)*time.Millisecond)
	}
	return context.WithCancel(ctx)
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

// engineRun is the engine-side handles of one run.
type engineRun struct {
	client  *C.tn_client
	toolkit *C.tn_toolkit
	cancel  *C.tn_cancel
}

// open makes the run's client, toolkit and cancellation handles.
func (c *Client) open(sc *runScope, withTools bool, decl string) (*engineRun, error) {
	er := &engineRun{}
	var err error
	if er.client, err = c.newHandle(newScopeHandle(sc)); err != nil {
		return nil, err
	}
	if withTools {
		if er.toolkit, err = newToolkitHandle(decl, newScopeHandle(sc)); err != nil {
			er.close()
			return nil, err
		}
	}
	var errJSON *C.char
	if err := check(C.tn_cancel_new(&er.cancel, &errJSON), errJSON); err != nil {
		er.close()
		return nil, err
	}
	return er, nil
}

// close releases the handles; the engine releases the scope handles once no run uses them.
func (er *engineRun) close() {
	C.tn_cancel_free(er.cancel)
	C.tn_toolkit_free(er.toolkit)
	C.tn_client_free(er.client)
}

// await starts the run and waits for its outcome, firing the engine's cancellation if ctx
// ends first (the engine then aborts the in-flight request and ends the run). A callback that
// finishes after ctx ended fires it too, before the engine sees its answer: a tool that
// returns because it saw the cancellation must not race the watcher into another turn.
func (er *engineRun) await(ctx context.Context, sc *runScope, input string) (runOutcome, error) {
	done := make(chan runOutcome, 1)
	h := cgo.NewHandle(done)
	in := cstring(input)
	defer freeC(in)
	var errJSON *C.char
	if err := check(C.tn_go_run_async(er.client, er.toolkit, in, er.cancel, C.uintptr_t(h), &errJSON), errJSON); err != nil {
		h.Delete() // on failure the engine never calls done
		return runOutcome{}, err
	}
	if ctx.Done() == nil { // a context that is never cancelled
		return <-done, nil
	}
	sc.setSettled(func() {
		if ctx.Err() != nil {
			er.fire()
		}
	})
	stopWatch, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			er.fire()
		case <-stopWatch:
		}
	}()
	out := <-done
	close(stopWatch)
	<-watched          // the cancel handle outlives every use of it:
	sc.setSettled(nil) // by the watcher, and by late callbacks
	return out, nil
}

// fire fires the run's engine cancellation (idempotent).
func (er *engineRun) fire() {
	var errJSON *C.char
	C.tn_cancel_fire(er.cancel, &errJSON)
	takeString(errJSON)
}
