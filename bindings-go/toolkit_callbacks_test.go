package toolnexus_test

// A toolkit's own callbacks (tn_toolkit_create_with): Options.SkillProvider, computed at build
// and composed with the other skill sources, its failure isolated as a warning; and
// Options.WaitFor (and LoadMcp's waitFor), answering an MCP server's elicitations.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func TestSkillProviderComposesWithDataSkills(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(testCtx(t), ctxKey{}, "build")
	calls := 0
	tk, err := tn.CreateToolkit(ctx, tn.Options{
		Skills: []tn.SkillDef{{Name: "data-skill", Description: "From data.", Content: "data body"}},
		SkillProvider: func(c context.Context) ([]tn.SkillDef, error) {
			calls++
			if c.Value(ctxKey{}) != "build" {
				t.Error("the provider did not get CreateToolkit's ctx")
			}
			return []tn.SkillDef{{Name: "provided", Description: "From the provider.", Content: "provided body",
				Resources: []string{"notes.md"}}}, nil
		},
		Builtins: false,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Close()
	if calls != 1 {
		t.Errorf("the provider ran %d times, want once", calls)
	}
	prompt := tk.SkillsPrompt()
	if !strings.Contains(prompt, "data-skill") || !strings.Contains(prompt, "provided") {
		t.Fatalf("want both skills in the catalog, got:\n%s", prompt)
	}
	if r := execute(t, tk, "skill", map[string]any{"name": "provided"}); r.IsError || !strings.Contains(r.Output, "provided body") {
		t.Fatalf("the provided skill: %+v", r)
	}
	if len(tk.Warnings()) != 0 {
		t.Errorf("unexpected warnings: %v", tk.Warnings())
	}
}

func TestSkillProviderFailureIsAWarning(t *testing.T) {
	for name, provider := range map[string]func(context.Context) ([]tn.SkillDef, error){
		"error": func(context.Context) ([]tn.SkillDef, error) { return nil, errors.New("boom") },
		"panic": func(context.Context) ([]tn.SkillDef, error) { panic("boom") },
	} {
		t.Run(name, func(t *testing.T) {
			tk := create(t, tn.Options{
				Skills:        []tn.SkillDef{{Name: "data-skill", Description: "From data.", Content: "data body"}},
				SkillProvider: provider,
				Builtins:      false,
			})
			if !strings.Contains(tk.SkillsPrompt(), "data-skill") {
				t.Fatalf("the provider's failure lost the data skill:\n%s", tk.SkillsPrompt())
			}
			if w := strings.Join(tk.Warnings(), "\n"); !strings.Contains(w, "boom") {
				t.Fatalf("want a warning naming the provider's error, got %q", w)
			}
		})
	}
}

// asker answers a form elicitation with a name and declines a URL one, recording what it saw.
type asker struct {
	mu   sync.Mutex
	seen []tn.Request
}

func (a *asker) waitFor(r tn.Request) (tn.Answer, error) {
	a.mu.Lock()
	a.seen = append(a.seen, r)
	a.mu.Unlock()
	if r.Kind == "input" {
		return tn.Answer{ID: r.ID, Ok: true, Data: map[string]any{"name": "Ada"}}, nil
	}
	return tn.Answer{ID: r.ID, Reason: "declined"}, nil
}

func (a *asker) requests() []tn.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]tn.Request(nil), a.seen...)
}

func TestMcpElicitationThroughWaitFor(t *testing.T) {
	const form, url = "everything_trigger-elicitation-request", "everything_trigger-url-elicitation"
	without := create(t, tn.Options{McpConfig: everythingConfig(t), Builtins: false})
	if _, ok := without.Get(form); ok {
		t.Fatalf("without WaitFor the server must not offer %s", form)
	}
	a := &asker{}
	tk := create(t, tn.Options{McpConfig: everythingConfig(t), Builtins: false, WaitFor: a.waitFor})
	if r := execute(t, tk, form, map[string]any{}); r.IsError || !strings.Contains(r.Output, "Ada") {
		t.Fatalf("the form elicitation: %+v", r)
	}
	if r := execute(t, tk, url, map[string]any{"url": "https://auth.example/x"}); !strings.Contains(strings.ToLower(r.Output), "decline") {
		t.Fatalf("the URL elicitation: %+v", r)
	}
	seen := a.requests()
	if len(seen) != 2 || seen[0].Kind != "input" || seen[1].Kind != "authorization" || seen[1].URL != "https://auth.example/x" {
		t.Fatalf("the requests: %+v", seen)
	}
	if _, ok := seen[0].Data["schema"].(map[string]any); !ok {
		t.Errorf("the form request has no schema: %+v", seen[0])
	}
	// In a run, the toolkit's WaitFor answers too (the client has none).
	mock := newMock(t)
	mock.script(callReply(`c1:`+form+`:{}`), textReply("done"))
	res, err := openaiClient(t, mock, nil).Run(testCtx(t), "ask me", tk)
	if err != nil || res.Status != "done" || len(res.ToolCalls) != 1 || !strings.Contains(res.ToolCalls[0].Output, "Ada") {
		t.Fatalf("in a run: %+v, %v", res, err)
	}
	if n := len(a.requests()); n != 3 {
		t.Errorf("WaitFor saw %d requests, want 3", n)
	}
}

func TestLoadMcpWaitFor(t *testing.T) {
	a := &asker{}
	src, err := tn.LoadMcpWithContext(testCtx(t), everythingConfig(t), a.waitFor)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var form *tn.Tool
	for i := range src.Tools {
		if src.Tools[i].Name == "everything_trigger-elicitation-request" {
			form = &src.Tools[i]
		}
	}
	if form == nil {
		t.Fatalf("LoadMcp with a waitFor: the server offers no elicitation tool (%v)", names(src.Tools))
	}
	r, err := form.Execute(map[string]any{}, &tn.ToolContext{Ctx: testCtx(t)})
	if err != nil || r.IsError || !strings.Contains(r.Output, "Ada") {
		t.Fatalf("the form elicitation: %+v, %v", r, err)
	}
}
