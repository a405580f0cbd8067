package toolnexus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
)

// runScope is one run (or one Toolkit.Execute) as the engine's callbacks see it: the run's
// context and the client's host callables. The run hands the engine a cgo.Handle to it as
// the run's user_data, and each callback finds it again from its token (tn_token_run_data).
type runScope struct {
	ctx  context.Context
	opts *ClientOptions // nil for Toolkit.Execute
	// done receives the engine's outcome (buffered: the pump never waits).
	done chan runOutcome
	// onEvent gets a streamed run's events (their JSON), on the pump.
	onEvent func(string)
	// endsOnlyByItself: neither a deadline nor the caller's ctx can end the run early, so a
	// tool run before its callback returns (serve) cannot keep the run from ending in time.
	endsOnlyByItself bool

	mu       sync.Mutex
	hostErrs []error // host callables' errors; host_ref i+1 names hostErrs[i]
	// settled runs after each callback's work, before the engine is told: it fires the
	// engine's cancellation when the caller's ctx has ended, so a callback that returns
	// because of that cancellation cannot let the run go on. Set for a run's life.
	settled func()
	// helpable: this turn's tool calls the driving thread may run itself (helping.go).
	helpable []*helpable
}

func newScope(ctx context.Context, opts *ClientOptions) *runScope {
	return &runScope{ctx: ctx, opts: opts, done: make(chan runOutcome, 1)}
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

// scopeOf resolves a run's handle; false when it is not (or no longer) a scope.
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

// toolSet is the tools one engine toolkit was made from, in the order they were declared:
// the engine hands each call's tool back as its host_ref, an index here. A Toolkit makes a
// new engine toolkit (and toolSet) when tools are registered; runs started on the old one
// keep it, so a toolSet never changes.
type toolSet struct {
	tools []Tool
	// The toolkit's own callbacks (Options.WaitFor, Options.SkillProvider), and the ctx the
	// toolkit is built with, which the skill provider gets.
	waitFor       func(Request) (Answer, error)
	skillProvider func(context.Context) ([]SkillDef, error)
	ctx           context.Context
}

// waitForOutcome asks Options.WaitFor about an MCP server's elicitation. Its error goes back
// to the server as the engine words it, so it is completed as a plain error status.
func (ts *toolSet) waitForOutcome(requestJSON string) outcome {
	if ts == nil || ts.waitFor == nil {
		return reply(statusHost, "toolnexus: no Go WaitFor for this toolkit")
	}
	out := answerOutcome("WaitFor", ts.waitFor, requestJSON)
	out.hostErr = nil
	return out
}

// skillsOutcome runs Options.SkillProvider and completes with its SkillDefs; its error (or
// panic) is an error status, which the engine makes a warning.
func (ts *toolSet) skillsOutcome() outcome {
	if ts == nil || ts.skillProvider == nil {
		return reply(statusHost, "toolnexus: no Go SkillProvider for this toolkit")
	}
	ctx := ts.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	var defs []SkillDef
	err := guard("SkillProvider", func() (err error) {
		defs, err = ts.skillProvider(ctx)
		return err
	})
	if err != nil {
		return reply(statusHost, err.Error())
	}
	if defs == nil {
		defs = []SkillDef{}
	}
	b, err := json.Marshal(defs)
	if err != nil {
		return reply(statusHost, fmt.Sprintf("SkillProvider returned skills that are not JSON: %v", err))
	}
	return reply(statusOK, string(b))
}

// outcome runs the Go tool a call names, in the run of sc, and returns the completion for it.
// A tool's error becomes an error result, never the run's error, so it travels as a plain
// message.
func (ts *toolSet) outcome(sc *runScope, callJSON string) outcome {
	call, err := decodeToolCall(callJSON)
	if err != nil {
		return reply(statusHost, "toolnexus: unreadable tool call: "+err.Error())
	}
	if ts == nil || call.HostRef == nil || *call.HostRef >= uint64(len(ts.tools)) || ts.tools[*call.HostRef].Execute == nil {
		return reply(statusHost, fmt.Sprintf("toolnexus: no Go function for tool %q", call.Name))
	}
	tool := ts.tools[*call.HostRef]
	if call.Args == nil {
		call.Args = map[string]any{}
	}
	tc := &ToolContext{Ctx: sc.ctx, Timeout: call.TimeoutMs, Answer: call.Answer, CallID: call.CallID}
	var result ToolResult
	err = guard("tool "+call.Name, func() (err error) {
		result, err = tool.Execute(call.Args, tc)
		return err
	})
	if err == nil {
		err = firstPartErr(result.Parts)
	}
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
	return answerOutcome("WaitFor", s.opts.WaitFor, requestJSON)
}

// answerOutcome asks waitFor (named what) about the Request of requestJSON.
func answerOutcome(what string, waitFor func(Request) (Answer, error), requestJSON string) outcome {
	var req Request
	if err := json.Unmarshal([]byte(requestJSON), &req); err != nil {
		return reply(statusHost, "toolnexus: unreadable request: "+err.Error())
	}
	var ans Answer
	err := guard(what, func() (err error) {
		ans, err = waitFor(req)
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
		return failed(fmt.Errorf("%s returned an Answer that is not JSON: %w", what, err))
	}
	return reply(statusOK, string(b))
}

// bodyTransformOutcome hands the request body to ClientOptions.BodyTransform: nil sends it
// as built, a map replaces it.
func (s *runScope) bodyTransformOutcome(bodyJSON string) outcome {
	var body map[string]any
	if err := json.Unmarshal([]byte(bodyJSON), &body); err != nil {
		return reply(statusHost, "toolnexus: unreadable request body: "+err.Error())
	}
	var out map[string]any
	if err := guard("BodyTransform", func() error {
		out = s.opts.BodyTransform(body)
		return nil
	}); err != nil {
		return failed(err)
	}
	if out == nil {
		return reply(statusOK, "null")
	}
	b, err := json.Marshal(out)
	if err != nil {
		return failed(fmt.Errorf("BodyTransform returned a body that is not JSON: %w", err))
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
