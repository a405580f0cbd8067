package toolnexus

import (
	"context"
	"testing"
)

// BenchmarkRunHandles measures what this binding adds to every run besides the run itself:
// the run's scope, handed to the engine as a handle, and its cancellation handle. The engine
// client and the engine toolkit are made once, with the Client and the Toolkit (until the
// engine could tell a callback's run, every run made both again: about 8-11 µs here).
func BenchmarkRunHandles(b *testing.B) {
	c, err := NewClient(ClientOptions{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKey: "k",
		WaitFor: func(Request) (Answer, error) { return Answer{}, nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h, err := openRun(newScope(context.Background(), &c.opts), true)
		if err != nil {
			b.Fatal(err)
		}
		h.abandon()
		h.close()
	}
}
