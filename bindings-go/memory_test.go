package toolnexus_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// userContents is the content of every user message of an OpenAI request body, in order.
func userContents(body any) []any {
	var out []any
	msgs, _ := body.(map[string]any)["messages"].([]any)
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "user" {
			out = append(out, mm["content"])
		}
	}
	return out
}

func TestAskRemembersByID(t *testing.T) {
	mock := newMock(t)
	client := openaiClient(t, mock, nil)
	mock.script(textReply("one"), textReply("two"), textReply("solo"))
	if _, err := client.Ask(testCtx(t), "first", nil, "c1"); err != nil {
		t.Fatal(err)
	}
	second, err := client.Ask(testCtx(t), "second", nil, "c1")
	if err != nil || second.Text != "two" {
		t.Fatalf("got %+v, %v", second, err)
	}
	if _, err := client.Ask(testCtx(t), "alone", nil, ""); err != nil {
		t.Fatal(err)
	}
	seen := mock.seen()
	if got := userContents(seen[1].Body); len(got) != 2 || got[0] != "first" || got[1] != "second" {
		t.Fatalf("the second ask carries the first exchange: %v", got)
	}
	if got := userContents(seen[2].Body); len(got) != 1 || got[0] != "alone" {
		t.Fatalf("an ask without an id is stateless: %v", got)
	}
	// The client's own store is what Ask used.
	stored, err := client.ConversationStore().Get("c1")
	if err != nil || len(stored) != len(second.Messages) {
		t.Fatalf("the client's store holds %d messages (%v), the result %d", len(stored), err, len(second.Messages))
	}
	if _, ok := client.ConversationStore().(*tn.InMemoryConversationStore); !ok {
		t.Fatalf("the default store is %T", client.ConversationStore())
	}
}

// recordingStore is a host ConversationStore that records its calls.
type recordingStore struct {
	mu    sync.Mutex
	calls []string
	byID  map[string][]any
	fail  error
}

func (s *recordingStore) Get(id string) ([]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "get:"+id)
	return s.byID[id], s.fail
}

func (s *recordingStore) Save(id string, messages []any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "save:"+id)
	s.byID[id] = messages
	return nil
}

func TestAHostStoreIsCalled(t *testing.T) {
	mock := newMock(t)
	store := &recordingStore{byID: map[string][]any{}}
	client := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Store = store })
	if client.ConversationStore() != tn.ConversationStore(store) {
		t.Fatal("ConversationStore is the options' own store")
	}
	mock.script(textReply("one"), textReply("two"))
	if _, err := client.Ask(testCtx(t), "first", nil, "u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Ask(testCtx(t), "second", nil, "u1"); err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	calls, kept := append([]string(nil), store.calls...), len(store.byID["u1"])
	store.mu.Unlock()
	if len(calls) != 4 || calls[0] != "get:u1" || calls[1] != "save:u1" || calls[2] != "get:u1" || kept != 4 {
		t.Fatalf("calls %v, %d messages kept", calls, kept)
	}
	if got := userContents(mock.seen()[1].Body); len(got) != 2 {
		t.Fatalf("the host store's transcript was sent: %v", got)
	}

	fire := errors.New("disk on fire")
	store.fail = fire
	mock.script(textReply("never"))
	_, err := client.Ask(testCtx(t), "third", nil, "u1")
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindHost || !errors.Is(err, fire) {
		t.Fatalf("a failing store fails the run with its error: %v", err)
	}
	if n := len(mock.seen()); n != 0 {
		t.Fatalf("%d requests were sent", n)
	}
}

