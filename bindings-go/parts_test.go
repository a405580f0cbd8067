package toolnexus_test

// The tool sources' parts on their own (skills.go, mcp.go) and the metadata numbers.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func TestListSkills(t *testing.T) {
	inv := tn.ListSkills(tn.LoadSkillsOptions{
		Dirs:   []string{repoPath(t, "core/tests/fixtures/skills")},
		Skills: []tn.SkillDef{{Name: "data-skill", Description: "d", Content: "data body", Resources: []string{"a.txt"}}},
	})
	byName := map[string]tn.SkillInfo{}
	for _, s := range inv.Skills {
		byName[s.Name] = s
	}
	hello, ok := byName["hello-world"]
	if !ok || hello.Origin != "fs" || !strings.HasSuffix(hello.Location, filepath.Join("hello-world", "SKILL.md")) ||
		!strings.Contains(hello.Content, "# Hello World") || hello.Description == "" {
		t.Errorf("hello-world: %+v", hello)
	}
	data, ok := byName["data-skill"]
	if !ok || data.Origin != "logical" || data.Content != "data body" || !reflect.DeepEqual(data.Resources, []string{"a.txt"}) {
		t.Errorf("data-skill: %+v", data)
	}
	reasons := map[tn.SkillSkipReason]bool{}
	for _, s := range inv.Skipped {
		reasons[s.Reason] = true
		if s.Location == "" {
			t.Errorf("skip without a location: %+v", s)
		}
	}
	if !reasons[tn.SkipMissingName] || !reasons[tn.SkipMalformed] {
		t.Errorf("skipped: %+v", inv.Skipped)
	}
	if empty := tn.ListSkills(tn.LoadSkillsOptions{}); len(empty.Skills) != 0 || empty.Skipped == nil {
		t.Errorf("no sources: %+v", empty)
	}
}

func TestLoadSkills(t *testing.T) {
	src := tn.LoadSkills(repoPath(t, "core/tests/fixtures/skills"))
	if _, ok := src.Skills["hello-world"]; !ok {
		t.Fatalf("skills: %v", src.Skills)
	}
	if src.Tool.Name != "skill" || src.Tool.Source != tn.SourceSkill || src.Tool.Description != tn.SkillToolDescription ||
		tn.SkillToolDescription == "" {
		t.Errorf("tool: %+v", src.Tool)
	}
	prompt := src.Prompt()
	if !strings.HasPrefix(prompt, tn.SkillsPromptPreamble) || tn.SkillsPromptPreamble == "" || !strings.Contains(prompt, "hello-world") {
		t.Errorf("prompt: %q", prompt)
	}
	if len(src.Skipped) == 0 {
		t.Error("the fixtures' skipped candidates are reported")
	}
	r, err := src.Tool.Execute(map[string]any{"name": "hello-world"}, nil)
	if err != nil || r.IsError || !strings.Contains(r.Output, "Base directory for this skill: file://") {
		t.Errorf("execute: %+v %v", r, err)
	}
	miss, err := src.Tool.Execute(map[string]any{"name": "nope"}, nil)
	if err != nil || !miss.IsError || !strings.Contains(miss.Output, "not found") {
		t.Errorf("unknown skill: %+v %v", miss, err)
	}
	if none := tn.LoadSkills(t.TempDir()); len(none.Skills) != 0 || none.Prompt() == "" ||
		strings.HasPrefix(none.Prompt(), tn.SkillsPromptPreamble) {
		t.Errorf("no skills: %v %q", none.Skills, none.Prompt())
	}
}

func TestLoadSkillsWithData(t *testing.T) {
	defs := []tn.SkillDef{
		{Name: "a", Description: "A", Content: "alpha", Resources: []string{"one", "two", "three"}},
		{Name: "b", Description: "B", Content: "beta"},
	}
	src := tn.LoadSkillsWith(tn.LoadSkillsOptions{Skills: defs, SampleLimit: 2, Filter: map[string]bool{"b": false}})
	if keys := skillNames(src); !reflect.DeepEqual(keys, []string{"a"}) {
		t.Fatalf("filtered: %v", keys)
	}
	r, err := src.Tool.Execute(map[string]any{"name": "a"}, nil)
	if err != nil || !strings.Contains(r.Output, "skill://a/") || !strings.Contains(r.Output, "<file>one</file>\n<file>two</file>") ||
		strings.Contains(r.Output, "three") {
		t.Errorf("data skill: %+v %v", r, err)
	}
	if r.Metadata["name"] != "a" {
		t.Errorf("metadata: %v", r.Metadata)
	}
	all := tn.LoadSkillsWith(tn.LoadSkillsOptions{Skills: defs, Filter: map[string]bool{}})
	if keys := skillNames(all); !reflect.DeepEqual(keys, []string{"a", "b"}) {
		t.Errorf("empty filter: %v", keys)
	}
	// An option the engine refuses: logged, and the tool answers with the engine's error.
	bad := tn.LoadSkillsWith(tn.LoadSkillsOptions{Skills: []tn.SkillDef{{Name: "", Content: "x"}}, SampleLimit: -7})
	var te *tn.Error
	if _, err := bad.Tool.Execute(map[string]any{"name": "x"}, nil); !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument ||
		len(bad.Skills) != 0 {
		t.Errorf("refused options: %+v %v", bad, err)
	}
}

