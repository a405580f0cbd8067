package toolnexus_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// mockReply is one scripted answer of the mock model.
type mockReply struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	// DelayMs holds the answer back that long (or until the client goes away).
	DelayMs int `json:"delay_ms"`
	// Wait, when set, holds the answer until it is closed (or the client goes away).
	Wait chan struct{} `json:"-"`
}

// seenRequest is one request the mock received.
type seenRequest struct {
	Path    string
	Headers map[string]string // lowercase names, values joined
	Body    any
}

// mockModel is a loopback model server that serves scripted replies in order and records
// every request it gets.
type mockModel struct {
	srv *httptest.Server

	mu       sync.Mutex
	replies  []mockReply
	next     int
	requests []seenRequest
	arrived  chan struct{} // receives one value per request, when not nil
	// respond, when set, answers every request from its body instead of the script.
	respond func(body any) mockReply
}

func newMock(t *testing.T) *mockModel {
	t.Helper()
	m := &mockModel{}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// script sets the replies for what follows and forgets earlier requests.
func (m *mockModel) script(replies ...mockReply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replies, m.next, m.requests = replies, 0, nil
}

// answerWith makes the mock answer every request from its body.
func (m *mockModel) answerWith(respond func(body any) mockReply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.respond = respond
}

// notifyArrivals makes the mock signal each request's arrival on the returned channel.
func (m *mockModel) notifyArrivals() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.arrived = make(chan struct{}, 16)
	return m.arrived
}

// seen returns the requests received since the last script.
func (m *mockModel) seen() []seenRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]seenRequest(nil), m.requests...)
}

// unused is how many scripted replies were never requested.
func (m *mockModel) unused() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.replies) - m.next
}

func (m *mockModel) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body any
	if err := json.Unmarshal(raw, &body); err != nil {
		body = string(raw)
	}
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	m.mu.Lock()
	m.requests = append(m.requests, seenRequest{Path: r.URL.Path, Headers: headers, Body: body})
	var reply *mockReply
	switch {
	case m.respond != nil:
		r := m.respond(body)
		reply = &r
	case m.next < len(m.replies):
		reply = &m.replies[m.next]
		m.next++
	default:
		m.next++
	}
	arrived := m.arrived
	m.mu.Unlock()
	if arrived != nil {
		arrived <- struct{}{}
	}
	if reply == nil {
		w.WriteHeader(599)
		_, _ = w.Write([]byte(`{"error":{"message":"no reply left"}}`))
		return
	}
	if reply.Wait != nil {
		select {
		case <-reply.Wait:
		case <-r.Context().Done():
			return
		}
	}
	if reply.DelayMs > 0 {
		select {
		case <-time.After(time.Duration(reply.DelayMs) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	status := reply.Status
	if status == 0 {
		status = 200
	}
	w.WriteHeader(status)
	_, _ = w.Write(reply.Body)
}

// openaiURL and anthropicURL are the base URLs of the mock for each style.
func (m *mockModel) openaiURL() string    { return m.srv.URL + "/v1" }
func (m *mockModel) anthropicURL() string { return m.srv.URL }

// The OpenAI reply bodies the hand-written tests use.

func textReply(text string) mockReply {
	b, _ := json.Marshal(map[string]any{
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": text}}},
		"usage":   map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
	})
	return mockReply{Body: b}
}

// callReply asks for tool calls: pairs of (id, name) with "{}" arguments, or args given as
// "id:name:{json}".
func callReply(calls ...string) mockReply {
	var tcs []any
	for _, c := range calls {
		parts := strings.SplitN(c, ":", 3)
		args := "{}"
		if len(parts) == 3 {
			args = parts[2]
		}
		tcs = append(tcs, map[string]any{"id": parts[0], "type": "function",
			"function": map[string]any{"name": parts[1], "arguments": args}})
	}
	b, _ := json.Marshal(map[string]any{
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": tcs}}},
		"usage":   map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
	})
	return mockReply{Body: b}
}

func statusReply(status int, headers map[string]string, body string) mockReply {
	return mockReply{Status: status, Headers: headers, Body: json.RawMessage(body)}
}
