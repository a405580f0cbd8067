package toolnexus

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
)

// Options configures CreateToolkit. ExtraTools and Builtins: false are what the engine supports
// today; every other field is rejected with an error when set, never ignored.
type Options struct {
	// ExtraTools are your own tools. A later tool whose sanitized name repeats an earlier one
	// is dropped (the engine's warning goes to the standard logger, at CreateToolkit).
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

// Toolkit is the set of tools a run may call. Every run (and Execute) uses its one engine
// toolkit, made at CreateToolkit (again at Register) and freed by Close, or once the Toolkit
// is unreachable.
type Toolkit struct {
	mu     sync.RWMutex    // held for reading while a run starts on native
	native *C.tn_toolkit   // nil once closed
	tools  []Tool          // the tools the engine kept, in order
	byName map[string]Tool // kept tools by the name the engine declares them under
	// declarations per style ("openai", "anthropic", "gemini"), as the engine renders them
	styles map[string]string
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

// buildToolkit makes a toolkit of tools: the engine keeps the first of tools sharing a name
// (warning about each other one), checks them and declares them.
func buildToolkit(tools []Tool) (*Toolkit, error) {
	native, kept, err := newEngineToolkit(tools)
	if err != nil {
		return nil, err
	}
	tk := &Toolkit{native: native}
	if err := tk.describe(kept); err != nil {
		C.tn_toolkit_free(native)
		return nil, err
	}
	runtime.SetFinalizer(tk, (*Toolkit).free)
	return tk, nil
}

// newEngineToolkit declares tools to the engine, each with its index as host_ref, and returns
// the engine toolkit with the tools it kept, in order.
func newEngineToolkit(tools []Tool) (*C.tn_toolkit, []Tool, error) {
	decl := make([]wireTool, len(tools))
	for i, t := range tools {
		relay := t.Source == SourceRelay
		if !relay && t.Execute == nil {
			return nil, nil, bindingError(KindInvalidArgument, "tool %q has no Execute (only a relay tool may omit it)", t.Name)
		}
		source := t.Source
		if relay {
			source = ""
		}
		decl[i] = wireTool{Name: t.Name, Description: t.Description, Source: source, Relay: relay, HostRef: uint64(i)}
		if t.InputSchema != nil { // an empty schema is sent as written
			decl[i].InputSchema = t.InputSchema
		}
	}
	raw, err := json.Marshal(decl)
	if err != nil {
		return nil, nil, bindingError(KindInvalidArgument, "cannot encode the tools: %v", err)
	}
	tj := cstring(string(raw))
	defer freeC(tj)
	set := cgo.NewHandle(&toolSet{tools: append([]Tool(nil), tools...)})
	var native *C.tn_toolkit
	var errJSON *C.char
	// The engine releases the handle (goRelease) once the toolkit is freed and no run uses it,
	// and also when this call fails.
	if err := check(C.tn_go_toolkit_new(tj, C.uintptr_t(set), &native, &errJSON), errJSON); err != nil {
		return nil, nil, err
	}
	var warnings, refs *C.char
	if check(C.tn_toolkit_warnings(native, &warnings, &errJSON), errJSON) == nil {
		logWarnings(takeString(warnings))
	}
	var keptRefs []int
	err = check(C.tn_toolkit_host_refs(native, &refs, &errJSON), errJSON)
	if err == nil {
		err = json.Unmarshal([]byte(takeString(refs)), &keptRefs)
	}
	if err != nil {
		C.tn_toolkit_free(native)
		return nil, nil, bindingError(KindInternal, "cannot read the tools the engine kept: %v", err)
	}
	kept := make([]Tool, len(keptRefs))
	for i, ref := range keptRefs {
		if ref < 0 || ref >= len(tools) {
			C.tn_toolkit_free(native)
			return nil, nil, bindingError(KindInternal, "the engine kept a tool this package never declared (%d)", ref)
		}
		kept[i] = tools[ref]
	}
	return native, kept, nil
}

// describe keeps the engine's declarations of the kept tools, and indexes them by the names
// the engine declares.
func (tk *Toolkit) describe(kept []Tool) error {
	tk.tools, tk.styles, tk.byName = kept, map[string]string{}, map[string]Tool{}
	for _, style := range []string{"openai", "anthropic", "gemini"} {
		s := cstring(style)
		var out, errJSON *C.char
		err := check(C.tn_toolkit_declarations(tk.native, s, &out, &errJSON), errJSON)
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
		return bindingError(KindInternal, "the engine declared %d tools for %d kept ones (%v)", len(decls), len(kept), err)
	}
	for i, d := range decls {
		tk.byName[d.Name] = kept[i]
	}
	return nil
}

// Close releases the toolkit; a run or Execute on it afterwards is an error. Runs in progress
// finish with it. Closing twice is harmless.
func (tk *Toolkit) Close() {
	if tk == nil {
		return
	}
	tk.free()
}

// free releases the engine toolkit (Close, or the finalizer).
func (tk *Toolkit) free() {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	C.tn_toolkit_free(tk.native)
	tk.native = nil
}

// Tools returns the tools, in order (a later duplicate name dropped). A nil Toolkit has none.
func (tk *Toolkit) Tools() []Tool {
	if tk == nil {
		return nil
	}
	tk.mu.RLock()
	defer tk.mu.RUnlock()
	return append([]Tool(nil), tk.tools...)
}

// Get returns the tool called name (as declared, or as the engine sanitized it), if any.
func (tk *Toolkit) Get(name string) (Tool, bool) {
	if tk == nil {
		return Tool{}, false
	}
	declared := Sanitize(name)
	tk.mu.RLock()
	defer tk.mu.RUnlock()
	t, ok := tk.byName[declared]
	return t, ok
}

// declarations decodes the engine's declarations for style.
func (tk *Toolkit) declarations(style string) []any {
	out := []any{}
	if tk == nil {
		return out
	}
	tk.mu.RLock()
	defer tk.mu.RUnlock()
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
// reaches the tool as ToolContext.Ctx (its deadline as ToolContext.Timeout); as in the Go
// port, the call is not abandoned when ctx ends: a tool that ignores ctx is waited for.
func (tk *Toolkit) Execute(ctx context.Context, name string, args map[string]any) (ToolResult, error) {
	if abiErr != nil {
		return ToolResult{}, abiErr
	}
	if ctx == nil {
		ctx = context.Background()
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
	ccall := cstring(string(callJSON))
	defer freeC(ccall)
	if tk == nil {
		tk = noTools()
	}
	// Background: nothing fires the engine's cancellation, so the tool is waited for.
	out, err := awaitEngine(context.Background(), newScope(ctx, nil), func(cancel *C.tn_cancel, h C.uintptr_t) error {
		return withToolkit(tk, func(native *C.tn_toolkit) error {
			var errJSON *C.char
			return check(C.tn_go_execute_async(native, ccall, cancel, h, &errJSON), errJSON)
		})
	})
	if err != nil {
		return ToolResult{}, err
	}
	if out.status != statusOK {
		return ToolResult{}, decodeEngineError(out.status, out.json)
	}
	var r wireToolResult
	if err := json.Unmarshal([]byte(out.json), &r); err != nil {
		return ToolResult{}, bindingError(KindInternal, "unreadable tool result: %v", err)
	}
	return r.toResult(), nil
}

// noTools is the empty toolkit a nil *Toolkit executes against, so that even then the
// engine, not this package, says what an unknown tool is.
var noTools = sync.OnceValue(func() *Toolkit {
	tk, err := buildToolkit(nil)
	if err != nil {
		return &Toolkit{}
	}
	return tk
})

// String describes the toolkit for logs.
func (tk *Toolkit) String() string {
	if tk == nil {
		return "toolnexus.Toolkit(nil)"
	}
	return fmt.Sprintf("toolnexus.Toolkit(%d tools)", len(tk.Tools()))
}
