package toolnexus_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// memoryStore is a ConversationStore as a host of the Go port writes one.
type memoryStore struct{ byID map[string][]any }

func (s *memoryStore) Get(id string) ([]any, error) { return s.byID[id], nil }

func (s *memoryStore) Save(id string, messages []any) error {
	if s.byID == nil {
		s.byID = map[string][]any{}
	}
	s.byID[id] = messages
	return nil
}

// Code written for the Go port must compile here: these are the port's fields, types and
// constants, spelled and typed as the port has them. (Setting the options is rejected:
// errors_test.go.)
func TestTheGoPortsNamesCompile(t *testing.T) {
	var store tn.ConversationStore = &memoryStore{}
	var onMetric func(tn.MetricEvent) = func(ev tn.MetricEvent) {
		var ms int64 = ev.Ms
		var counts = []int{ev.PromptTokens, ev.CompletionTokens, ev.Turns, ev.ToolCalls, ev.TotalTokens}
		var flags = []bool{ev.IsError, ev.Pending}
		_ = []string{ev.Event, ev.Model, ev.Status, ev.Tool, ev.Source, ev.Error, ev.Warning, ev.Question}
		_, _, _ = ms, counts, flags
	}
	_ = tn.ClientOptions{Store: store, OnMetric: onMetric}

	var provider func(context.Context) ([]tn.SkillDef, error) = func(context.Context) ([]tn.SkillDef, error) {
		return []tn.SkillDef{{Name: "n", Description: "d", Content: "c", Resources: []string{"r"}, Base: "skill://n/"}}, nil
	}
	agents := []tn.Agent{{Card: "https://a/.well-known/agent-card.json", Headers: map[string]string{"k": "v"}, Timeout: 1, PollEvery: 1}}
	_ = tn.Options{Skills: []tn.SkillDef{{Name: "n"}}, SkillProvider: provider, Agents: agents}

	if got := jsonOf(t, tn.Agent{Card: "c", PollEvery: 5}); got != `{"card":"c","pollEvery":5}` {
		t.Errorf("Agent is the port's config shape: %s", got)
	}

	var output, isError string = tn.RelayOutputKey, tn.RelayIsErrorKey
	if output != "output" || isError != "isError" {
		t.Errorf("RelayOutputKey %q, RelayIsErrorKey %q", output, isError)
	}
	// They are the keys of the single-call shorthand the engine reads on resume.
	mock := newMock(t)
	tk := toolkit(t, tn.RelayTool("refund", "Refund.", nil))
	client := openaiClient(t, mock, nil)
	mock.script(callReply("c1:refund"))
	halted, err := client.Run(testCtx(t), "refund", tk)
	if err != nil || halted.Pending == nil {
		t.Fatalf("got %+v, %v", halted, err)
	}
	mock.script(textReply("ok"))
	answer := tn.Answer{ID: halted.Pending.ID, Ok: true, Data: map[string]any{tn.RelayOutputKey: "card expired", tn.RelayIsErrorKey: true}}
	done, err := client.RunWithAnswer(testCtx(t), tk, halted.Messages, *halted.Pending, answer)
	if err != nil || len(done.ToolCalls) != 1 || done.ToolCalls[0].Output != "card expired" || !done.ToolCalls[0].IsError {
		t.Fatalf("got %+v, %v", done, err)
	}
}

// NativeTool and Toolkit.Register: the Go port's usual way to define and add a tool.
func TestNativeToolAndRegister(t *testing.T) {
	var seenCtx context.Context
	weather := tn.NativeTool("weather", "Weather.", nil, func(ctx context.Context, args map[string]any) (string, error) {
		seenCtx = ctx
		return "sunny in " + args["city"].(string), nil
	})
	broken := tn.NativeTool("broken", "Fails.", nil, func(context.Context, map[string]any) (string, error) {
		return "", errors.New("no data")
	})
	tk := toolkit(t).Register(weather).Register(broken, tn.RelayTool("bash", "", nil), weather)
	if names := toolNames(tk); strings.Join(names, ",") != "weather,broken" {
		t.Fatalf("registered %v (the relay named like a built-in and the duplicate stay out)", names)
	}
	mock := newMock(t)
	mock.script(callReply(`c1:weather:{"city":"Oslo"}`, "c2:broken"), textReply("done"))
	r, err := openaiClient(t, mock, nil).Run(testCtx(t), "go", tk)
	if err != nil || r.ToolCalls[0].Output != "sunny in Oslo" || !r.ToolCalls[1].IsError || r.ToolCalls[1].Output != "no data" {
		t.Fatalf("got %+v, %v", r, err)
	}
	if seenCtx == nil || seenCtx.Err() == nil {
		t.Fatal("the tool's ctx is the run's, cancelled once the run ended")
	}
}

func toolNames(tk *tn.Toolkit) []string {
	var names []string
	for _, t := range tk.Tools() {
		names = append(names, t.Name)
	}
	return names
}
