package toolnexus_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// deployTool suspends for approval until it is re-run with an answer; it records the call ids
// and answers it saw.
type deployTool struct {
	mu      sync.Mutex
	callIDs []string
	answers []*tn.Answer
}

func (d *deployTool) tool() tn.Tool {
	return fn("deploy", func(args map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
		d.mu.Lock()
		d.callIDs = append(d.callIDs, ctx.CallID)
		d.answers = append(d.answers, ctx.Answer)
		d.mu.Unlock()
		if ctx.Answer == nil {
			return tn.Pending(tn.Request{Kind: "approval", Prompt: "Deploy to prod?"}), nil
		}
		out, _ := ctx.Answer.Data["output"].(string)
		return tn.ToolResult{Output: "deployed: " + out}, nil
	})
}

func TestDurableHaltThenResumeInAFreshClient(t *testing.T) {
	mock := newMock(t)
	d := &deployTool{}
	tk := toolkit(t, d.tool())
	mock.script(callReply("call_1:deploy"))
	halted, err := openaiClient(t, mock, nil).Run(testCtx(t), "ship it", tk)
	if err != nil {
		t.Fatal(err)
	}
	if halted.Status != "pending" || halted.Pending == nil || !strings.HasPrefix(halted.Pending.ID, "pnd-") {
		t.Fatalf("want a durable halt with a generated id, got %+v", halted)
	}
	if halted.Text != "Deploy to prod?" || halted.Pending.Kind != "approval" {
		t.Fatalf("halted: %+v", halted)
	}

	// Stored as JSON and read back, as a host that resumes in another process would.
	stored, err := json.Marshal(map[string]any{"messages": halted.Messages, "pending": halted.Pending})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Messages []any      `json:"messages"`
		Pending  tn.Request `json:"pending"`
	}
	if err := json.Unmarshal(stored, &back); err != nil {
		t.Fatal(err)
	}
	mock.script(textReply("Deployed."))
	done, err := openaiClient(t, mock, nil).RunWithAnswer(testCtx(t), tk, back.Messages, back.Pending,
		tn.AnswerOutput(back.Pending.ID, "approved"))
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != "done" || done.Text != "Deployed." {
		t.Fatalf("resumed: %+v", done)
	}
	tools := toolMessages(mock.seen()[0].Body)
	if len(tools) != 1 || tools[0]["content"] != "deployed: approved" || tools[0]["tool_call_id"] != "call_1" {
		t.Fatalf("the resumed request carries %v", tools)
	}
	if len(d.callIDs) != 2 || d.callIDs[0] != "call_1" || d.callIDs[1] != "call_1" {
		t.Fatalf("the tool saw call ids %v, want the provider's id twice", d.callIDs)
	}
	if d.answers[0] != nil || d.answers[1] == nil || d.answers[1].ID != back.Pending.ID {
		t.Fatalf("the tool saw answers %v", d.answers)
	}
}

func TestDurableResumeDeclinedDoesNotRerunTheTool(t *testing.T) {
	mock := newMock(t)
	d := &deployTool{}
	tk := toolkit(t, d.tool())
	client := openaiClient(t, mock, nil)
	mock.script(callReply("call_1:deploy"))
	halted, err := client.Run(testCtx(t), "ship it", tk)
	if err != nil {
		t.Fatal(err)
	}
	mock.script(textReply("Not deployed."))
	done, err := client.RunWithAnswer(testCtx(t), tk, halted.Messages, *halted.Pending,
		tn.AnswerDeclined(halted.Pending.ID, "expired"))
	if err != nil {
		t.Fatal(err)
	}
	tools := toolMessages(mock.seen()[0].Body)
	if done.Status != "done" || len(tools) != 1 || tools[0]["content"] != "declined/expired: Deploy to prod?" {
		t.Fatalf("got %+v with tool messages %v", done, tools)
	}
	if len(d.callIDs) != 1 {
		t.Fatalf("a declined tool must not re-run; it ran %d times", len(d.callIDs))
	}
}

