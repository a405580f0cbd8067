package toolnexus_test

// Runs driven on the caller's thread (tn_go_run_here): what they hand back, and that their
// tools keep running at once.

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// The engine leaves the unchanged history out of a run's result and the binding puts the
// caller's own messages back in front: the transcript is whole, in order, and its first
// messages are the values passed in.
func TestRunWithHistoryGivesBackTheWholeTranscript(t *testing.T) {
	mock := newMock(t)
	mock.script(textReply("third answer"))
	first := map[string]any{"role": "user", "content": "first"}
	history := []any{
		first,
		map[string]any{"role": "assistant", "content": "second"},
	}
	res, err := openaiClient(t, mock, nil).RunWithHistory(testCtx(t), "again", nil, history)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 4 {
		t.Fatalf("messages: %#v", res.Messages)
	}
	if reflect.ValueOf(res.Messages[0]).Pointer() != reflect.ValueOf(first).Pointer() {
		t.Errorf("the first message is not the caller's own value: %#v", res.Messages[0])
	}
	want := []any{"first", "second", "again", "third answer"}
	for i, m := range res.Messages {
		if got := m.(map[string]any)["content"]; got != want[i] {
			t.Errorf("message %d: %v, want %v", i, got, want[i])
		}
	}
	if n := len(history); n != 2 {
		t.Errorf("the caller's history changed length: %d", n)
	}
}

// With nothing that could end it early (a context that never ends, no timeout) a run's last
// tool call to start may run on the thread driving the run; its siblings still run at once:
// tools that wait for each other both finish.
func TestToolsOfOneTurnMeetWhenNothingCanEndTheRun(t *testing.T) {
	mock := newMock(t)
	mock.script(callReply("1:a", "2:b", "3:c"), callReply("4:a"), textReply("met"))
	var arrived sync.WaitGroup
	arrived.Add(3)
	meet := func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		arrived.Done()
		arrived.Wait()
		return tn.ToolResult{Output: "met"}, nil
	}
	var once sync.Once
	lone := func(args map[string]any, tc *tn.ToolContext) (tn.ToolResult, error) {
		first := false
		once.Do(func() { first = true })
		if first {
			return meet(args, tc)
		}
		return tn.ToolResult{Output: "alone"}, nil
	}
	tk := toolkit(t, fn("a", lone), fn("b", meet), fn("c", meet))
	done := make(chan error, 1)
	go func() {
		res, err := openaiClient(t, mock, nil).Run(context.Background(), "go", tk)
		if err == nil && res.ToolCallCount != 4 {
			err = fmt.Errorf("tool calls: %d", res.ToolCallCount)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the tools of one turn did not run at once")
	}
}

// The driving thread runs the siblings of the last call to start that no goroutine has begun
// yet (helping.go), while their goroutines may begin them at the same moment: on one P, where
// the driver mostly wins, and on every P, each call still runs exactly once and its own result
// goes back under its own id.
func TestEveryParallelCallRunsOnceWhoeverClaimsIt(t *testing.T) {
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			mock := newMock(t)
			var ran [4]atomic.Int32
			tools := make([]tn.Tool, len(ran))
			for i := range tools {
				tools[i] = fn(fmt.Sprintf("t%d", i), func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
					ran[i].Add(1)
					return tn.ToolResult{Output: fmt.Sprintf("out%d", i)}, nil
				})
			}
			tk := toolkit(t, tools...)
			client := openaiClient(t, mock, nil)
			helpedBefore := tn.Helped()
			const runs = 50
			for r := 0; r < runs; r++ {
				mock.script(callReply("c0:t0", "c1:t1", "c2:t2", "c3:t3"), textReply("done"))
				res, err := client.Run(context.Background(), "go", tk)
				if err != nil {
					t.Fatal(err)
				}
				for i, tc := range res.ToolCalls {
					if want := fmt.Sprintf("out%d", i); tc.Name != fmt.Sprintf("t%d", i) || tc.Output != want {
						t.Fatalf("run %d, call %d: %s gave %q, want t%d giving %q", r, i, tc.Name, tc.Output, i, want)
					}
				}
			}
			for i := range ran {
				if n := ran[i].Load(); n != runs {
					t.Errorf("t%d ran %d times in %d runs", i, n, runs)
				}
			}
			if procs == 1 && tn.Helped() == helpedBefore {
				t.Errorf("on one P the driving thread never ran a sibling call in %d runs", runs)
			}
		})
	}
}

// A tool run on the driving thread may itself run an agent: its own toolkit and a nested run.
func TestAToolRunInlineMayRunANestedAgent(t *testing.T) {
	mock := newMock(t)
	mock.script(callReply("1:delegate"), textReply("inner answer"), textReply("outer answer"))
	client := openaiClient(t, mock, nil)
	delegate := fn("delegate", func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		inner, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false, ExtraTools: []tn.Tool{text("noop", "x")}})
		if err != nil {
			return tn.ToolResult{}, err
		}
		defer inner.Close()
		res, err := client.Run(context.Background(), "inner", inner)
		if err != nil {
			return tn.ToolResult{}, err
		}
		return tn.ToolResult{Output: res.Text}, nil
	})
	res, err := client.Run(context.Background(), "outer", toolkit(t, delegate))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "outer answer" || len(res.ToolCalls) != 1 || res.ToolCalls[0].Output != "inner answer" {
		t.Fatalf("result: %q, calls %#v", res.Text, res.ToolCalls)
	}
}
