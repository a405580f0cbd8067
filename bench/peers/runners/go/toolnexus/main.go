// The Go binding as one row of make bench-peers: the same scenarios through its public API
// (NewClient, CreateToolkit, Run, RunWithHistory, Stream, Pending, WaitFor, RunWithAnswer).
package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"benchpeers/harness"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/toolnexus/toolnexus/bindings-go" {
				return "bindings-go " + d.Version
			}
		}
	}
	return "bindings-go"
}

func options(c *harness.Ctx) tn.ClientOptions {
	return tn.ClientOptions{BaseURL: c.V1URL, Model: harness.Model, APIKey: harness.APIKey,
		SystemPrompt: harness.SystemPrompt, MaxTurns: harness.MaxTurns}
}

func str(v any) string  { s, _ := v.(string); return s }
func num(v any) float64 { f, _ := v.(float64); return f }

func build(c *harness.Ctx) (func() (string, error), error) {
	ctx := context.Background()
	sp := c.Spec
	if sp.Suspend {
		approve := tn.Tool{Name: "approve", Description: harness.ApproveDesc, InputSchema: harness.ApproveSchema,
			Execute: func(args map[string]any, tc *tn.ToolContext) (tn.ToolResult, error) {
				c.Count()
				action := str(args["action"])
				if tc.Answer == nil {
					return tn.Pending(tn.Request{ID: "ap-" + tc.CallID, Kind: "approval", Prompt: "Approve " + action + "?"}), nil
				}
				return tn.ToolResult{Output: "approved: " + action}, nil
			}}
		tk, err := tn.CreateToolkit(ctx, tn.Options{Builtins: false, ExtraTools: []tn.Tool{approve}})
		if err != nil {
			return nil, err
		}
		io := options(c)
		io.WaitFor = func(req tn.Request) (tn.Answer, error) { return tn.AnswerOutput(req.ID, "yes"), nil }
		inline, err := tn.NewClient(io)
		if err != nil {
			return nil, err
		}
		durable, err := tn.NewClient(options(c))
		if err != nil {
			return nil, err
		}
		return func() (string, error) {
			a, err := inline.Run(ctx, sp.Prompt(), tk)
			if err != nil {
				return "", err
			}
			halted, err := durable.Run(ctx, sp.Prompt(), tk)
			if err != nil {
				return "", err
			}
			if halted.Pending == nil {
				return "", fmt.Errorf("the durable run did not halt: %s", halted.Status)
			}
			b, err := durable.RunWithAnswer(ctx, tk, halted.Messages, *halted.Pending, tn.AnswerOutput(halted.Pending.ID, "yes"))
			if err != nil {
				return "", err
			}
			return a.Text + " | " + b.Text, nil
		}, nil
	}
	weather := tn.Tool{Name: "get_weather", Description: harness.WeatherDesc, InputSchema: harness.WeatherSchema,
		Execute: func(args map[string]any, _ *tn.ToolContext) (tn.ToolResult, error) {
			c.Count()
			return tn.ToolResult{Output: harness.Weather(str(args["city"]))}, nil
		}}
	add := tn.Tool{Name: "add", Description: harness.AddDesc, InputSchema: harness.AddSchema,
		Execute: func(args map[string]any, _ *tn.ToolContext) (tn.ToolResult, error) {
			c.Count()
			return tn.ToolResult{Output: harness.Add(num(args["a"]), num(args["b"]))}, nil
		}}
	tk, err := tn.CreateToolkit(ctx, tn.Options{Builtins: false, ExtraTools: []tn.Tool{weather, add}})
	if err != nil {
		return nil, err
	}
	client, err := tn.NewClient(options(c))
	if err != nil {
		return nil, err
	}
	var history []any
	if sp.History > 0 {
		// RunWithHistory does not re-add the system prompt (openai style): carry it.
		history = append([]any{map[string]any{"role": "system", "content": harness.SystemPrompt}}, sp.HistoryMessages()...)
	}
	if sp.Stream {
		return func() (string, error) {
			events, err := client.Stream(ctx, sp.Prompt(), tk)
			if err != nil {
				return "", err
			}
			text := ""
			for ev := range events {
				switch ev.Type {
				case "done":
					text = ev.Result.Text
				case "error":
					return "", ev.Err
				}
			}
			return text, nil
		}, nil
	}
	return func() (string, error) {
		r, err := client.RunWithHistory(ctx, sp.Prompt(), tk, history)
		return r.Text, err
	}, nil
}

func main() {
	harness.Main(harness.Runner{Label: "toolnexus (go)", Kind: "framework", Version: version, Build: build})
}
