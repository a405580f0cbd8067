package toolnexus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
)

// runScope is what the engine's callbacks reach through their user_data (a cgo.Handle): the
// run's context, the client's host callables and the toolkit's tools. One scope per run (or
// per Toolkit.Execute) is how a callback knows which run, and so which ctx, it serves.
type runScope struct {
	ctx   context.Context
	opts  *ClientOptions  // nil for Toolkit.Execute
	tools map[string]Tool // by sanitized name; nil without a toolkit

	mu       sync.Mutex
	hostErrs []error // host callables' errors; host_ref i+1 names hostErrs[i]
	// settled runs after each callback's work, before the engine is told: it fires the
	// engine's cancellation when the caller's ctx has ended, so a callback that returns
	// because of that cancellation cannot let the run go on. Set for a run's life.
	settled func()
}

// setSettled installs (or, with nil, removes) the hook run after each callback.
func (s *runScope) setSettled(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settled = f
}

// callbackDone runs the settled hook, under the lock that keeps it from being removed (and
// the handles it uses from being freed) meanwhile.
func (s *runScope) callbackDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.settled != nil {
		s.settled()
	}
}

// outcome is how a callback is completed: a status and its payload, or a host error the
// engine is told about by reference (tn_complete_host_error).
type outcome struct {
	status  int
	payload string
	hostErr error
}

func reply(status int, payload string) outcome { return outcome{status: status, payload: payload} }

func failed(err error) outcome {
	return outcome{status: statusHost, payload: err.Error(), hostErr: err}
}

// newScopeHandle makes the handle the engine hands back to every callback. The engine releases
// it (goRelease) when the client or toolkit holding it is freed and no run uses it.
func newScopeHandle(sc *runScope) uintptr { return uintptr(cgo.NewHandle(sc)) }

// scopeOf resolves a callback's handle; false when it is not (or no longer) a scope.
func scopeOf(h uintptr) (*runScope, bool) {
	sc, ok := handleValue(cgo.Handle(h)).(*runScope)
	return sc, ok
}

// hostRef keeps a host callable's error and returns the reference the engine carries back in
// the run's error JSON ("host_ref"), so the run's *Error unwraps to the host's own error.
func (s *runScope) hostRef(err error) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hostErrs = append(s.hostErrs, err)
	return uint64(len(s.hostErrs))
}

// hostErr is the error behind a reference, or nil.
func (s *runScope) hostErr(ref uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ref == 0 || ref > uint64(len(s.hostErrs)) {
		return nil
	}
	return s.hostErrs[ref-1]
}

// guard runs f and turns a panic in it into an error naming what panicked.
func guard(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked: %v", what, r)
		}
	}()
	return f()
}

// toolOutcome runs the Go tool a call names and returns the completion for it. A tool's error
// becomes an error result, never the run's error, so it travels as a plain message.
func (s *runScope) toolOutcome(callJSON string) outcome {
	var call wireToolCall
	if err := json.Unmarshal([]byte(callJSON), &call); err != nil {
		return reply(statusHost, "toolnexus: unreadable tool call: "+err.Error())
	}
	tool, ok := s.tools[call.Name]
	if !ok || tool.Execute == nil {
		return reply(statusHost, fmt.Sprintf("toolnexus: no Go function for tool %q", call.Name))
	}
	if call.Args == nil {
		call.Args = map[string]any{}
	}
	tc := &ToolContext{Ctx: s.ctx, Timeout: call.TimeoutMs, Answer: call.Answer, CallID: call.CallID}
	var result ToolResult
	err := guard("tool "+call.Name, func() (err error) {
		result, err = tool.Execute(call.Args, tc)
		return err
	})
	if err != nil {
		return reply(statusHost, err.Error())
	}
	b, err := json.Marshal(toWireResult(result))
	if err != nil {
		return reply(statusHost, fmt.Sprintf("tool %s returned a result that is not JSON: %v", call.Name, err))
	}
	return reply(statusOK, string(b))
}

// waitForOutcome asks ClientOptions.WaitFor to resolve a suspension. The zero Answer means
// "no answer" (a decline); an Answer with an empty ID answers the Request it was given.
func (s *runScope) waitForOutcome(requestJSON string) outcome {
	var req Request
	if err := json.Unmarshal([]byte(requestJSON), &req); err != nil {
		return reply(statusHost, "toolnexus: unreadable request: "+err.Error())
	}
	var ans Answer
	err := guard("WaitFor", func() (err error) {
		ans, err = s.opts.WaitFor(req)
		return err
	})
	if err != nil {
		return failed(err)
	}
	if ans.ID == "" && !ans.Ok && ans.Data == nil && ans.Reason == "" {
		return reply(statusOK, "null")
	}
	if ans.ID == "" {
		ans.ID = req.ID
	}
	b, err := json.Marshal(ans)
	if err != nil {
		return failed(fmt.Errorf("WaitFor returned an Answer that is not JSON: %w", err))
	}
	return reply(statusOK, string(b))
}

// onErrorOutcome asks ClientOptions.OnError to classify a failed model call.
func (s *runScope) onErrorOutcome(infoJSON string) outcome {
	var raw struct {
		Status    int     `json:"status"`
		Error     *string `json:"error"`
		Attempt   int     `json:"attempt"`
		Retryable bool    `json:"retryable"`
	}
	if err := json.Unmarshal([]byte(infoJSON), &raw); err != nil {
		return reply(statusHost, "toolnexus: unreadable error info: "+err.Error())
	}
	info := ErrorInfo{Status: raw.Status, Attempt: raw.Attempt, Retryable: raw.Retryable}
	if raw.Error != nil {
		info.Err = errors.New(*raw.Error)
	}
	var tier Tier
	err := guard("OnError", func() error {
		tier = s.opts.OnError(info)
		return nil
	})
	if err == nil && tier != TierRetry && tier != TierFail {
		err = fmt.Errorf("OnError returned %q; want TierRetry or TierFail", tier)
	}
	if err != nil {
		return failed(err)
	}
	return reply(statusOK, `"`+string(tier)+`"`)
}
