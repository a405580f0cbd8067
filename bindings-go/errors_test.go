package toolnexus_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"net/http"
	"strings"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func TestHTTPErrorExposesStatusBodyAndRetryAfter(t *testing.T) {
	mock := newMock(t)
	mock.script(statusReply(400, nil, `{"error":{"message":"bad model","org_id":"org-123"}}`))
	_, err := openaiClient(t, mock, nil).Run(testCtx(t), "hi", nil)
	var te *tn.Error
	var pe *tn.ProviderError
	if !errors.As(err, &te) || te.Kind != tn.KindHTTP || !errors.As(err, &pe) {
		t.Fatalf("want an http error, got %v", err)
	}
	if pe.Status != 400 || !strings.Contains(pe.Body, "bad model") || strings.Contains(pe.Body, "org-123") {
		t.Fatalf("ProviderError: %+v", pe)
	}
	if !strings.HasPrefix(err.Error(), "LLM 400: ") || pe.Error() != err.Error() {
		t.Fatalf("message %q / %q", err.Error(), pe.Error())
	}
	if len(mock.seen()) != 1 {
		t.Fatalf("a 400 is not retried; %d requests were sent", len(mock.seen()))
	}

	mock.script(statusReply(429, map[string]string{"Retry-After": "0"}, `{"error":"slow down"}`),
		statusReply(429, map[string]string{"Retry-After": "0"}, `{"error":"slow down"}`))
	_, err = openaiClient(t, mock, func(o *tn.ClientOptions) { o.Retries = 1 }).Run(testCtx(t), "hi", nil)
	if !errors.As(err, &pe) || pe.Status != 429 || pe.RetryAfter != "0" {
		t.Fatalf("want a 429 with Retry-After 0, got %v (%+v)", err, pe)
	}

	mock.script(statusReply(401, nil, `{"error":"bad key test-key"}`))
	_, err = openaiClient(t, mock, nil).Run(testCtx(t), "hi", nil)
	if !errors.As(err, &pe) || pe.Status != 401 || pe.Body != "" || strings.Contains(err.Error(), "test-key") {
		t.Fatalf("a 401 body must be dropped: %v (%+v)", err, pe)
	}
}

func TestContentPartOptionsReachTheEngine(t *testing.T) {
	base := tn.ClientOptions{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKey: "k"}
	ok := base
	ok.MaxPartBytes, ok.OnUnsupportedPart = 10, "text"
	if _, err := tn.NewClient(ok); err != nil {
		t.Fatalf("MaxPartBytes and OnUnsupportedPart are options of the engine: %v", err)
	}
	bad := base
	bad.OnUnsupportedPart = "drop"
	_, err := tn.NewClient(bad)
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument || !strings.Contains(err.Error(), "on_unsupported_part") {
		t.Fatalf("the engine reads OnUnsupportedPart: %v", err)
	}
}

func TestOptionsTheEngineRefusesAreErrors(t *testing.T) {
	for _, opts := range []tn.ClientOptions{
		{BaseURL: "not a url", Model: "m", APIKey: "k"},
		{BaseURL: "http://127.0.0.1:1/v1", Model: "", APIKey: "k"},
		{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Style: "gemini", APIKey: "k"},
		{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKey: "k", MaxTurns: -1},
	} {
		_, err := tn.NewClient(opts)
		var te *tn.Error
		if !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument {
			t.Errorf("%+v: want invalid_argument, got %v", opts, err)
		}
	}
}

func TestEngineOwnedRequestParamsAreDroppedWithOneLoggedWarning(t *testing.T) {
	var logged bytes.Buffer
	previous := log.Writer()
	log.SetOutput(&logged)
	defer log.SetOutput(previous)
	mock := newMock(t)
	mock.script(textReply("a"), textReply("b"))
	c := openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.RequestParams = map[string]any{"tools": []any{}, "seed": 7}
	})
	for i := 0; i < 2; i++ {
		if _, err := c.Run(testCtx(t), "hi", nil); err != nil {
			t.Fatal(err)
		}
	}
	body, _ := mock.seen()[0].Body.(map[string]any)
	if _, sent := body["tools"]; sent || body["seed"] != float64(7) {
		t.Fatalf("body %v", body)
	}
	if n := strings.Count(logged.String(), `request_params key "tools" is not allowed`); n != 1 {
		t.Fatalf("want the warning logged once, got %d: %q", n, logged.String())
	}
}

