package toolnexus_test

import (
	"context"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// openaiClient is a client of the mock in OpenAI style; edit tweaks the options.
func openaiClient(t *testing.T, m *mockModel, edit func(*tn.ClientOptions)) *tn.Client {
	t.Helper()
	opts := tn.ClientOptions{BaseURL: m.openaiURL(), Style: tn.StyleOpenAI, Model: "mock-model", APIKey: "test-key", RetryBaseMs: 1}
	if edit != nil {
		edit(&opts)
	}
	c, err := tn.NewClient(opts)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// toolkit builds a toolkit of tools and closes it with the test.
func toolkit(t *testing.T, tools ...tn.Tool) *tn.Toolkit {
	t.Helper()
	tk, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false, ExtraTools: tools})
	if err != nil {
		t.Fatalf("toolkit: %v", err)
	}
	t.Cleanup(tk.Close)
	return tk
}

// fn is a tool that runs f.
func fn(name string, f func(args map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error)) tn.Tool {
	return tn.Tool{Name: name, Description: name + ".", InputSchema: tn.JSONSchema{"type": "object"}, Source: tn.SourceNative, Execute: f}
}

// text is a tool that answers output.
func text(name, output string) tn.Tool {
	return fn(name, func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		return tn.ToolResult{Output: output}, nil
	})
}

// testCtx is a context that ends with the test or after 30 s.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// toolMessages returns the role:"tool" messages of an OpenAI request body.
func toolMessages(body any) []map[string]any {
	var out []map[string]any
	msgs, _ := body.(map[string]any)["messages"].([]any)
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "tool" {
			out = append(out, mm)
		}
	}
	return out
}
