package toolnexus

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Options configures CreateToolkit. ExtraTools and Builtins: false are what the engine supports
// today; every other field is rejected with an error when set, never ignored.
type Options struct {
	// ExtraTools are your own tools. A later tool whose sanitized name repeats an earlier one
	// is dropped (the engine warns on stderr once, at CreateToolkit).
	ExtraTools []Tool
	// Builtins toggles the built-in tools. The engine has none yet, so it must be false. Nil is
	// rejected too: the Go port reads nil as on.
	Builtins any
	// McpConfig (MCP servers) is not supported yet: set, it is rejected.
	McpConfig any
	// SkillsDir (skill roots) is not supported yet: set, it is rejected.
	SkillsDir []string
	// SkillsFilter is not supported yet: set, it is rejected.
	SkillsFilter map[string]bool
	// SkillSampleLimit is not supported yet: non-zero, it is rejected.
	SkillSampleLimit int
	// DisableTools is not supported yet: set, it is rejected.
	DisableTools []string
	// DisableSkills is not supported yet: set, it is rejected.
	DisableSkills []string
	// Skills (skills as data) is not supported yet: set, it is rejected.
	Skills []SkillDef
	// SkillProvider (skills as data) is not supported yet: set, it is rejected, never called.
	SkillProvider func(context.Context) ([]SkillDef, error)
	// Agents (remote A2A agents) is not supported yet: set, it is rejected.
	Agents []Agent
	// WaitFor (MCP elicitation) is not supported yet: set, it is rejected. The client's
	// ClientOptions.WaitFor resolves tool suspensions.
	WaitFor func(Request) (Answer, error)
}

// Toolkit is the set of tools a run may call. It holds no engine resources between runs:
// each run (and each Execute) declares the tools to the engine with that run's context.
type Toolkit struct {
	tools  []Tool          // kept tools, in order
	byName map[string]Tool // by sanitized name, as the engine calls them
	decl   string          // tools_json of the kept tools
	// declarations per style ("openai", "anthropic", "gemini"), as the engine renders them
	styles map[string]string

	mu     sync.Mutex
	closed bool
}

// unsupportedToolkitOption names the first option set that the engine cannot honour yet.
func unsupportedToolkitOption(o Options) string {
	switch {
	case o.McpConfig != nil:
		return "McpConfig (MCP servers)"
	case len(o.SkillsDir) > 0:
		return "SkillsDir (skills)"
	case o.SkillsFilter != nil:
		return "SkillsFilter (skills)"
	case o.SkillSampleLimit != 0:
		return "SkillSampleLimit (skills)"
	case len(o.DisableTools) > 0:
		return "DisableTools"
	case len(o.DisableSkills) > 0:
		return "DisableSkills (skills)"
	case len(o.Skills) > 0:
		return "Skills (skills)"
	case o.SkillProvider != nil:
		return "SkillProvider (skills)"
	case len(o.Agents) > 0:
		return "Agents (A2A agents)"
	case o.WaitFor != nil:
		return "WaitFor (MCP elicitation; set ClientOptions.WaitFor to resolve tool suspensions)"
	}
	// Nil is the port's default, built-ins on: code written for the port that leaves it unset
	// expects tools the engine does not have, so it must say false rather than silently get none.
	if o.Builtins == nil {
		return "Builtins (nil means on in the Go port, and the engine has no built-in tools yet; set Builtins: false)"
	}
	if b, ok := o.Builtins.(bool); !ok || b {
		return "Builtins (the engine has no built-in tools yet; set Builtins: false)"
	}
	return ""
}

// CreateToolkit builds a Toolkit from opts. ctx is unused until MCP servers are supported.
func CreateToolkit(ctx context.Context, opts Options) (*Toolkit, error) {
	_ = ctx
	if abiErr != nil {
		return nil, abiErr
	}
	if name := unsupportedToolkitOption(opts); name != "" {
		return nil, bindingError(KindInvalidArgument, "toolkit option %s is not supported by this binding yet", name)
	}
	return buildToolkit(opts.ExtraTools)
}

// buildToolkit makes a toolkit of tools, checked by the engine.
func buildToolkit(tools []Tool) (*Toolkit, error) {
	all := make([]wireTool, len(tools))
	for i, t := range tools {
		relay := t.Source == SourceRelay
		if !relay && t.Execute == nil {
			return nil, bindingError(KindInvalidArgument, "tool %q has no Execute (only a relay tool may omit it)", t.Name)
		}
		source := t.Source
		if relay {
			source = ""
		}
		all[i] = wireTool{Name: t.Name, Description: t.Description, Source: source, Relay: relay}
		if t.InputSchema != nil { // an empty schema is sent as written
			all[i].InputSchema = t.InputSchema
		}
	}
	tk := &Toolkit{byName: map[string]Tool{}, styles: map[string]string{}}
	kept := []wireTool{}
	for i, t := range tools {
		name := Sanitize(t.Name)
		if _, dup := tk.byName[name]; dup {
			continue
		}
		tk.byName[name] = t
		tk.tools = append(tk.tools, t)
		kept = append(kept, all[i])
	}
	if err := tk.validate(all, kept); err != nil {
		return nil, err
	}
	return tk, nil
}

