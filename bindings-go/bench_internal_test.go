package toolnexus

import (
	"context"
	"testing"
)

// BenchmarkRunHandles measures what this binding adds to every run: declaring the client and
// the toolkit to the engine with a run-scoped user_data, and releasing them.
func BenchmarkRunHandles(b *testing.B) {
	tool := func(name string) Tool {
		return Tool{Name: name, Description: "A tool.", InputSchema: JSONSchema{"type": "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}}},
			Execute: func(map[string]any, *ToolContext) (ToolResult, error) { return ToolResult{}, nil }}
	}
	tk, err := CreateToolkit(context.Background(), Options{Builtins: false, ExtraTools: []Tool{tool("a"), tool("b"), tool("c")}})
	if err != nil {
		b.Fatal(err)
	}
	c, err := NewClient(ClientOptions{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKey: "k",
		WaitFor: func(Request) (Answer, error) { return Answer{}, nil }})
	if err != nil {
		b.Fatal(err)
	}
	tools, decl, _ := tk.forRun()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		er, err := c.open(&runScope{ctx: context.Background(), opts: &c.opts, tools: tools}, true, decl)
		if err != nil {
			b.Fatal(err)
		}
		er.close()
	}
}
