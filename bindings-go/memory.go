package toolnexus

// Conversation stores: the port's ConversationStore interface, the engine's own stores
// (InMemoryConversationStore, SqliteConversationStore) as Go types over a tn_store handle,
// and a host's store served to the engine through tn_store_new_host.

// #include "bridge.h"
import "C"

import (
	"encoding/json"
	"runtime"
	"runtime/cgo"
	"sync"
)

// ConversationStore is where Client.Ask keeps conversations by id (ClientOptions.Store).
// Get returns nil when id has no transcript. Any implementation works; the engine's own
// stores (NewInMemoryConversationStore, OpenSqliteConversationStore) also record what a
// halted run waits on and hold a conversation while a run uses it.
type ConversationStore interface {
	// Get returns the stored transcript for id, or nil when there is none.
	Get(id string) ([]any, error)
	// Save stores the updated transcript for id.
	Save(id string, messages []any) error
}

// PendingRun is a conversation waiting on a request (PendingRuns).
type PendingRun struct {
	// ID is the conversation id.
	ID string `json:"id"`
	// Request is what the halted run waits on; answer it with Client.AskWithAnswer.
	Request Request `json:"request"`
	// SinceMs is when the run halted, in milliseconds since the Unix epoch.
	SinceMs int64 `json:"since_ms"`
}

// storeState is an engine store handle, freed by Close or once unreachable.
type storeState struct {
	mu     sync.RWMutex // held for reading while a call uses native
	native *C.tn_store  // nil once closed (or never made)
	err    error        // why it was never made
}

// newStoreState keeps native (made by make, unless it failed) until Close or unreachable.
func newStoreState(make func(out **C.tn_store, errJSON **C.char) C.int32_t) *storeState {
	st := &storeState{err: abiErr}
	if st.err == nil {
		var out *C.tn_store
		var errJSON *C.char
		if st.err = check(make(&out, &errJSON), errJSON); st.err == nil {
			st.native = out
			runtime.SetFinalizer(st, (*storeState).free)
		}
	}
	return st
}

// with calls use with the engine store, holding it so that Close cannot free it meanwhile.
func (st *storeState) with(use func(*C.tn_store) error) error {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.err != nil {
		return st.err
	}
	// A closed store is NULL: the engine's own error says so.
	return use(st.native)
}

func (st *storeState) free() {
	st.mu.Lock()
	defer st.mu.Unlock()
	C.tn_store_free(st.native)
	st.native = nil
}

// engineStore is what the engine's stores share: their handle and their methods.
type engineStore struct{ state *storeState }

// engine is the handle of an engine store (the ConversationStore values this package made).
func (s engineStore) engine() *storeState { return s.state }

// Get returns the stored transcript for id, or nil when there is none.
func (s engineStore) Get(id string) ([]any, error) {
	var messages []any
	err := s.state.with(func(st *C.tn_store) error {
		cid := ctext(id)
		defer freeC(cid)
		var out, errJSON *C.char
		if err := check(C.tn_store_get(st, cid, &out, &errJSON), errJSON); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(takeString(out)), &messages); err != nil {
			return bindingError(KindInternal, "unreadable transcript: %v", err)
		}
		return nil
	})
	return messages, err
}

// Save stores messages as the transcript of id (a pending request it had is dropped).
func (s engineStore) Save(id string, messages []any) error {
	if messages == nil {
		messages = []any{}
	}
	raw, err := json.Marshal(messages)
	if err != nil {
		return bindingError(KindInvalidArgument, "cannot encode the transcript: %v", err)
	}
	return s.state.with(func(st *C.tn_store) error {
		cid, cm := ctext(id), cstring(string(raw))
		defer freeC(cid)
		defer freeC(cm)
		var errJSON *C.char
		return check(C.tn_store_save(st, cid, cm, &errJSON), errJSON)
	})
}

// PendingRuns lists the conversations waiting on a request, oldest first: enough to build an
// approvals queue on.
func (s engineStore) PendingRuns() ([]PendingRun, error) {
	var runs []PendingRun
	err := s.state.with(func(st *C.tn_store) error {
		var out, errJSON *C.char
		if err := check(C.tn_store_pending_runs(st, &out, &errJSON), errJSON); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(takeString(out)), &runs); err != nil {
			return bindingError(KindInternal, "unreadable pending runs: %v", err)
		}
		return nil
	})
	return runs, err
}

// Close releases the store handle; clients using the store keep it alive. Calls after Close
// fail. Idempotent.
func (s engineStore) Close() error {
	s.state.free()
	return nil
}

// InMemoryConversationStore is the engine's in-memory store, the default of a Client:
// conversations live as long as the store. Safe for concurrent use.
type InMemoryConversationStore struct{ engineStore }