// validate has the engine build the whole list once (its checks and its duplicate warning),
// keeps its declarations, and checks that it kept the same tools this package routes to.
func (tk *Toolkit) validate(all, kept []wireTool) error {
	full, err := json.Marshal(all)
	if err != nil {
		return bindingError(KindInvalidArgument, "cannot encode the tools: %v", err)
	}
	h, err := newToolkitHandle(string(full), 0)
	if err != nil {
		return err
	}
	defer C.tn_toolkit_free(h)
	var warnings, warnErr *C.char
	if check(C.tn_toolkit_warnings(h, &warnings, &warnErr), warnErr) == nil {
		logWarnings(takeString(warnings))
	}
	for _, style := range []string{"openai", "anthropic", "gemini"} {
		s := cstring(style)
		var out, errJSON *C.char
		err := check(C.tn_toolkit_declarations(h, s, &out, &errJSON), errJSON)
		freeC(s)
		if err != nil {
			return err
		}
		tk.styles[style] = takeString(out)
	}
	var decls []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(tk.styles["anthropic"]), &decls); err != nil || len(decls) != len(kept) {
		return bindingError(KindInternal, "the engine kept other tools than the binding (%d vs %d)", len(decls), len(kept))
	}
	for i, d := range decls {
		if d.Name != Sanitize(kept[i].Name) {
			return bindingError(KindInternal, "the engine named tool %d %q, the binding %q", i, d.Name, Sanitize(kept[i].Name))
		}
	}
	decl, err := json.Marshal(kept)
	if err != nil {
		return bindingError(KindInvalidArgument, "cannot encode the tools: %v", err)
	}
	tk.decl = string(decl)
	return nil
}

// newToolkitHandle makes an engine toolkit whose tools call back into the scope behind handle
// (0: none; such a toolkit is only inspected). On failure the engine has released the handle.
func newToolkitHandle(toolsJSON string, handle uintptr) (*C.tn_toolkit, error) {
	tj := cstring(toolsJSON)
	defer freeC(tj)
	var out *C.tn_toolkit
	var errJSON *C.char
	if err := check(C.tn_go_toolkit_new(tj, C.uintptr_t(handle), &out, &errJSON), errJSON); err != nil {
		return nil, err
	}
	return out, nil
}

// Close releases the toolkit; a run or Execute on it afterwards is an error. Closing twice is
// harmless.
func (tk *Toolkit) Close() {
	if tk == nil {
		return
	}
	tk.mu.Lock()
	tk.closed = true
	tk.mu.Unlock()
}

// forRun returns what a run needs: the tools by name and their declarations.
func (tk *Toolkit) forRun() (map[string]Tool, string, error) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if tk.closed {
		return nil, "", bindingError(KindInvalidArgument, "the toolkit is closed")
	}
	return tk.byName, tk.decl, nil
}

// Tools returns the tools, in order (a later duplicate name dropped). A nil Toolkit has none.
func (tk *Toolkit) Tools() []Tool {
	if tk == nil {
		return nil
	}
	return append([]Tool(nil), tk.tools...)
}

// Get returns the tool called name (as declared, or as the engine sanitized it), if any.
func (tk *Toolkit) Get(name string) (Tool, bool) {
	if tk == nil {
		return Tool{}, false
	}
	t, ok := tk.byName[Sanitize(name)]
	return t, ok
}

// declarations decodes the engine's declarations for style.
func (tk *Toolkit) declarations(style string) []any {
	out := []any{}
	if tk == nil {
		return out
	}
	_ = json.Unmarshal([]byte(tk.styles[style]), &out)
	return out
}

// ToOpenAI returns the tools as OpenAI function declarations, as the engine sends them.
func (tk *Toolkit) ToOpenAI() []any { return tk.declarations("openai") }

// ToAnthropic returns the tools as Anthropic tool declarations, as the engine sends them.
func (tk *Toolkit) ToAnthropic() []any { return tk.declarations("anthropic") }

// ToGemini returns the tools as Gemini function declarations.
func (tk *Toolkit) ToGemini() []any { return tk.declarations("gemini") }

// Execute runs one tool by name through the engine, outside any run: an unknown tool (or a
// relay tool) is an error result naming it; a tool's error or panic is an error result. ctx
// reaches the tool as ToolContext.Ctx (its deadline as ToolContext.Timeout); the engine cannot
// abort the call itself, so a tool that ignores ctx is waited for.
func (tk *Toolkit) Execute(ctx context.Context, name string, args map[string]any) (ToolResult, error) {
	if tk == nil {
		return ToolResult{Output: "Unknown tool: " + name, IsError: true}, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	tools, decl, err := tk.forRun()
	if err != nil {
		return ToolResult{}, err
	}
	if args == nil {
		args = map[string]any{}
	}
	call := map[string]any{"name": name, "args": args}
	if deadline, ok := ctx.Deadline(); ok { // what the tool is told it has left
		call["timeout_ms"] = max(time.Until(deadline).Milliseconds(), 0)
	}
	callJSON, err := json.Marshal(call)
	if err != nil {
		return ToolResult{}, bindingError(KindInvalidArgument, "cannot encode the arguments: %v", err)
	}
	sc := &runScope{ctx: ctx, tools: tools}
	h, err := newToolkitHandle(decl, newScopeHandle(sc))
	if err != nil {
		return ToolResult{}, err
	}
	defer C.tn_toolkit_free(h)
	ccall := cstring(string(callJSON))
	defer freeC(ccall)
	var out, errJSON *C.char
	if err := check(C.tn_toolkit_execute_call(h, ccall, &out, &errJSON), errJSON); err != nil {
		return ToolResult{}, err
	}
	var r wireToolResult
	if err := json.Unmarshal([]byte(takeString(out)), &r); err != nil {
		return ToolResult{}, bindingError(KindInternal, "unreadable tool result: %v", err)
	}
	return r.toResult(), nil
}

// String describes the toolkit for logs.
func (tk *Toolkit) String() string {
	if tk == nil {
		return "toolnexus.Toolkit(nil)"
	}
	return fmt.Sprintf("toolnexus.Toolkit(%d tools)", len(tk.tools))
}
