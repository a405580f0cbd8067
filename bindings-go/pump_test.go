package toolnexus_test

// Callbacks reach Go through the pump; when they cannot be posted, the trampolines call Go on
// the library's threads, and a run works the same either way.

import (
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func TestCallbacksWithoutThePump(t *testing.T) {
	t.Cleanup(func() { tn.SetPumping(true) })
	for _, pumping := range []bool{false, true} {
		tn.SetPumping(pumping)
		mock := newMock(t)
		mock.script(callReply("c1:a", "c2:b"), textReply("done"))
		asked := 0
		client := openaiClient(t, mock, func(o *tn.ClientOptions) {
			o.WaitFor = func(req tn.Request) (tn.Answer, error) { asked++; return tn.AnswerOutput(req.ID, "yes"), nil }
		})
		suspends := fn("b", func(_ map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
			if ctx.Answer == nil {
				return tn.Pending(tn.Request{ID: "r-" + ctx.CallID, Kind: "approval", Prompt: "ok?"}), nil
			}
			return tn.ToolResult{Output: "b approved"}, nil
		})
		res, err := client.Run(testCtx(t), "go", toolkit(t, text("a", "a output"), suspends))
		if err != nil || res.Text != "done" || res.ToolCallCount != 2 || asked != 1 {
			t.Fatalf("pumping %v: %v %+v (asked %d)", pumping, err, res, asked)
		}
		tm := toolMessages(mock.seen()[1].Body)
		if len(tm) != 2 || tm[0]["content"] != "a output" || tm[1]["content"] != "b approved" {
			t.Fatalf("pumping %v: tool messages %v", pumping, tm)
		}
	}
}