// NewInMemoryConversationStore makes an empty in-memory store. (Should the engine refuse it,
// every method returns why.)
func NewInMemoryConversationStore() *InMemoryConversationStore {
	return &InMemoryConversationStore{engineStore{newStoreState(func(out **C.tn_store, errJSON **C.char) C.int32_t {
		return C.tn_store_new_memory(out, errJSON)
	})}}
}

// SqliteConversationStore keeps conversations in one SQLite file. Processes of one machine
// may share it: a run holds its conversation with a lock the system drops if the process
// dies, so a halted run resumes exactly once, in this process or another.
type SqliteConversationStore struct {
	engineStore
	// Path is the database file (":memory:" for a private database).
	Path string
}

// OpenSqliteConversationStore opens the SQLite store at path, creating it when missing. A
// file that cannot be opened is an error of KindStore.
func OpenSqliteConversationStore(path string) (*SqliteConversationStore, error) {
	st, err := openStore(path, func(p *C.char, out **C.tn_store, errJSON **C.char) C.int32_t {
		return C.tn_store_open_sqlite(p, out, errJSON)
	})
	if err != nil {
		return nil, err
	}
	return &SqliteConversationStore{engineStore{st}, path}, nil
}

// openStore makes an engine store with open(arg).
func openStore(arg string, open func(*C.char, **C.tn_store, **C.char) C.int32_t) (*storeState, error) {
	carg := ctext(arg)
	defer freeC(carg)
	st := newStoreState(func(out **C.tn_store, errJSON **C.char) C.int32_t { return open(carg, out, errJSON) })
	return st, st.err
}

// PostgresConversationStore keeps conversations in a PostgreSQL database, for runs shared by
// many machines: a run holds its conversation with a lock the database drops if the process
// dies. It connects on first use (a failure then is an error of KindStore).
type PostgresConversationStore struct{ engineStore }

// OpenPostgresConversationStore makes the store for the database at url
// ("postgres://user:pass@host:port/db"). A URL that does not parse is an error of
// KindInvalidArgument; no error repeats its password.
func OpenPostgresConversationStore(url string) (*PostgresConversationStore, error) {
	st, err := openStore(url, func(u *C.char, out **C.tn_store, errJSON **C.char) C.int32_t {
		return C.tn_store_open_postgres(u, out, errJSON)
	})
	if err != nil {
		return nil, err
	}
	return &PostgresConversationStore{engineStore{st}}, nil
}

// engineStorer is implemented by the engine's stores.
type engineStorer interface{ engine() *storeState }

// withStoreHandle calls use with a tn_store for s: an engine store's own handle, or a host
// store made for s (the engine owns the Go value from then on, releasing it through
// goRelease).
func withStoreHandle(s ConversationStore, use func(*C.tn_store) error) error {
	if es, ok := s.(engineStorer); ok {
		return es.engine().with(use)
	}
	var out *C.tn_store
	var errJSON *C.char
	if err := check(C.tn_go_store_new_host(C.uintptr_t(cgo.NewHandle(s)), &out, &errJSON), errJSON); err != nil {
		return err
	}
	defer C.tn_store_free(out) // the client made with it keeps it alive
	return use(out)
}

// goStore serves a host store's get or save. Called during a run (run: the run's scope), a
// failure the store returns ends the run with an *Error that unwraps to it.
//
//export goStore
func goStore(store, run C.uintptr_t, op, requestJSON *C.char, token C.uint64_t) {
	name, req, tok := C.GoString(op), C.GoString(requestJSON), uint64(token)
	s, _ := handleValue(cgo.Handle(uintptr(store))).(ConversationStore)
	work := func(*runScope) outcome { return storeOutcome(s, name, req) }
	if sc, ok := scopeOf(uintptr(run)); ok && run != 0 {
		serve(sc, tok, work)
		return
	}
	go func() {
		out := work(nil)
		complete(tok, out.status, out.payload)
	}()
}

// storeOutcome runs one get or save of the host's store; a returned error or a panic fails
// the run with its message.
func storeOutcome(s ConversationStore, op, requestJSON string) outcome {
	var payload string
	err := guard("the conversation store", func() error {
		var req struct {
			ID       string `json:"id"`
			Messages []any  `json:"messages"`
		}
		if s == nil || json.Unmarshal([]byte(requestJSON), &req) != nil {
			return bindingError(KindInternal, "a conversation store call this binding cannot serve")
		}
		switch op {
		case "get":
			messages, err := s.Get(req.ID)
			if err != nil {
				return err
			}
			raw, err := json.Marshal(messages) // nil is null: no transcript
			if err != nil {
				return bindingError(KindInvalidArgument, "cannot encode the stored transcript: %v", err)
			}
			payload = string(raw)
			return nil
		case "save":
			payload = "null"
			return s.Save(req.ID, req.Messages)
		}
		return bindingError(KindInternal, "unknown conversation store operation %q", op)
	})
	if err != nil {
		return failed(err)
	}
	return reply(statusOK, payload)
}
