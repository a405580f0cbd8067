package toolnexus_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func TestBeforeToolCanSkipOrRewriteAndAfterToolCanReplace(t *testing.T) {
	mock := newMock(t)
	var mu sync.Mutex
	ran := map[string]map[string]any{}
	record := func(name string) tn.Tool {
		return fn(name, func(args map[string]any, _ *tn.ToolContext) (tn.ToolResult, error) {
			mu.Lock()
			ran[name] = args
			mu.Unlock()
			return tn.ToolResult{Output: name + " ran"}, nil
		})
	}
	hooks := &tn.Hooks{
		BeforeTool: func(_ context.Context, ev tn.BeforeToolEvent) (*tn.ToolOverride, error) {
			switch ev.Name {
			case "denied":
				return &tn.ToolOverride{Result: &tn.ToolResult{Output: "denied by policy", IsError: true}}, nil
			case "rewritten":
				return &tn.ToolOverride{Args: map[string]any{"safe": true}}, nil
			}
			return nil, nil
		},
		AfterTool: func(_ context.Context, ev tn.AfterToolEvent) (*tn.ToolOverride, error) {
			if ev.Name == "redacted" {
				return &tn.ToolOverride{Result: &tn.ToolResult{Output: "[redacted] (" + ev.Result.Output + ")"}}, nil
			}
			return nil, nil
		},
	}
	client := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Hooks = hooks })
	mock.script(callReply("a:denied", `b:rewritten:{"safe":false}`, "c:redacted"), textReply("ok"))
	res, err := client.Run(testCtx(t), "go", toolkit(t, record("denied"), record("rewritten"), record("redacted")))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{res.ToolCalls[0].Output, res.ToolCalls[1].Output, res.ToolCalls[2].Output}
	want := []string{"denied by policy", "rewritten ran", "[redacted] (redacted ran)"}
	same(t, "hooks", "outputs", roundTrip(want), roundTrip(got))
	if _, ok := ran["denied"]; ok {
		t.Fatal("a skipped tool ran")
	}
	if ran["rewritten"]["safe"] != true {
		t.Fatalf("the rewritten tool saw %v", ran["rewritten"])
	}
}

func TestBeforeLLMCanSwapTheModelAndAfterLLMSeesTheResponse(t *testing.T) {
	mock := newMock(t)
	var turns []int
	var responses []map[string]any
	hooks := &tn.Hooks{
		BeforeLLM: func(_ context.Context, ev tn.BeforeLLMEvent) (*tn.LLMOverride, error) {
			turns = append(turns, ev.Turn)
			if len(ev.Messages) == 0 || ev.Model != "mock-model" {
				return nil, errors.New("unexpected event")
			}
			return &tn.LLMOverride{Model: "bigger-model"}, nil
		},
		AfterLLM: func(_ context.Context, ev tn.AfterLLMEvent) error {
			responses = append(responses, ev.Response)
			return nil
		},
	}
	mock.script(textReply("hello"))
	res, err := openaiClient(t, mock, func(o *tn.ClientOptions) { o.Hooks = hooks }).Run(testCtx(t), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	body := mock.seen()[0].Body.(map[string]any)
	if body["model"] != "bigger-model" || res.Model != "bigger-model" {
		t.Fatalf("model: request %v, result %q", body["model"], res.Model)
	}
	if len(turns) != 1 || turns[0] != 0 || len(responses) != 1 || responses[0]["choices"] == nil {
		t.Fatalf("turns %v, responses %v", turns, responses)
	}
}

func TestHookErrorEndsTheRunAndUnwraps(t *testing.T) {
	sentinel := errors.New("budget exceeded")
	err := hostFailure(t, func(o *tn.ClientOptions) {
		o.Hooks = &tn.Hooks{BeforeLLM: func(context.Context, tn.BeforeLLMEvent) (*tn.LLMOverride, error) {
			return nil, sentinel
		}}
	})
	hostKind(t, err, "budget exceeded")
	if !errors.Is(err, sentinel) {
		t.Fatalf("%v does not unwrap to the hook's error", err)
	}
}

func TestOnErrorDecidesEachAttempt(t *testing.T) {
	mock := newMock(t)
	var infos []tn.ErrorInfo
	client := openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.Retries = 3
		o.OnError = func(info tn.ErrorInfo) tn.Tier {
			infos = append(infos, info)
			if info.Attempt == 0 {
				return tn.TierRetry
			}
			return tn.TierFail
		}
	})
	mock.script(statusReply(503, nil, `{}`), statusReply(503, nil, `{}`), textReply("unused"))
	_, err := client.Run(testCtx(t), "hi", nil)
	var pe *tn.ProviderError
	if !errors.As(err, &pe) || pe.Status != 503 {
		t.Fatalf("want the 503, got %v", err)
	}
	if len(infos) != 2 || infos[0].Status != 503 || !infos[0].Retryable || infos[1].Attempt != 1 || len(mock.seen()) != 2 {
		t.Fatalf("infos %+v, %d requests", infos, len(mock.seen()))
	}
}

func TestOnErrorSeesNetworkFailures(t *testing.T) {
	var infos []tn.ErrorInfo
	client, err := tn.NewClient(tn.ClientOptions{
		BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKey: "k", RetryBaseMs: 1,
		OnError: func(info tn.ErrorInfo) tn.Tier {
			infos = append(infos, info)
			return tn.TierFail
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Run(testCtx(t), "hi", nil)
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindNetwork || len(infos) != 1 || infos[0].Err == nil || infos[0].Status != 0 {
		t.Fatalf("err %v, infos %+v", err, infos)
	}
}

func TestOnErrorOutsideTheVocabularyIsAHostError(t *testing.T) {
	mock := newMock(t)
	mock.script(statusReply(503, nil, `{}`))
	_, err := openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.OnError = func(tn.ErrorInfo) tn.Tier { return "later" }
	}).Run(testCtx(t), "hi", nil)
	hostKind(t, err, `OnError returned "later"`)
}
