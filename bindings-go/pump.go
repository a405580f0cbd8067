package toolnexus

// The pump: the goroutine that delivers the callbacks libtoolnexus's threads post (pump.h
// says why they are posted rather than called). It sleeps in Go's poller on a pipe the
// trampolines write one byte to, so a run's callbacks wake it the way a socket would wake a
// goroutine, and what it starts (a tool's goroutine, a run's outcome) runs on Go's threads.

// #include "pump.h"
import "C"

import (
	"log"
	"os"
)

// pumpPipe is the pipe the pump reads; both ends stay open for the process's life (a
// finalizer would otherwise close the write end the trampolines use).
var pumpPipe = startPump()

// startPump creates the pipe and starts the pump; without a pipe the trampolines call the
// Go functions themselves, as they did before the pump.
func startPump() [2]*os.File {
	r, w, err := os.Pipe()
	if err != nil {
		log.Printf("toolnexus: callbacks are delivered on the library's threads (no pipe: %v)", err)
		return [2]*os.File{}
	}
	C.tn_go_pump_start(C.int(w.Fd()))
	go pump(r)
	return [2]*os.File{r, w}
}

// setPumping turns posting on or off; off, the trampolines call the Go functions on the
// library's threads, the way they go when the pump has no pipe (tests use it to keep that
// way working).
func setPumping(on bool) {
	if on && pumpPipe[1] != nil {
		C.tn_go_pump_start(C.int(pumpPipe[1].Fd()))
		return
	}
	C.tn_go_pump_stop()
}

// pump delivers every posted callback, oldest first; a pipe it cannot read turns posting off
// and it delivers what is left.
func pump(r *os.File) {
	buf := make([]byte, 64)
	for {
		_, err := r.Read(buf)
		if err != nil {
			C.tn_go_pump_stop()
			log.Printf("toolnexus: callbacks are delivered on the library's threads from now on (%v)", err)
		}
		for cb := C.tn_go_take(); cb != nil; {
			next := cb.next
			deliver(cb)
			C.tn_go_cb_free(cb)
			cb = next
		}
		if err != nil {
			return
		}
	}
}

// deliver hands one posted callback to the exported function its trampoline would have called.
func deliver(cb *C.tn_go_cb) {
	switch cb.kind {
	case C.TN_GO_CB_TOOL:
		goTool(C.uintptr_t(cb.ud), C.uintptr_t(cb.run), cb.a, C.uint64_t(cb.token))
	case C.TN_GO_CB_WAIT_FOR:
		goWaitFor(C.uintptr_t(cb.run), cb.a, C.uint64_t(cb.token))
	case C.TN_GO_CB_TOOLKIT_WAIT_FOR:
		goToolkitWaitFor(C.uintptr_t(cb.ud), C.uintptr_t(cb.run), cb.a, C.uint64_t(cb.token))
	case C.TN_GO_CB_SKILL_PROVIDER:
		goSkillProvider(C.uintptr_t(cb.ud), cb.a, C.uint64_t(cb.token))
	case C.TN_GO_CB_TRANSPORT:
		goTransport(C.uintptr_t(cb.run), cb.a, C.uint64_t(cb.token))
	case C.TN_GO_CB_HOOK:
		goHook(C.uintptr_t(cb.run), cb.a, cb.b, C.uint64_t(cb.token))
	case C.TN_GO_CB_ON_ERROR:
		goOnError(C.uintptr_t(cb.run), cb.a, C.uint64_t(cb.token))
	case C.TN_GO_CB_BODY_TRANSFORM:
		goBodyTransform(C.uintptr_t(cb.run), cb.a, C.uint64_t(cb.token))
	case C.TN_GO_CB_GENERATE:
		goGenerate(C.uintptr_t(cb.run), cb.a, C.uint64_t(cb.token))
	case C.TN_GO_CB_STORE:
		goStore(C.uintptr_t(cb.ud), C.uintptr_t(cb.run), cb.a, cb.b, C.uint64_t(cb.token))
	case C.TN_GO_CB_STREAM_EVENT:
		goStreamEvent(C.uintptr_t(cb.run), cb.a)
	case C.TN_GO_CB_DONE:
		goRunDone(C.uintptr_t(cb.run), C.int32_t(cb.status), cb.a)
	}
}
