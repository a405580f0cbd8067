package toolnexus_test

import (
	"context"
	"fmt"
	"log"

	toolnexus "github.com/toolnexus/toolnexus/bindings-go"
)

// The README's usage, compiled (not run: it would call a real provider).
func Example() {
	ctx := context.Background()
	add := toolnexus.Tool{
		Name: "add", Description: "Add two numbers.", Source: toolnexus.SourceNative,
		InputSchema: toolnexus.JSONSchema{"type": "object", "properties": map[string]any{
			"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}}},
		Execute: func(args map[string]any, ctx *toolnexus.ToolContext) (toolnexus.ToolResult, error) {
			a, _ := args["a"].(float64)
			b, _ := args["b"].(float64)
			return toolnexus.ToolResult{Output: fmt.Sprint(a + b)}, nil
		},
	}
	tk, err := toolnexus.CreateToolkit(ctx, toolnexus.Options{Builtins: false, ExtraTools: []toolnexus.Tool{add}})
	if err != nil {
		log.Fatal(err)
	}
	defer tk.Close()
	client := toolnexus.CreateClient(toolnexus.ClientOptions{
		BaseURL: "https://api.openai.com/v1", Style: toolnexus.StyleOpenAI, Model: "gpt-4o-mini"})
	result, err := client.Run(ctx, "What is 2+2?", tk)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Text)
}