func skillNames(s *tn.SkillSource) []string {
	out := make([]string, 0, len(s.Skills))
	for k := range s.Skills {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestParseMcpConfig(t *testing.T) {
	server := map[string]any{"foo": map[string]any{"command": []any{"x"}, "timeout": 500}}
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"foo": {"command": ["x"], "timeout": 500}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, input := range map[string]any{
		"mcpServers": map[string]any{"mcpServers": server},
		"servers":    map[string]any{"servers": server},
		"mcp":        map[string]any{"mcp": server},
		"bare":       server,
		"bytes":      []byte(`{"servers": {"foo": {"command": ["x"], "timeout": 500}}}`),
		"path":       path,
	} {
		cfg, err := tn.ParseMcpConfig(input)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if foo := cfg["foo"]; len(cfg) != 1 || !reflect.DeepEqual(foo.Command, []string{"x"}) || foo.Timeout != 500 {
			t.Errorf("%s: %+v", name, cfg)
		}
	}
	given := tn.McpConfig{"s": {URL: "http://x"}}
	if cfg, err := tn.ParseMcpConfig(given); err != nil || !reflect.DeepEqual(cfg, given) {
		t.Errorf("McpConfig: %v %v", cfg, err)
	}
	var te *tn.Error
	if _, err := tn.ParseMcpConfig(filepath.Join(t.TempDir(), "missing.json")); !errors.As(err, &te) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := tn.ParseMcpConfig([]byte("not json")); !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument {
		t.Errorf("bad JSON: %v", err)
	}
}

// deadURL is a loopback MCP URL nothing listens on.
func deadURL(t *testing.T) string {
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", closedPort(t))
}

func TestListMcpTools(t *testing.T) {
	inv, err := tn.ListMcpTools(testCtx(t), map[string]any{
		"bad": map[string]any{"url": deadURL(t), "timeout": 500},
		"off": map[string]any{"command": []string{"true"}, "enabled": false},
	})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if inv.Status["bad"] != tn.StatusFailed || inv.Status["off"] != tn.StatusDisabled || len(inv.Tools["bad"]) != 0 {
		t.Errorf("inventory: %+v", inv)
	}
	if len(inv.Warnings) == 0 {
		t.Error("the failed server is warned about")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tn.ListMcpTools(ctx, map[string]any{"bad": map[string]any{"url": deadURL(t)}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestListMcpToolsEverything(t *testing.T) {
	inv, err := tn.ListMcpTools(testCtx(t), everythingConfig(t))
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if inv.Status["everything"] != tn.StatusConnected || len(inv.Tools["everything"]) == 0 {
		t.Fatalf("inventory: %+v", inv)
	}
	echo := false
	for _, ti := range inv.Tools["everything"] {
		echo = echo || (ti.Name == "echo" && ti.InputSchema["type"] == "object")
	}
	if !echo {
		t.Errorf("tools: %+v", inv.Tools["everything"])
	}
}

func TestLoadMcp(t *testing.T) {
	src, err := tn.LoadMcp(map[string]any{"bad": map[string]any{"url": deadURL(t), "timeout": 500}})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	defer src.Close()
	if src.Status["bad"] != tn.StatusFailed || len(src.Tools) != 0 || len(src.Warnings) == 0 {
		t.Errorf("source: %+v", src)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tn.LoadMcpWithContext(ctx, map[string]any{"bad": map[string]any{"url": deadURL(t)}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	wf := func(tn.Request) (tn.Answer, error) { return tn.Answer{}, nil }
	src, err = tn.LoadMcp(tn.McpConfig{}, wf)
	if err != nil {
		t.Fatalf("with a waitFor: %v", err)
	}
	src.Close()
}

func TestLoadMcpEverything(t *testing.T) {
	src, err := tn.LoadMcp(everythingConfig(t))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	defer src.Close()
	if src.Status["everything"] != tn.StatusConnected {
		t.Fatalf("status: %v", src.Status)
	}
	var echo tn.Tool
	for _, tool := range src.Tools {
		if tool.Name == "everything_echo" {
			echo = tool
		}
	}
	if echo.Source != tn.SourceMCP {
		t.Fatalf("tools: %v", names(src.Tools))
	}
	r, err := echo.Execute(map[string]any{"message": "hi"}, nil)
	if err != nil || r.IsError || !strings.Contains(r.Output, "hi") {
		t.Errorf("echo: %+v %v", r, err)
	}
}

func TestExpandEnvHeaders(t *testing.T) {
	t.Setenv("TN_GO_TEST_TOKEN", "secret123")
	in := map[string]string{"Authorization": "Bearer ${TN_GO_TEST_TOKEN}", "X": "plain", "U": "${TN_GO_TEST_UNSET_VAR}"}
	out := tn.ExpandEnvHeaders(in)
	want := map[string]string{"Authorization": "Bearer secret123", "X": "plain", "U": ""}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("expanded: %v", out)
	}
	out["X"] = "mutated"
	if in["X"] != "plain" || in["Authorization"] != "Bearer ${TN_GO_TEST_TOKEN}" {
		t.Error("the input is left alone")
	}
	if tn.ExpandEnvHeaders(nil) != nil {
		t.Error("nil stays nil")
	}
}

func TestElicitation(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	form := tn.ElicitationToRequest(map[string]any{"message": "Your name?", "requestedSchema": schema})
	if form.Kind != "input" || form.Prompt != "Your name?" || !reflect.DeepEqual(form.Data["schema"], schema) || form.ID == "" {
		t.Errorf("form: %+v", form)
	}
	link := tn.ElicitationToRequest(map[string]any{"mode": "url", "message": "Log in", "url": "https://x/auth"})
	if link.Kind != "authorization" || link.URL != "https://x/auth" || link.Data != nil {
		t.Errorf("url: %+v", link)
	}
	for _, c := range []struct {
		answer  tn.Answer
		action  tn.ElicitationResponseAction
		content any
	}{
		{tn.Answer{ID: "1", Ok: true, Data: map[string]any{"name": "Ada"}}, tn.ElicitationResponseActionAccept, map[string]any{"name": "Ada"}},
		{tn.Answer{ID: "1", Ok: true}, tn.ElicitationResponseActionAccept, map[string]any{}},
		{tn.Answer{ID: "1", Reason: "declined"}, tn.ElicitationResponseActionDecline, nil},
		{tn.Answer{ID: "1"}, tn.ElicitationResponseActionCancel, nil},
	} {
		res := tn.AnswerToElicitResult(c.answer)
		if res == nil || res.Action != c.action || !reflect.DeepEqual(res.Content, c.content) {
			t.Errorf("%+v: %+v", c.answer, res)
		}
	}
}

func TestExposedMcpTools(t *testing.T) {
	tools := append(tn.CreateBuiltinTools(), text("echo", "e"), tn.RelayTool("relayed", "r", nil))
	def := names(tn.ExposedMcpTools(tools, nil))
	has := func(list []string, name string) bool {
		for _, n := range list {
			if n == name {
				return true
			}
		}
		return false
	}
	if has(def, "bash") || has(def, "write") || has(def, "relayed") || !has(def, "echo") || !has(def, "todowrite") {
		t.Errorf("default: %v", def)
	}
	named := names(tn.ExposedMcpTools(tools, &tn.MCPServeConfig{Tools: []string{"bash", "echo", "nope"}}))
	if !reflect.DeepEqual(named, []string{"bash", "echo"}) {
		t.Errorf("named: %v", named)
	}
	if got := tn.ExposedMcpTools(tools, &tn.MCPServeConfig{Tools: []string{"echo"}}); got[0].Execute == nil {
		t.Error("the tools given come back")
	}
}

// Tool-result metadata reads as a Go tool writes it: integral numbers are ints.
func TestMetadataNumbers(t *testing.T) {
	var bash tn.Tool
	for _, b := range tn.CreateBuiltinTools() {
		if b.Name == "bash" {
			bash = b
		}
	}
	r, err := bash.Execute(map[string]any{"command": "exit 3"}, nil)
	if err != nil || !r.IsError {
		t.Fatalf("bash: %+v %v", r, err)
	}
	if code, ok := r.Metadata["exitCode"].(int); !ok || code != 3 {
		t.Errorf("exitCode: %#v", r.Metadata["exitCode"])
	}
	tk := toolkit(t, fn("meta", func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		return tn.ToolResult{Output: "ok", Metadata: map[string]any{"n": 7, "f": 1.5, "nested": map[string]any{"list": []any{1, 2.5}}}}, nil
	}))
	got, err := tk.Execute(context.Background(), "meta", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": 7, "f": 1.5, "nested": map[string]any{"list": []any{1, 2.5}}}
	if !reflect.DeepEqual(got.Metadata, want) {
		t.Errorf("metadata: %#v", got.Metadata)
	}
}

// MCP serve runs a Go tool too: its call belongs to no run.
func TestServeGoTool(t *testing.T) {
	tk := toolkit(t, text("echo", "served"))
	h, err := tk.Serve("", tn.ServeOptions{MCP: &tn.MCPServeConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	req, _ := http.NewRequest("POST", h.Endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(out), "served") {
		t.Errorf("tools/call: %d %s", resp.StatusCode, out)
	}
}
