package toolnexus

// Conversation memory on the Client: runs with a conversation id (the engine loads, runs and
// saves through the client's store, and a halted run waits there for its answer), the
// client's store, and the host-kept Conversation.

// #include "bridge.h"
import "C"

import (
	"context"
	"reflect"
	"runtime"
)

// withStore makes the engine client that remembers in store from base (same options,
// callbacks and metrics), and frees base.
func withStore(base *C.tn_client, store ConversationStore) (*C.tn_client, error) {
	defer C.tn_client_free(base)
	var out *C.tn_client
	err := withStoreHandle(store, func(st *C.tn_store) error {
		var errJSON *C.char
		return check(C.tn_client_with_store(base, st, &out, &errJSON), errJSON)
	})
	return out, err
}

// conversationStore is the store the client remembers in: the options' Store, else the
// engine client's own in-memory store.
func (c *Client) conversationStore() ConversationStore {
	if c.opts.Store != nil {
		return c.opts.Store
	}
	if c.err != nil {
		return &InMemoryConversationStore{engineStore{&storeState{err: c.err}}}
	}
	return &InMemoryConversationStore{engineStore{newStoreState(func(out **C.tn_store, errJSON **C.char) C.int32_t {
		defer runtime.KeepAlive(c)
		return C.tn_client_store(c.native, out, errJSON)
	})}}
}

// ConversationStore returns the client's store: the exact ClientOptions.Store, else the
// client's own *InMemoryConversationStore. Reading and writing it is what Ask sees.
func (c *Client) ConversationStore() ConversationStore { return c.store }

// Ask runs prompt as the next turn of conversation id: the client's store supplies the
// history and keeps the result, so the next Ask with the same id continues it; a run that
// halts (Status "pending") waits there for AskWithAnswer. An empty id is a stateless Run. A
// conversation another run is using is an error of KindConflict.
func (c *Client) Ask(ctx context.Context, prompt string, tk *Toolkit, id string) (RunResult, error) {
	return c.run(ctx, tk, wireRunInput{Prompt: &prompt, ID: &id})
}

// AskStream is Ask streaming: onText gets each text delta of the model as it arrives, and
// the result is returned as Ask returns it. A nil onText is Ask.
func (c *Client) AskStream(ctx context.Context, prompt string, tk *Toolkit, id string, onText func(delta string)) (RunResult, error) {
	if onText == nil {
		return c.Ask(ctx, prompt, tk, id)
	}
	ch, err := c.StreamWithID(ctx, prompt, tk, id)
	if err != nil {
		return RunResult{}, err
	}
	var result RunResult
	var streamErr error
	for ev := range ch {
		switch ev.Type {
		case "text":
			onText(ev.Delta)
		case "done":
			result = *ev.Result
		case "error":
			streamErr = ev.Err
		}
	}
	return result, streamErr
}

// AskParts is Ask with a prompt of content parts (see RunParts).
func (c *Client) AskParts(ctx context.Context, parts []ContentPart, tk *Toolkit, id string) (RunResult, error) {
	prompt, err := partsPrompt(parts)
	if err != nil {
		return RunResult{}, err
	}
	return c.run(ctx, tk, wireRunInput{Prompt: prompt, ID: &id})
}

// StreamParts is StreamWithID with a prompt of content parts (see RunParts); an empty id is a
// stateless stream.
func (c *Client) StreamParts(ctx context.Context, parts []ContentPart, tk *Toolkit, id string) (<-chan StreamEvent, error) {
	prompt, err := partsPrompt(parts)
	if err != nil {
		return nil, err
	}
	return c.stream(ctx, tk, wireRunInput{Prompt: prompt, ID: &id})
}

// StreamWithID is Stream as the next turn of conversation id, remembered as Ask remembers
// it (an empty id is Stream).
func (c *Client) StreamWithID(ctx context.Context, prompt string, tk *Toolkit, id string) (<-chan StreamEvent, error) {
	return c.stream(ctx, tk, wireRunInput{Prompt: &prompt, ID: &id})
}

// AskWithAnswer resumes conversation id, halted on pending, with answer, loading and saving
// through the client's store, so a run halted in one process resumes in another by id. The
// zero Request leaves pending out: the engine's stores recorded it (a host store does not,
// and needs it). A resume runs once: a second one, or another answer to the same request, is
// an error of KindConflict.
func (c *Client) AskWithAnswer(ctx context.Context, tk *Toolkit, id string, pending Request, answer Answer) (RunResult, error) {
	input := wireRunInput{ID: &id, Answer: &answer}
	if !reflect.ValueOf(pending).IsZero() {
		input.Pending = &pending
	}
	return c.run(ctx, tk, input)
}

// Conversation is a multi-turn conversation the value itself remembers: each Send continues
// Messages (no store involved). Not safe for concurrent Send calls.
type Conversation struct {
	client *Client
	tk     *Toolkit
	// Messages is the whole transcript so far (system, user, assistant and tool messages);
	// it may be read, replaced or cleared.
	Messages []any
}

// Conversation makes a Conversation of this client with the tools of tk (nil: no tools).
func (c *Client) Conversation(tk *Toolkit) *Conversation {
	return &Conversation{client: c, tk: tk}
}

// Send runs prompt as the next user turn after Messages; the result's Messages become the
// transcript (a failed run leaves it as it was).
func (conv *Conversation) Send(ctx context.Context, prompt string) (RunResult, error) {
	res, err := conv.client.RunWithHistory(ctx, prompt, conv.tk, conv.Messages)
	if err != nil {
		return res, err
	}
	conv.Messages = res.Messages
	return res, nil
}

// Reset forgets the conversation.
func (conv *Conversation) Reset() { conv.Messages = nil }