func TestHaltedAskResumesByIDOnce(t *testing.T) {
	mock := newMock(t)
	d := &deployTool{}
	tk := toolkit(t, d.tool())
	store := tn.NewInMemoryConversationStore()
	defer store.Close()
	client := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Store = store })
	mock.script(callReply("call_1:deploy"))
	halted, err := client.Ask(testCtx(t), "ship it", tk, "r1")
	if err != nil || halted.Status != "pending" || halted.Pending == nil {
		t.Fatalf("got %+v, %v", halted, err)
	}
	runs, err := store.PendingRuns()
	if err != nil || len(runs) != 1 || runs[0].ID != "r1" || runs[0].Request.ID != halted.Pending.ID || runs[0].SinceMs <= 0 {
		t.Fatalf("pending runs %+v, %v", runs, err)
	}
	// A new prompt over the pending request is refused.
	_, err = client.Ask(testCtx(t), "hello?", tk, "r1")
	if te := (*tn.Error)(nil); !errors.As(err, &te) || te.Kind != tn.KindConflict {
		t.Fatalf("a prompt over a pending request: %v", err)
	}

	mock.script(textReply("Deployed."))
	answer := tn.AnswerOutput(halted.Pending.ID, "approved")
	done, err := client.AskWithAnswer(testCtx(t), tk, "r1", tn.Request{}, answer)
	if err != nil || done.Status != "done" || done.Text != "Deployed." {
		t.Fatalf("resumed: %+v, %v", done, err)
	}
	if tools := toolMessages(mock.seen()[0].Body); len(tools) != 1 || tools[0]["content"] != "deployed: approved" {
		t.Fatalf("the resumed request carries %v", tools)
	}
	if runs, _ := store.PendingRuns(); len(runs) != 0 {
		t.Fatalf("nothing waits after the resume: %+v", runs)
	}

	mock.script(textReply("again"))
	_, err = client.AskWithAnswer(testCtx(t), tk, "r1", *halted.Pending, answer)
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindConflict || te.Code != 12 {
		t.Fatalf("a second resume is a conflict: %v", err)
	}
	if len(mock.seen()) != 0 || len(d.callIDs) != 2 {
		t.Fatalf("the second resume sent %d requests, the tool ran %d times", len(mock.seen()), len(d.callIDs))
	}
}

func TestSqliteStoreSurvivesANewHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conversations.db")
	mock := newMock(t)
	tk := toolkit(t, (&deployTool{}).tool())
	store, err := tn.OpenSqliteConversationStore(path)
	if err != nil {
		t.Fatal(err)
	}
	mock.script(textReply("noted"), callReply("call_1:deploy"))
	client := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Store = store })
	if _, err := client.Ask(testCtx(t), "my name is Ann", tk, "ann"); err != nil {
		t.Fatal(err)
	}
	halted, err := client.Ask(testCtx(t), "deploy", tk, "ann")
	if err != nil || halted.Status != "pending" {
		t.Fatalf("got %+v, %v", halted, err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get("ann"); err == nil {
		t.Fatal("a closed store answers with an error")
	}

	again, err := tn.OpenSqliteConversationStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	messages, err := again.Get("ann")
	if err != nil || len(messages) != len(halted.Messages) {
		t.Fatalf("a new handle reads %d messages (%v), want %d", len(messages), err, len(halted.Messages))
	}
	runs, err := again.PendingRuns()
	if err != nil || len(runs) != 1 || runs[0].ID != "ann" || runs[0].Request.ID != halted.Pending.ID {
		t.Fatalf("pending runs %+v, %v", runs, err)
	}
	mock.script(textReply("Deployed."))
	fresh := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Store = again })
	done, err := fresh.AskWithAnswer(testCtx(t), tk, "ann", tn.Request{}, tn.AnswerOutput(halted.Pending.ID, "ok"))
	if err != nil || done.Status != "done" {
		t.Fatalf("resumed from the file: %+v, %v", done, err)
	}
	if got := userContents(mock.seen()[0].Body); len(got) != 2 || got[0] != "my name is Ann" {
		t.Fatalf("the resumed request carries the stored conversation: %v", got)
	}
	if missing, err := again.Get("nobody"); err != nil || missing != nil {
		t.Fatalf("an unknown id is nil: %v, %v", missing, err)
	}

	_, err = tn.OpenSqliteConversationStore(filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"))
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindStore {
		t.Fatalf("an unopenable file: %v", err)
	}
}