func TestMissingAPIKeyIsAConfigError(t *testing.T) {
	for _, v := range []string{"OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		t.Setenv(v, "")
	}
	mock := newMock(t)
	_, err := openaiClient(t, mock, func(o *tn.ClientOptions) { o.APIKey = "" }).Run(testCtx(t), "hi", nil)
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindConfig {
		t.Fatalf("want a config error, got %v", err)
	}
	// With a host transport too, as in the Go port: nothing is sent.
	mock.script(textReply("hi"))
	_, err = openaiClient(t, mock, func(o *tn.ClientOptions) {
		o.APIKey = ""
		o.HTTPClient = &http.Client{}
	}).Run(testCtx(t), "hi", nil)
	if !errors.As(err, &te) || te.Kind != tn.KindConfig || len(mock.seen()) != 0 {
		t.Fatalf("want a config error and no request, got %v, %d requests", err, len(mock.seen()))
	}
}

func TestUnsupportedToolkitOptionsAreRejected(t *testing.T) {
	for name, opts := range map[string]tn.Options{
		"Agents": {Agents: []tn.Agent{{Card: "http://127.0.0.1:1/.well-known/agent-card.json"}}},
	} {
		opts.Builtins = false
		_, err := tn.CreateToolkit(context.Background(), opts)
		if err == nil || !strings.Contains(err.Error(), "option "+name+" ") || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s: want a clear rejection, got %v", name, err)
		}
	}
}

// Builtins is the engine's to read: nil is on (all ten), false off, and a value it cannot
// read is its invalid_argument error, not a rule of this package.
func TestBuiltinsAreTheEngines(t *testing.T) {
	tk, err := tn.CreateToolkit(context.Background(), tn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Close()
	if n := len(tk.Tools()); n != 10 {
		t.Errorf("the zero Options: want the ten built-ins, got %d tools", n)
	}
	off, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false})
	if err != nil || len(off.Tools()) != 0 {
		t.Errorf("Builtins false: got %v, %v", off, err)
	}
	_, err = tn.CreateToolkit(context.Background(), tn.Options{Builtins: "yes"})
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument || !strings.Contains(err.Error(), "builtins") {
		t.Errorf("Builtins \"yes\": want the engine's invalid_argument, got %v", err)
	}
}

func TestBadToolsAreRefused(t *testing.T) {
	// Each case names what its message must mention, so a refusal for another reason (the
	// Builtins rule, say) does not pass for the tool's own problem.
	for name, c := range map[string]struct {
		tool tn.Tool
		says string
	}{
		"no Execute":           {tn.Tool{Name: "x", Description: "x"}, "Execute"},
		"relay named bash":     {tn.RelayTool("bash", "shadow", nil), "bash"},
		"empty name":           {text("", "x"), "name"},
		"unknown source":       {tn.Tool{Name: "x", Source: "elsewhere", Execute: text("x", "x").Execute}, "elsewhere"},
		"schema not encodable": {tn.Tool{Name: "x", InputSchema: tn.JSONSchema{"f": func() {}}, Execute: text("x", "x").Execute}, "cannot encode"},
	} {
		_, err := tn.CreateToolkit(context.Background(), tn.Options{Builtins: false, ExtraTools: []tn.Tool{c.tool}})
		var te *tn.Error
		if !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: want invalid_argument mentioning %q, got %v", name, c.says, err)
		}
	}
}

func TestAClosedToolkitCannotRun(t *testing.T) {
	tk := toolkit(t, text("a", "a"))
	tk.Close()
	tk.Close()
	mock := newMock(t)
	_, err := openaiClient(t, mock, nil).Run(testCtx(t), "hi", tk)
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("got %v", err)
	}
}
