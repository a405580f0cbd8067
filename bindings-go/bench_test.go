package toolnexus_test

import (
	"context"
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