func TestResumeWithAMismatchedAnswerSendsNothing(t *testing.T) {
	mock := newMock(t)
	tk := toolkit(t, (&deployTool{}).tool())
	client := openaiClient(t, mock, nil)
	mock.script(callReply("call_1:deploy"))
	halted, err := client.Run(testCtx(t), "ship it", tk)
	if err != nil {
		t.Fatal(err)
	}
	mock.script()
	_, err = client.RunWithAnswer(testCtx(t), tk, halted.Messages, *halted.Pending, tn.AnswerOutput("someone-else", "yes"))
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindAnswerMismatch {
		t.Fatalf("want an answer_mismatch error, got %v", err)
	}
	if n := len(mock.seen()); n != 0 {
		t.Fatalf("%d requests were sent", n)
	}
}

func TestRelayHaltThenRelayAnswer(t *testing.T) {
	mock := newMock(t)
	tk := toolkit(t,
		text("lookup", "order 7: 20 EUR"),
		tn.RelayTool("refund", "Refund an order.", nil),
		tn.RelayTool("notify", "Notify someone.", tn.JSONSchema{"type": "object", "properties": map[string]any{"to": map[string]any{"type": "string"}}}),
	)
	client := openaiClient(t, mock, nil)
	mock.script(callReply(`c1:lookup:{"order":7}`, `c2:refund:{"order":7,"amount":20}`, `c3:notify:{"to":"ann"}`))
	halted, err := client.Run(testCtx(t), "refund order 7 and tell ann", tk)
	if err != nil {
		t.Fatal(err)
	}
	if halted.Status != "pending" || !tn.IsRelayRequest(halted.Pending) {
		t.Fatalf("want a relay halt, got %+v", halted)
	}
	calls := tn.RelayCallsOf(halted.Pending)
	if len(calls) != 2 || calls[0].ID != "c2" || calls[0].Name != "refund" || calls[1].Name != "notify" ||
		calls[0].Input["amount"] != float64(20) || calls[1].Arguments != `{"to":"ann"}` {
		t.Fatalf("relay calls: %+v", calls)
	}
	answer := tn.RelayAnswer(halted.Pending.ID, []tn.RelayResult{
		{ID: "c2", Output: "refunded 20"},
		{ID: "c3", Output: "mail server down", IsError: true},
	})
	mock.script(textReply("Refunded; could not notify."))
	done, err := client.RunWithAnswer(testCtx(t), tk, halted.Messages, *halted.Pending, answer)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != "done" {
		t.Fatalf("resumed: %+v", done)
	}
	got := map[string]any{}
	for _, m := range toolMessages(mock.seen()[0].Body) {
		got[m["tool_call_id"].(string)] = m["content"]
	}
	want := map[string]any{"c1": "order 7: 20 EUR", "c2": "refunded 20", "c3": "mail server down"}
	same(t, "resume", "tool results", want, got)
	if done.ToolCalls[len(done.ToolCalls)-1].IsError != true {
		t.Fatalf("the failed relay result must be an error: %+v", done.ToolCalls)
	}
}

