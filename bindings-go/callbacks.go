package toolnexus

// The exported Go functions the C trampolines in bridge.c call: on the thread driving a run
// (tn_go_run_here), directly; else through the pump (pump.go) or, when a callback cannot be
// posted, on the library's thread itself. Each copies its strings, starts a goroutine for the
// host's code and returns at once: a Go callable may block (a human approving, a slow tool)
// without holding up the pump or the engine's thread. The goroutine answers with
// tn_complete. A tool call on a driving thread may run before returning instead (mayRunHere),
// and then run its siblings that no goroutine has begun (helping.go).
//
// `run` is the scope of the run the callback's token belongs to (the run's user_data, found
// by tn_token_run_data): one engine client and one engine toolkit serve every run, and this
// is how a callback knows which run, and so which ctx, it serves.

// #include "bridge.h"
// #include "pump.h"
import "C"

import (
	"context"
	"runtime/cgo"
	"strings"
)

// dispatch resolves the run's scope and runs work on its own goroutine, completing the token
// with its outcome; a callback whose run has ended (or that no run of this package issued)
// is answered at once. A tool call of no run at all (MCP serve's) is goTool's own case.
func dispatch(run C.uintptr_t, token C.uint64_t, work func(*runScope) outcome) {
	tok := uint64(token)
	sc, ok := scopeOf(uintptr(run))
	if !ok {
		complete(tok, statusHost, "toolnexus: a callback arrived for a run that has ended")
		return
	}
	serve(sc, tok, work)
}

// serve runs work for sc on its own goroutine and completes the token with its outcome.
func serve(sc *runScope, tok uint64, work func(*runScope) outcome) {
	go finish(sc, tok, work)
}

// finish runs work and completes the token with its outcome.
func finish(sc *runScope, tok uint64, work func(*runScope) outcome) {
	out := work(sc)
	sc.callbackDone()
	if out.hostErr != nil {
		completeHostError(tok, out.payload, sc.hostRef(out.hostErr))
		return
	}
	complete(tok, out.status, out.payload)
}

// lastToStart is how the engine's tool call JSON begins when every other call of its turn
// has started (tn_tool_fn: the key always comes first).
const lastToStart = `{"last_to_start":true,`

// mayRunHere says whether sc's tool calls may run on the thread driving the run
// (tn_go_run_here), before a callback returns, instead of on goroutines of their own: a
// goroutine costs two thread wake-ups (measured: about half a weather run's time through this
// binding). Only when nothing (a deadline, the ctx) could end the run while a tool runs. Even
// then only the last call of a turn to start runs at once (every sibling is already running,
// so none waits for it); the others get goroutines and may be helped (helping.go).
func mayRunHere(sc *runScope) bool {
	return sc.endsOnlyByItself && C.tn_go_driving(-1) == 1
}

//export goTool
func goTool(tools, run C.uintptr_t, callJSON *C.char, token C.uint64_t) {
	call := C.GoString(callJSON)
	set, _ := handleValue(cgo.Handle(uintptr(tools))).(*toolSet)
	work := func(sc *runScope) outcome { return set.outcome(sc, call) }
	if run == 0 { // a call of no run (MCP serve's tools/call): served on a scope of its own
		serve(newScope(context.Background(), nil), uint64(token), work)
		return
	}
	if sc, ok := scopeOf(uintptr(run)); ok && mayRunHere(sc) {
		if strings.HasPrefix(call, lastToStart) {
			finish(sc, uint64(token), work)
			sc.help() // its siblings that no goroutine has begun yet
		} else {
			sc.startHelpable(uint64(token), work)
		}
		return
	}
	dispatch(run, token, work)
}

//export goWaitFor
func goWaitFor(run C.uintptr_t, requestJSON *C.char, token C.uint64_t) {
	req := C.GoString(requestJSON)
	dispatch(run, token, func(sc *runScope) outcome { return sc.waitForOutcome(req) })
}

//export goToolkitWaitFor
func goToolkitWaitFor(tools, run C.uintptr_t, requestJSON *C.char, token C.uint64_t) {
	req := C.GoString(requestJSON)
	set, _ := handleValue(cgo.Handle(uintptr(tools))).(*toolSet)
	work := func(*runScope) outcome { return set.waitForOutcome(req) }
	if run == 0 { // an elicitation of no run (at connect, or of MCP serve's tools/call)
		serve(newScope(context.Background(), nil), uint64(token), work)
		return
	}
	dispatch(run, token, work)
}

// goSkillProvider runs Options.SkillProvider; it is called while the toolkit is built, by no run.
//
//export goSkillProvider
func goSkillProvider(tools C.uintptr_t, requestJSON *C.char, token C.uint64_t) {
	_ = requestJSON // "{}": reserved
	set, _ := handleValue(cgo.Handle(uintptr(tools))).(*toolSet)
	serve(newScope(context.Background(), nil), uint64(token), func(*runScope) outcome { return set.skillsOutcome() })
}

//export goTransport
func goTransport(run C.uintptr_t, requestJSON *C.char, token C.uint64_t) {
	req := C.GoString(requestJSON)
	dispatch(run, token, func(sc *runScope) outcome { return sc.transportOutcome(req) })
}

//export goHook
func goHook(run C.uintptr_t, hook *C.char, eventJSON *C.char, token C.uint64_t) {
	name, ev := C.GoString(hook), C.GoString(eventJSON)
	dispatch(run, token, func(sc *runScope) outcome { return sc.hookOutcome(name, ev) })
}

//export goOnError
func goOnError(run C.uintptr_t, infoJSON *C.char, token C.uint64_t) {
	info := C.GoString(infoJSON)
	dispatch(run, token, func(sc *runScope) outcome { return sc.onErrorOutcome(info) })
}

//export goBodyTransform
func goBodyTransform(run C.uintptr_t, bodyJSON *C.char, token C.uint64_t) {
	body := C.GoString(bodyJSON)
	dispatch(run, token, func(sc *runScope) outcome { return sc.bodyTransformOutcome(body) })
}

//export goGenerate
func goGenerate(run C.uintptr_t, requestJSON *C.char, token C.uint64_t) {
	req := C.GoString(requestJSON)
	dispatch(run, token, func(sc *runScope) outcome { return sc.generateOutcome(req) })
}

//export goRunDone
func goRunDone(run C.uintptr_t, status C.int32_t, json *C.char) {
	out := runOutcome{status: int(status), json: C.GoString(json)}
	handle := cgo.Handle(uintptr(run))
	if sc, ok := handleValue(handle).(*runScope); ok {
		sc.done <- out // buffered: never blocks the pump (or the library's thread)
		handle.Delete()
	}
}

//export goRelease
func goRelease(h C.uintptr_t) {
	handle := cgo.Handle(uintptr(h))
	if handleValue(handle) != nil {
		handle.Delete()
	}
}

// handleValue is the handle's value, or nil for a handle that is not live.
func handleValue(h cgo.Handle) (v any) {
	defer func() {
		if recover() != nil {
			v = nil
		}
	}()
	return h.Value()
}
