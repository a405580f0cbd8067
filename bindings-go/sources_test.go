package toolnexus_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// repoPath is a path of the repository, from this folder.
func repoPath(t *testing.T, rel string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", rel)
}

// everything is the path of server-everything's stdio entry point, installed from
// tests/mcp's lock file when missing. Without node the test skips, but under CI (CI set) it
// fails: CI installs node (tests/setup.sh).
func everything(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("MCP tests: node is not installed (CI installs it: tests/setup.sh)")
		}
		t.Skip("SKIPPING: node is not installed; CI runs this test")
	}
	dir := repoPath(t, "tests/mcp")
	entry := filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(entry); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in tests/mcp: %v\n%s", err, out)
		}
	}
	return entry
}

// everythingConfig is an MCP config of server-everything over stdio.
func everythingConfig(t *testing.T) tn.McpConfig {
	return tn.McpConfig{"everything": {Command: []string{"node", everything(t), "stdio"}}}
}

func create(t *testing.T, opts tn.Options) *tn.Toolkit {
	t.Helper()
	tk, err := tn.CreateToolkit(testCtx(t), opts)
	if err != nil {
		t.Fatalf("toolkit: %v", err)
	}
	t.Cleanup(tk.Close)
	return tk
}

func names(tools []tn.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func execute(t *testing.T, tk *tn.Toolkit, name string, args map[string]any) tn.ToolResult {
	t.Helper()
	r, err := tk.Execute(testCtx(t), name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// The built-ins, on by default, act inside their root and refuse a path leaving it.
func TestBuiltinsConfinedToRoot(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	tk := create(t, tn.Options{Builtins: tn.BuiltinsConfig{Root: root}})
	want := "bash read write edit grep glob webfetch question apply_patch todowrite"
	if got := strings.Join(names(tk.Tools()), " "); got != want {
		t.Errorf("tools: %s", got)
	}
	if r := execute(t, tk, "write", map[string]any{"path": "notes/a.txt", "content": "hello root"}); r.IsError {
		t.Fatalf("write: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(root, "notes/a.txt")); err != nil || string(b) != "hello root" {
		t.Fatalf("written under the root: %q, %v", b, err)
	}
	if r := execute(t, tk, "read", map[string]any{"path": "notes/a.txt"}); r.IsError || !strings.Contains(r.Output, "hello root") {
		t.Errorf("read: %+v", r)
	}
	for _, p := range []string{filepath.Join(outside, "secret.txt"), "../" + filepath.Base(outside) + "/secret.txt"} {
		r := execute(t, tk, "read", map[string]any{"path": p})
		if !r.IsError || strings.Contains(r.Output, "secret\n") || !strings.Contains(r.Output, "outside") {
			t.Errorf("read %s: want the escape refused, got %+v", p, r)
		}
	}
	// A Tool taken from the toolkit runs the engine's built-in too.
	glob, ok := tk.Get("glob")
	if !ok {
		t.Fatal("no glob")
	}
	if r, err := glob.Execute(map[string]any{"pattern": "**/*.txt"}, nil); err != nil || !strings.Contains(r.Output, "a.txt") {
		t.Errorf("glob: %+v, %v", r, err)
	}
	// Off, per tool, and DisableTools.
	some := create(t, tn.Options{Builtins: map[string]any{"tools": map[string]any{"bash": false}}, DisableTools: []string{"webfetch"}})
	if got := strings.Join(names(some.Tools()), " "); strings.Contains(got, "bash") || strings.Contains(got, "webfetch") || len(some.Tools()) != 8 {
		t.Errorf("bash off and webfetch disabled: %s", got)
	}
}

func TestBuiltinHelpers(t *testing.T) {
	all := tn.CreateBuiltinTools()
	if len(all) != 10 || all[0].Name != "bash" || all[0].Source != tn.SourceBuiltin {
		t.Fatalf("CreateBuiltinTools: %v", names(all))
	}
	if got := tn.SelectBuiltins(tn.BuiltinsConfig{Tools: map[string]bool{"bash": false, "write": false}}); len(got) != 8 {
		t.Errorf("SelectBuiltins: %v", names(got))
	}
	off := false
	if tn.SelectBuiltins(false) != nil || tn.SelectBuiltins(&tn.BuiltinsConfig{Enabled: &off}) != nil {
		t.Error("SelectBuiltins: a source switched off selects nothing")
	}
	if !tn.BuiltinsEnabled(nil) || tn.BuiltinsEnabled(false) || !tn.BuiltinsEnabled(true) ||
		!tn.BuiltinsEnabled(map[string]any{"tools": map[string]any{"bash": false}}) ||
		tn.BuiltinsEnabled(map[string]any{"enabled": true, "disabled": true}) {
		t.Error("BuiltinsEnabled")
	}
	var todo tn.Tool
	for _, b := range all {
		if b.Name == "todowrite" {
			todo = b
		}
	}
	r, err := todo.Execute(map[string]any{"todos": []any{map[string]any{"id": "1", "text": "test it", "completed": false}}}, nil)
	if err != nil || r.IsError {
		t.Errorf("todowrite: %+v, %v", r, err)
	}
}

// An HTTP tool is declared to the engine, which calls the endpoint itself.
func TestHTTPTool(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" key="+r.Header.Get("X-Key")+" body="+string(body))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("TN_GO_HTTP_KEY", "k-123")
	lookup := tn.HTTPTool(tn.HTTPToolOptions{
		Name: "lookup", Description: "Looks an item up.", Method: "POST", URL: srv.URL + "/items/{id}",
		Headers: map[string]string{"X-Key": "${TN_GO_HTTP_KEY}"}, Query: []string{"q"},
		InputSchema: tn.JSONSchema{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}},
	})
	if lookup.Source != tn.SourceHTTP {
		t.Errorf("source %q", lookup.Source)
	}
	tk := create(t, tn.Options{Builtins: false, ExtraTools: []tn.Tool{lookup}})
	if got := names(tk.Tools()); len(got) != 1 || got[0] != "lookup" {
		t.Fatalf("tools: %v", got)
	}
	want := `POST /items/42?q=blue key=k-123 body={"n": 1}`
	if r := execute(t, tk, "lookup", map[string]any{"id": "42", "q": "blue", "n": 1}); r.IsError || r.Output != want {
		t.Errorf("through the toolkit: %+v", r)
	}
	if r, err := lookup.Execute(map[string]any{"id": "42", "q": "blue", "n": 1}, nil); err != nil || r.Output != want {
		t.Errorf("on its own: %+v, %v", r, err)
	}
	// The engine checks the spec.
	_, err := tn.CreateToolkit(testCtx(t), tn.Options{Builtins: false, ExtraTools: []tn.Tool{tn.HTTPTool(tn.HTTPToolOptions{Name: "x", Method: "GET", URL: "http://x", Body: "xml"})}})
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument || !strings.Contains(err.Error(), "body") {
		t.Errorf("a bad body mode: %v", err)
	}
}

func TestSkills(t *testing.T) {
	tk := create(t, tn.Options{
		Builtins:      false,
		SkillsDir:     []string{repoPath(t, "core/tests/fixtures/skills")},
		Skills:        []tn.SkillDef{{Name: "data-skill", Description: "A skill given as data.", Content: "Do the data thing."}},
		DisableSkills: []string{"dup-name"},
	})
	prompt := tk.SkillsPrompt()
	if !strings.Contains(prompt, "hello-world") || !strings.Contains(prompt, "data-skill") {
		t.Errorf("prompt: %s", prompt)
	}
	if got := names(tk.Tools()); len(got) != 1 || got[0] != "skill" {
		t.Fatalf("tools: %v", got)
	}
	if r := execute(t, tk, "skill", map[string]any{"name": "hello-world"}); r.IsError || !strings.Contains(r.Output, "# Hello World") {
		t.Errorf("skill hello-world: %+v", r)
	}
	if r := execute(t, tk, "skill", map[string]any{"name": "data-skill"}); r.IsError || !strings.Contains(r.Output, "Do the data thing.") {
		t.Errorf("skill data-skill: %+v", r)
	}
	if none := create(t, tn.Options{Builtins: false}); none.SkillsPrompt() != "" {
		t.Error("no skill source: an empty prompt")
	}
	// A data skill without a description is not in the catalog (the Go port's rule; the
	// zero value is "not given").
	quiet := create(t, tn.Options{Builtins: false, Skills: []tn.SkillDef{
		{Name: "loud", Description: "Says so.", Content: "x"}, {Name: "quiet", Content: "y"}}})
	if p := quiet.SkillsPrompt(); strings.Contains(p, "quiet") || !strings.Contains(p, "loud") {
		t.Errorf("catalog: %s", p)
	}
}

// A server that cannot start is isolated: the rest of the toolkit is built.
func TestFailedMcpServerIsIsolated(t *testing.T) {
	tk := create(t, tn.Options{
		McpConfig: map[string]any{"mcpServers": map[string]any{
			"broken": map[string]any{"command": []string{filepath.Join(t.TempDir(), "no-such-server")}},
			"off":    map[string]any{"command": []string{"true"}, "enabled": false},
		}},
		Builtins: tn.BuiltinsConfig{Tools: map[string]bool{"bash": false}},
	})
	status := tk.McpStatus()
	if status["broken"] != tn.StatusFailed || status["off"] != tn.StatusDisabled || len(status) != 2 {
		t.Errorf("status: %v", status)
	}
	warned := false
	for _, w := range tk.Warnings() {
		warned = warned || strings.Contains(w, "broken")
	}
	if !warned {
		t.Errorf("warnings: %q", tk.Warnings())
	}
	if len(tk.Tools()) != 9 {
		t.Errorf("the built-ins are there: %v", names(tk.Tools()))
	}
	tk.Close()
	tk.Close()
}

func TestCreateToolkitCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tn.CreateToolkit(ctx, tn.Options{McpConfig: map[string]any{"s": map[string]any{"command": []string{"true"}}}})
	var te *tn.Error
	if !errors.As(err, &te) || te.Kind != tn.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
	// A server that never answers: ctx ending aborts the load.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = tn.CreateToolkit(ctx, tn.Options{McpConfig: tn.McpConfig{"mute": {Command: []string{"sleep", "30"}}}})
	if !errors.As(err, &te) || te.Kind != tn.KindCancelled || time.Since(start) > 10*time.Second {
		t.Errorf("cancelled during the load: %v after %v", err, time.Since(start))
	}
}

func TestMcpEverythingOverStdio(t *testing.T) {
	tk := create(t, tn.Options{McpConfig: everythingConfig(t), Builtins: false})
	if tk.McpStatus()["everything"] != tn.StatusConnected {
		t.Fatalf("status %v, warnings %q", tk.McpStatus(), tk.Warnings())
	}
	echo, ok := tk.Get("everything_echo")
	if !ok {
		t.Fatalf("tools: %v", names(tk.Tools()))
	}
	if r := execute(t, tk, "everything_echo", map[string]any{"message": "hi there"}); r.IsError || !strings.Contains(r.Output, "hi there") {
		t.Errorf("echo: %+v", r)
	}
	if r, err := echo.Execute(map[string]any{"message": "direct"}, nil); err != nil || !strings.Contains(r.Output, "direct") {
		t.Errorf("echo's Execute: %+v, %v", r, err)
	}
	tk.Close()
	if _, err := tk.Execute(testCtx(t), "everything_echo", map[string]any{"message": "x"}); err == nil {
		t.Error("a closed toolkit cannot execute")
	}
}

func TestServeMcp(t *testing.T) {
	tk := create(t, tn.Options{ExtraTools: []tn.Tool{text("weather", "sunny")}})
	h, err := tk.Serve("", tn.ServeOptions{MCP: &tn.MCPServeConfig{Token: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	exposed := strings.Join(h.Tools, " ")
	if !strings.Contains(exposed, "weather") || strings.Contains(exposed, "bash") || !strings.HasPrefix(h.URL, "http://127.0.0.1:") || h.Endpoint != h.URL+"/mcp" {
		t.Errorf("url %s, tools %s", h.URL, exposed)
	}
	post := func(headers map[string]string) int {
		req, _ := http.NewRequest("POST", h.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(nil); s != http.StatusUnauthorized {
		t.Errorf("no token: %d", s)
	}
	if s := post(map[string]string{"Authorization": "Bearer wrong"}); s != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", s)
	}
	if s := post(map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}); s != http.StatusForbidden {
		t.Errorf("a foreign origin: %d", s)
	}
	if s := post(map[string]string{"Authorization": "Bearer s3cret"}); s == http.StatusUnauthorized || s == http.StatusForbidden {
		t.Errorf("the token: %d", s)
	}
	_ = h.Stop()
	if _, err := http.Post(h.Endpoint, "application/json", strings.NewReader("{}")); err == nil {
		t.Error("a stopped server still answers")
	}
	named, err := tk.Serve("127.0.0.1:0", tn.ServeOptions{MCP: &tn.MCPServeConfig{Tools: []string{"bash", "nope"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()
	if strings.Join(named.Tools, " ") != "bash" || len(named.Warnings) != 1 || !strings.Contains(named.Warnings[0], "nope") {
		t.Errorf("bash named: tools %v, warnings %q", named.Tools, named.Warnings)
	}
	if _, err := tk.Serve("0.0.0.0:0", tn.ServeOptions{MCP: &tn.MCPServeConfig{}}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("off loopback without a token: %v", err)
	}
	// No MCP options: the toolkit's mcpServer profile, which this one has not.
	if _, err := tk.Serve("", tn.ServeOptions{}); err == nil || !strings.Contains(err.Error(), "mcpServer") {
		t.Errorf("no MCP profile: %v", err)
	}
}

// One run over every source: the model calls an MCP tool, the skill tool and a built-in, then
// the question built-in suspends and the run is resumed durably.
func TestRunOverEverySource(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "plan.md"), []byte("the plan"), 0o600); err != nil {
		t.Fatal(err)
	}
	tk := create(t, tn.Options{
		McpConfig: everythingConfig(t),
		Skills:    []tn.SkillDef{{Name: "greet", Description: "Greets.", Content: "Say hello warmly."}},
		Builtins:  tn.BuiltinsConfig{Root: root},
	})
	mock := newMock(t)
	client := openaiClient(t, mock, nil)
	mock.script(
		callReply(`c1:everything_echo:{"message":"from mcp"}`, `c2:skill:{"name":"greet"}`, `c3:read:{"path":"plan.md"}`),
		callReply(`c4:question:{"questions":[{"question":"Proceed?","options":["yes","no"]}]}`),
	)
	halted, err := client.Run(testCtx(t), "do it all", tk)
	if err != nil || halted.Status != "pending" || halted.Pending == nil || halted.Pending.Kind != "question" {
		t.Fatalf("got %+v, %v", halted, err)
	}
	if halted.Pending.Prompt != "Proceed? (options: yes, no)" {
		t.Errorf("prompt %q", halted.Pending.Prompt)
	}
	outputs := map[string]string{}
	for _, c := range halted.ToolCalls {
		outputs[c.Name] = c.Output
	}
	if !strings.Contains(outputs["everything_echo"], "from mcp") || !strings.Contains(outputs["skill"], "Say hello warmly.") ||
		!strings.Contains(outputs["read"], "the plan") {
		t.Errorf("tool outputs: %v", outputs)
	}
	// The skill catalog went to the model in the system prompt.
	first := mock.seen()[0].Body.(map[string]any)["messages"].([]any)[0].(map[string]any)
	if first["role"] != "system" || !strings.Contains(first["content"].(string), "greet") {
		t.Errorf("system prompt: %v", first)
	}
	mock.script(textReply("all done"))
	answer := tn.Answer{ID: halted.Pending.ID, Ok: true, Data: map[string]any{"answers": []any{"yes"}}}
	done, err := client.RunWithAnswer(testCtx(t), tk, halted.Messages, *halted.Pending, answer)
	if err != nil || done.Status != "done" || done.Text != "all done" {
		t.Fatalf("resumed: %+v, %v", done, err)
	}
	tools := toolMessages(mock.seen()[0].Body)
	last := tools[len(tools)-1]
	if last["tool_call_id"] != "c4" || !strings.Contains(last["content"].(string), "yes") {
		t.Errorf("the answer reached the model: %v", last)
	}
}

func TestFreeAdaptersDeclareEveryTool(t *testing.T) {
	tools := []tn.Tool{tn.RelayTool("lookup", "look something up", tn.JSONSchema{"type": "object"})}
	openai := tn.ToOpenAI(tools)
	fn, _ := openai[0].(map[string]any)["function"].(map[string]any)
	if len(openai) != 1 || fn["name"] != "lookup" || fn["description"] != "look something up" {
		t.Fatalf("ToOpenAI: %v", openai)
	}
	anth := tn.ToAnthropic(tools)
	if len(anth) != 1 || anth[0].(map[string]any)["input_schema"] == nil {
		t.Fatalf("ToAnthropic: %v", anth)
	}
	gem := tn.ToGemini(tools)
	decls, _ := gem[0].(map[string]any)["functionDeclarations"].([]any)
	if len(gem) != 1 || len(decls) != 1 {
		t.Fatalf("ToGemini: %v", gem)
	}
	if got := tn.ToOpenAI([]tn.Tool{tn.RelayTool("bash", "", nil)}); len(got) != 0 {
		t.Fatalf("a refused list declares nothing: %v", got)
	}
}