func TestRelayDeclinedKeepsTheRunGoing(t *testing.T) {
	mock := newMock(t)
	tk := toolkit(t, tn.RelayTool("refund", "Refund.", nil))
	client := openaiClient(t, mock, nil)
	mock.script(callReply("c1:refund"))
	halted, err := client.Run(testCtx(t), "refund", tk)
	if err != nil {
		t.Fatal(err)
	}
	mock.script(textReply("No refund, sorry."))
	done, err := client.RunWithAnswer(testCtx(t), tk, halted.Messages, *halted.Pending, tn.AnswerDeclined(halted.Pending.ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	tools := toolMessages(mock.seen()[0].Body)
	if done.Status != "done" || len(tools) != 1 || tools[0]["content"] != "relay declined for refund: declined" {
		t.Fatalf("got %+v, tool messages %v", done, tools)
	}
}

// A relay tool's Execute, called directly as the Go port's callers may, suspends with the
// same Request a run's relay halt carries for one call (less the provider's call id), and
// reads an answer the way the port does.
func TestRelayToolExecuteOutsideARun(t *testing.T) {
	refund := tn.RelayTool("refund", "Refund.", nil)
	args := map[string]any{"order": 7, "amount": 20}
	res, err := refund.Execute(args, nil)
	req := tn.PendingOf(res)
	if err != nil || req == nil || !tn.IsRelayRequest(req) || req.ID == "" || !res.IsError || res.Output != req.Prompt {
		t.Fatalf("want a relay suspension, got %+v, %v", res, err)
	}
	calls := tn.RelayCallsOf(req)
	if len(calls) != 1 || calls[0].ID != "" || calls[0].Name != "refund" || calls[0].Arguments != `{"amount":20,"order":7}` ||
		jsonOf(t, calls[0].Input) != `{"amount":20,"order":7}` {
		t.Fatalf("relay calls: %+v", calls)
	}
	if bare := tn.RelayCallsOf(tn.PendingOf(must(refund.Execute(nil, &tn.ToolContext{})))); len(bare) != 1 ||
		bare[0].Arguments != "{}" || bare[0].Input == nil {
		t.Fatalf("nil args: %+v", bare)
	}

	mock := newMock(t)
	tk := toolkit(t, refund)
	client := openaiClient(t, mock, nil)
	mock.script(callReply(`c1:refund:{"order":7,"amount":20}`))
	halted, err := client.Run(testCtx(t), "refund", tk)
	if err != nil || halted.Pending == nil {
		t.Fatalf("got %+v, %v", halted, err)
	}
	if halted.Pending.Kind != req.Kind || halted.Pending.Prompt != req.Prompt {
		t.Fatalf("a run's halt %+v, Execute's %+v", halted.Pending, req)
	}
	mock.script(textReply("No refund."))
	if _, err := client.RunWithAnswer(testCtx(t), tk, halted.Messages, *halted.Pending, tn.AnswerDeclined(halted.Pending.ID, "over the limit")); err != nil {
		t.Fatal(err)
	}
	declinedInRun := toolMessages(mock.seen()[0].Body)[0]["content"]

	for name, c := range map[string]struct {
		answer tn.Answer
		want   tn.ToolResult
	}{
		"output":   {tn.AnswerOutput(req.ID, "refunded 20"), tn.ToolResult{Output: "refunded 20"}},
		"failed":   {tn.Answer{ID: req.ID, Ok: true, Data: map[string]any{tn.RelayOutputKey: "card expired", tn.RelayIsErrorKey: true}}, tn.ToolResult{Output: "card expired", IsError: true}},
		"declined": {tn.AnswerDeclined(req.ID, "over the limit"), tn.ToolResult{Output: declinedInRun.(string), IsError: true}},
		"refused":  {tn.Answer{ID: req.ID}, tn.ToolResult{Output: "relay declined for refund: declined", IsError: true}},
		// Per-call results are read by the call's id, as in a run: this call has none.
		"results": {tn.RelayAnswer(req.ID, []tn.RelayResult{{ID: "c1", Output: "x"}}),
			tn.ToolResult{Output: "no result supplied on resume for refund", IsError: true}},
	} {
		answer := c.answer
		got, err := refund.Execute(args, &tn.ToolContext{Answer: &answer})
		if err != nil || got.Output != c.want.Output || got.IsError != c.want.IsError || got.Metadata != nil {
			t.Errorf("%s: got %+v, %v; want %+v", name, got, err, c.want)
		}
	}
	// Given the provider's call id, the result for it, and the suspension a run relays it with.
	answer := tn.RelayAnswer(req.ID, []tn.RelayResult{{ID: "c0", Output: "other"}, {ID: "c1", Output: "x", IsError: true}})
	if got := must(refund.Execute(args, &tn.ToolContext{CallID: "c1", Answer: &answer})); got.Output != "x" || !got.IsError {
		t.Errorf("results by call id: %+v", got)
	}
	if p := tn.PendingOf(must(refund.Execute(args, &tn.ToolContext{CallID: "c1"}))); p == nil || p.ID != "relay-c1" ||
		tn.RelayCallsOf(p)[0].ID != "c1" {
		t.Errorf("the suspension for call c1: %+v", p)
	}
}

func must(r tn.ToolResult, err error) tn.ToolResult {
	if err != nil {
		panic(err)
	}
	return r
}

func TestWaitForMayBlockOnAHuman(t *testing.T) {
	mock := newMock(t)
	d := &deployTool{}
	approvals := make(chan tn.Answer)
	requests := make(chan tn.Request, 1)
	go func() { // the human, elsewhere
		req := <-requests
		time.Sleep(50 * time.Millisecond)
		approvals <- tn.AnswerOutput(req.ID, "ok by me")
	}()
	client := openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.WaitFor = func(req tn.Request) (tn.Answer, error) {
			requests <- req
			return <-approvals, nil
		}
	})
	mock.script(callReply("call_1:deploy"), textReply("Deployed."))
	res, err := client.Run(testCtx(t), "ship it", toolkit(t, d.tool()))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "done" || res.ToolCalls[0].Output != "deployed: ok by me" {
		t.Fatalf("got %+v", res)
	}
}

