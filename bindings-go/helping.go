package toolnexus

import "sync/atomic"

// A tool call of a driven run that is not the last of its turn to start still gets a
// goroutine of its own at once, so it runs beside its siblings. But waking a thread for that
// goroutine takes longer than a quick tool takes to run, and the driving thread, once its
// own call (the last to start, mayRunHere) is done, would park in C until that thread has
// finished. So the driver first runs, itself, every sibling whose goroutine has not begun
// it: a call starts no later than it did, and the run goes on without waiting for a wake-up.
// Whoever claims a call first runs it; the other finds it claimed and does nothing.

// helpable is one such sibling call.
type helpable struct {
	claimed atomic.Bool
	sc      *runScope
	tok     uint64
	work    func(*runScope) outcome
}

// run runs the call unless its goroutine or the driver already has; it says whether it ran.
func (h *helpable) run() bool {
	if !h.claimed.CompareAndSwap(false, true) {
		return false
	}
	finish(h.sc, h.tok, h.work)
	return true
}

// helped counts the calls driving threads ran for goroutines that had not begun them (the
// tests' proof that the way is taken).
var helped atomic.Int64

// startHelpable starts the call on its own goroutine and remembers it for help.
func (s *runScope) startHelpable(tok uint64, work func(*runScope) outcome) {
	h := &helpable{sc: s, tok: tok, work: work}
	s.mu.Lock()
	s.helpable = append(s.helpable, h)
	s.mu.Unlock()
	go h.run()
}

// help runs, on the calling (driving) thread, the remembered calls no goroutine has begun.
func (s *runScope) help() {
	s.mu.Lock()
	calls := s.helpable
	s.helpable = nil
	s.mu.Unlock()
	for _, h := range calls {
		if h.run() {
			helped.Add(1)
		}
	}
}
