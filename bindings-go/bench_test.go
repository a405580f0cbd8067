package toolnexus_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// BenchmarkRunWithOneToolCall is a whole run against the loopback mock: a tool call (a Go
// tool), then the answer; two model requests over the engine's own HTTP client.
func BenchmarkRunWithOneToolCall(b *testing.B) {
	t := &testing.T{}
	mock := newMock(t)
	defer mock.srv.Close()
	mock.answerWith(func(body any) mockReply {
		if len(toolMessages(body)) == 0 {
			return callReply(`c1:weather:{"city":"Paris"}`)
		}
		return textReply("sunny")
	})
	tk, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false, ExtraTools: []tn.Tool{text("weather", "sunny, 21C")}})
	if err != nil {
		b.Fatal(err)
	}
	client, err := tn.NewClient(tn.ClientOptions{BaseURL: mock.openaiURL(), Model: "m", APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := client.Run(context.Background(), "weather in Paris?", tk); err != nil {
			b.Fatal(err)
		}
	}
}

// memoryModel answers the engine's model requests in memory through ClientOptions.HTTPClient:
// a tool call until the transcript holds its result, then the answer. No socket, so what a
// run costs the binding and the engine shows above the noise of a loopback server.
type memoryModel struct{ call, answer []byte }

func (m memoryModel) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	reply := m.call
	if bytes.Contains(body, []byte(`"role":"tool"`)) {
		reply = m.answer
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(reply)), Request: r}, nil
}

// BenchmarkRunInMemoryModel is a whole run (a Go tool call, then the answer: two model
// requests) against a model answered in memory.
func BenchmarkRunInMemoryModel(b *testing.B) {
	model := memoryModel{call: callReply(`c1:weather:{"city":"Paris"}`).Body, answer: textReply("sunny").Body}
	tk, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false, ExtraTools: []tn.Tool{text("weather", "sunny, 21C")}})
	if err != nil {
		b.Fatal(err)
	}
	client, err := tn.NewClient(tn.ClientOptions{BaseURL: "http://model.invalid/v1", Model: "m", APIKey: "k",
		HTTPClient: &http.Client{Transport: model}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background()) // cancellable, as most callers' are
	defer cancel()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := client.Run(ctx, "weather in Paris?", tk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolkitExecute runs one Go tool through the engine, outside a run.
func BenchmarkToolkitExecute(b *testing.B) {
	tk, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false, ExtraTools: []tn.Tool{text("a", "1"), text("b", "2"), text("c", "3")}})
	if err != nil {
		b.Fatal(err)
	}
	defer tk.Close()
	args := map[string]any{"city": "Paris"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, err := tk.Execute(context.Background(), "b", args); err != nil || r.Output != "2" {
			b.Fatal(r, err)
		}
	}
}