func TestAskStreamRemembers(t *testing.T) {
	url := sseServer(t, nil, textEvents("he", "llo"))
	client, err := tn.NewClient(tn.ClientOptions{BaseURL: url, Model: "m", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	var deltas []string
	r, err := client.AskStream(testCtx(t), "hi", nil, "s1", func(d string) { deltas = append(deltas, d) })
	if err != nil || r.Text != "hello" || len(deltas) != 2 {
		t.Fatalf("got %+v, %v, deltas %v", r, err, deltas)
	}
	stored, err := client.ConversationStore().Get("s1")
	if err != nil || len(stored) != 2 {
		t.Fatalf("the streamed turn was remembered: %v, %v", stored, err)
	}
}

func TestConversationKeepsItsTranscript(t *testing.T) {
	mock := newMock(t)
	conv := openaiClient(t, mock, nil).Conversation(nil)
	mock.script(textReply("a"), textReply("b"))
	if _, err := conv.Send(testCtx(t), "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := conv.Send(testCtx(t), "two"); err != nil {
		t.Fatal(err)
	}
	if got := userContents(mock.seen()[1].Body); len(got) != 2 || len(conv.Messages) != 4 {
		t.Fatalf("the conversation carries its transcript: %v, %d messages", got, len(conv.Messages))
	}
	conv.Reset()
	if conv.Messages != nil {
		t.Fatal("Reset forgets")
	}
}

// panickyStore panics on every call.
type panickyStore struct{}

func (panickyStore) Get(string) ([]any, error) { panic("no disk") }
func (panickyStore) Save(string, []any) error  { panic("no disk") }

func TestAPanickingStoreFailsTheRun(t *testing.T) {
	mock := newMock(t)
	client := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Store = panickyStore{} })
	_, err := client.Ask(testCtx(t), "hi", nil, "p1")
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindHost || !strings.Contains(err.Error(), "no disk") {
		t.Fatalf("got %v", err)
	}
}

// postgresURL is the server tests/postgres/with-postgres.sh started; under CI it must be there.
func postgresURL(t *testing.T) string {
	url := os.Getenv("TN_POSTGRES_URL")
	if url == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("TN_POSTGRES_URL is not set (run under tests/postgres/with-postgres.sh)")
		}
		t.Skip("no TN_POSTGRES_URL (tests/postgres/with-postgres.sh starts a server)")
	}
	return url
}

func TestPostgresStoreIsSharedByClients(t *testing.T) {
	url := postgresURL(t)
	id := fmt.Sprintf("go-%d-%d", os.Getpid(), time.Now().UnixNano())
	store, err := tn.OpenPostgresConversationStore(url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mock := newMock(t)
	tk := toolkit(t, (&deployTool{}).tool())
	mock.script(callReply("call_1:deploy"))
	first := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Store = store })
	halted, err := first.Ask(testCtx(t), "deploy", tk, id)
	if err != nil || halted.Status != "pending" {
		t.Fatalf("got %+v, %v", halted, err)
	}
	other, err := tn.OpenPostgresConversationStore(url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	mock.script(textReply("Deployed."))
	second := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Store = other })
	done, err := second.AskWithAnswer(testCtx(t), tk, id, tn.Request{}, tn.AnswerOutput(halted.Pending.ID, "ok"))
	if err != nil || done.Status != "done" {
		t.Fatalf("resumed through another store: %+v, %v", done, err)
	}
	_, err = first.AskWithAnswer(testCtx(t), tk, id, tn.Request{}, tn.AnswerOutput(halted.Pending.ID, "ok"))
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindConflict {
		t.Fatalf("a second resume is a conflict: %v", err)
	}
	if _, err := tn.OpenPostgresConversationStore("postgres://u:pw@[bad"); !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument || strings.Contains(err.Error(), "pw") {
		t.Fatalf("a bad URL: %v", err)
	}
}