func TestWaitForAnswerWithoutIDAnswersItsRequest(t *testing.T) {
	mock := newMock(t)
	client := openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.WaitFor = func(tn.Request) (tn.Answer, error) {
			return tn.Answer{Ok: true, Data: map[string]any{"output": "yes"}}, nil
		}
	})
	mock.script(callReply("call_1:deploy"), textReply("Deployed."))
	res, err := client.Run(testCtx(t), "ship it", toolkit(t, (&deployTool{}).tool()))
	if err != nil || res.ToolCalls[0].Output != "deployed: yes" {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestToolsMayBlockAndSpawnGoroutines(t *testing.T) {
	mock := newMock(t)
	slow := fn("slow", func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		out := make(chan string)
		go func() {
			time.Sleep(100 * time.Millisecond)
			out <- "slow done"
		}()
		return tn.ToolResult{Output: <-out}, nil
	})
	mock.script(callReply("a:slow", "b:fast"), textReply("both"))
	start := time.Now()
	res, err := openaiClient(t, mock, nil).Run(testCtx(t), "go", toolkit(t, slow, text("fast", "fast done")))
	if err != nil {
		t.Fatal(err)
	}
	// Results are recorded in call order, whatever order they finished in.
	if res.ToolCalls[0].Output != "slow done" || res.ToolCalls[1].Output != "fast done" {
		t.Fatalf("got %+v", res.ToolCalls)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("too slow")
	}
}

// A host may park every WaitFor of a turn and answer them together (a proxy that learns the N
// calls, answers them on its next HTTP turn): each parallel suspension gets its own WaitFor,
// concurrently, carrying just its own relay call.
func TestParallelSuspensionsAreWaitedForConcurrently(t *testing.T) {
	mock := newMock(t)
	mock.script(callReply("c1:alpha", "c2:beta", "c3:gamma"), textReply("all parked calls answered"))
	type parked struct {
		req   tn.Request
		reply chan tn.Answer
	}
	arrivals := make(chan parked, 3)
	c := openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.WaitFor = func(req tn.Request) (tn.Answer, error) {
			p := parked{req: req, reply: make(chan tn.Answer, 1)}
			arrivals <- p
			return <-p.reply, nil
		}
	})
	tk := toolkit(t, tn.RelayTool("alpha", "", nil), tn.RelayTool("beta", "", nil), tn.RelayTool("gamma", "", nil))
	done := make(chan tn.RunResult, 1)
	go func() {
		res, err := c.Run(testCtx(t), "go", tk)
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- res
	}()
	var all []parked
	for len(all) < 3 {
		select {
		case p := <-arrivals:
			all = append(all, p)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of 3 suspensions reached WaitFor before any was answered", len(all))
		}
	}
	for _, p := range all {
		calls := tn.RelayCallsOf(&p.req)
		if len(calls) != 1 {
			t.Fatalf("a WaitFor carried %d calls, want its own one", len(calls))
		}
		p.reply <- tn.Answer{ID: p.req.ID, Ok: true, Data: map[string]any{tn.RelayOutputKey: "out-" + calls[0].Name}}
	}
	select {
	case res := <-done:
		if res.Status != "done" || res.Text != "all parked calls answered" || len(res.ToolCalls) != 3 {
			t.Fatalf("status=%q text=%q calls=%d", res.Status, res.Text, len(res.ToolCalls))
		}
		for i, name := range []string{"alpha", "beta", "gamma"} {
			if res.ToolCalls[i].Output != "out-"+name {
				t.Fatalf("call %d output %q", i, res.ToolCalls[i].Output)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run never went on after the parked answers")
	}
}
