package toolnexus_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// cancelled checks that err is the run's cancellation caused by cause.
func cancelled(t *testing.T, err error, cause error) {
	t.Helper()
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindCancelled {
		t.Fatalf("want a cancelled *Error, got %v", err)
	}
	if !errors.Is(err, cause) {
		t.Fatalf("the error %v does not unwrap to %v", err, cause)
	}
}

func TestCtxCancelAbortsTheInFlightRequest(t *testing.T) {
	for _, goHTTP := range []bool{false, true} {
		name := map[bool]string{false: "engine-http", true: "go-http"}[goHTTP]
		t.Run(name, func(t *testing.T) {
			mock := newMock(t)
			arrived := mock.notifyArrivals()
			never := make(chan struct{})
			defer close(never)
			mock.script(mockReply{Body: textReply("late").Body, Wait: never})
			client := openaiClient(t, mock, func(o *tn.ClientOptions) {
				if goHTTP {
					o.HTTPClient = &http.Client{}
				}
			})
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-arrived
				cancel()
			}()
			start := time.Now()
			_, err := client.Run(ctx, "hello", nil)
			cancelled(t, err, context.Canceled)
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the run took %v to end after cancel", d)
			}
		})
	}
}

func TestCtxCancelReachesABlockedTool(t *testing.T) {
	mock := newMock(t)
	started, sawCancel := make(chan struct{}), make(chan error, 1)
	wait := fn("wait", func(_ map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
		close(started)
		<-ctx.Ctx.Done()
		sawCancel <- ctx.Ctx.Err()
		return tn.ToolResult{Output: "too late"}, nil
	})
	mock.script(callReply("c1:wait"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := openaiClient(t, mock, nil).Run(ctx, "wait", toolkit(t, wait))
	cancelled(t, err, context.Canceled)
	select {
	case err := <-sawCancel:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the tool saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tool never saw the cancellation")
	}
}

func TestCtxDeadlineEndsTheRun(t *testing.T) {
	mock := newMock(t)
	never := make(chan struct{})
	defer close(never)
	mock.script(mockReply{Body: textReply("late").Body, Wait: never})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := openaiClient(t, mock, nil).Run(ctx, "hello", nil)
	cancelled(t, err, context.DeadlineExceeded)
}

func TestAlreadyCancelledCtxSendsNothing(t *testing.T) {
	mock := newMock(t)
	mock.script()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := openaiClient(t, mock, nil).Run(ctx, "hello", nil)
	cancelled(t, err, context.Canceled)
	if len(mock.seen()) != 0 {
		t.Fatal("a request was sent")
	}
}

func TestTimeoutMsBoundsTheRun(t *testing.T) {
	mock := newMock(t)
	never := make(chan struct{})
	defer close(never)
	mock.script(mockReply{Body: textReply("late").Body, Wait: never})
	client := openaiClient(t, mock, func(o *tn.ClientOptions) { o.TimeoutMs = 150 })
	_, err := client.Run(testCtx(t), "hello", nil)
	var te *tn.Error
	var rt *tn.RunTimeoutError
	if !errors.As(err, &te) || te.Kind != tn.KindTimeout || !errors.As(err, &rt) || rt.TimeoutMs != 150 {
		t.Fatalf("want a timeout error naming 150ms, got %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("a run timeout must unwrap to context.DeadlineExceeded")
	}
}

func TestToolContextCarriesTheRunsValuesAndDeadline(t *testing.T) {
	type key struct{}
	mock := newMock(t)
	var seen struct {
		value       any
		hasDeadline bool
		timeoutMs   int
	}
	probe := fn("probe", func(_ map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
		seen.value = ctx.Ctx.Value(key{})
		_, seen.hasDeadline = ctx.Ctx.Deadline()
		seen.timeoutMs = ctx.Timeout
		return tn.ToolResult{Output: "ok"}, nil
	})
	mock.script(callReply("c1:probe"), textReply("done"))
	client := openaiClient(t, mock, func(o *tn.ClientOptions) { o.TimeoutMs = 20000 })
	ctx := context.WithValue(testCtx(t), key{}, "run-42")
	if _, err := client.Run(ctx, "probe", toolkit(t, probe)); err != nil {
		t.Fatal(err)
	}
	if seen.value != "run-42" || !seen.hasDeadline || seen.timeoutMs <= 0 || seen.timeoutMs > 20000 {
		t.Fatalf("the tool saw %+v", seen)
	}
}

func TestConcurrentRunsEachSeeTheirOwnContext(t *testing.T) {
	type key struct{}
	mock := newMock(t)
	echo := fn("echo", func(_ map[string]any, ctx *tn.ToolContext) (tn.ToolResult, error) {
		time.Sleep(20 * time.Millisecond)
		v, _ := ctx.Ctx.Value(key{}).(string)
		return tn.ToolResult{Output: v}, nil
	})
	tk := toolkit(t, echo)
	client := openaiClient(t, mock, nil)
	mock.answerWith(func(body any) mockReply { // a tool call first, then an answer
		if len(toolMessages(body)) == 0 {
			return callReply("c1:echo")
		}
		return textReply("done")
	})
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			want := string(rune('a' + i))
			res, err := client.Run(context.WithValue(testCtx(t), key{}, want), "echo", tk)
			if err == nil && (len(res.ToolCalls) != 1 || res.ToolCalls[0].Output != want) {
				err = fmt.Errorf("run %s saw %+v", want, res.ToolCalls)
			}
			errs <- err
		}(i)
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
