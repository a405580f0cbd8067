package toolnexus

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
)

// Options configures CreateToolkit, with the Go port's fields. The engine builds the toolkit:
// the MCP servers' tools, then the skill tool, then the built-in tools, then ExtraTools (one
// named like a built-in replaces it); DisableTools drops tools by their final name. A zero
// field is left unset, so the engine's default applies. Agents is not in the engine's C ABI
// yet: set, it is rejected, never ignored.
type Options struct {
	// McpConfig is the MCP servers: the path of a JSON config file (string), raw JSON
	// ([]byte or json.RawMessage), an McpConfig, or a parsed map. Nil or empty: no servers.
	McpConfig any
	// SkillsDir is one or more skill roots. Empty: no skills from disk.
	SkillsDir []string
	// Skills are skills supplied as data, bypassing the filesystem.
	Skills []SkillDef
	// SkillProvider computes data skills, called once while the toolkit is built (with the
	// ctx of CreateToolkit; again when Register rebuilds it). Its error is isolated: a warning
	// (Warnings) says so and the other skill sources still load.
	SkillProvider func(context.Context) ([]SkillDef, error)
	// SkillsFilter is a skill allowlist (or drop-list) keyed on name.
	SkillsFilter map[string]bool
	// SkillSampleLimit caps the skill tool's sibling-file sample (0: the engine's default,
	// -1: no sample).
	SkillSampleLimit int
	// DisableTools drops tools by their final name across every source.
	DisableTools []string
	// DisableSkills drops skills by name from the skill catalog.
	DisableSkills []string
	// ExtraTools are your own tools (NativeTool, HTTPTool, RelayTool, or a Tool literal).
	ExtraTools []Tool
	// Builtins toggles the built-in tools: nil (the engine's default, on), a bool, a
	// BuiltinsConfig (or pointer to one), or a parsed map. When nil, a top-level "builtins"
	// key of a parsed McpConfig is read by the engine.
	Builtins any
	// Agents (remote A2A agents) is not supported yet: set, it is rejected.
	Agents []Agent
	// WaitFor answers the MCP servers' elicitations (questions to the user mid-call): a form
	// is a Request of kind "input", a URL one of kind "authorization"; the zero Answer
	// is no answer. Nil: servers are told this client cannot answer them. The client's
	// ClientOptions.WaitFor resolves tool suspensions.
	WaitFor func(Request) (Answer, error)
}

// tkState is a Toolkit's engine toolkit. The engine-made tools (MCP, skill, built-in, HTTP)
// hold it, not the Toolkit, so a Tool taken from Tools() keeps working while it is reachable,
// and the Toolkit's reachability alone decides when the engine toolkit is freed.
type tkState struct {
	mu     sync.RWMutex  // held for reading while a call starts on native
	native *C.tn_toolkit // nil once closed
}

// with calls start with the engine toolkit, holding it so that Close or Register cannot free
// it before the engine took its own reference.
func (st *tkState) with(start func(*C.tn_toolkit) error) error {
	if st == nil {
		return bindingError(KindInvalidArgument, "the toolkit is closed")
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.native == nil {
		return bindingError(KindInvalidArgument, "the toolkit is closed")
	}
	return start(st.native)
}

// free releases the engine toolkit (its MCP servers stop once no run uses it).
func (st *tkState) free() {
	st.mu.Lock()
	defer st.mu.Unlock()
	C.tn_toolkit_free(st.native)
	st.native = nil
}

// Toolkit is the set of tools a run may call. Every run (and Execute) uses its one engine
// toolkit, made at CreateToolkit (again at Register) and freed by Close, or once the Toolkit
// and every tool taken from it are unreachable.
type Toolkit struct {
	*tkState
	spec     map[string]any  // the engine's toolkit options; nil: host tools only (tn_toolkit_new)
	hooks    toolkitHooks    // the toolkit's own callbacks (with a spec only)
	host     []Tool          // the host's tools given to the engine, in order
	tools    []Tool          // the tools the engine kept, in order
	byName   map[string]Tool // kept tools by the name the engine declares them under
	warnings []string        // what building warned about
	// declarations per style ("openai", "anthropic", "gemini"), as the engine renders them
	styles map[string]string
}

// unsupportedToolkitOption names the first option set that the C ABI cannot carry yet.
func unsupportedToolkitOption(o Options) string {
	if len(o.Agents) > 0 {
		return "Agents (A2A agents)"
	}
	return ""
}

// toolkitSpec converts opts (but ExtraTools) to the engine's toolkit options.
func toolkitSpec(o Options) (map[string]any, error) {
	spec := map[string]any{}
	switch c := o.McpConfig.(type) {
	case nil:
	case string:
		if c != "" {
			spec["mcp_config"] = c
		}
	case []byte:
		if len(c) > 0 {
			spec["mcp_config"] = json.RawMessage(c)
		}
	case json.RawMessage:
		if len(c) > 0 {
			spec["mcp_config"] = c
		}
	default:
		spec["mcp_config"] = c
	}
	if len(o.SkillsDir) > 0 {
		spec["skills_dir"] = o.SkillsDir
	}
	if len(o.Skills) > 0 {
		spec["skills"] = o.Skills
	}
	if o.SkillsFilter != nil {
		spec["skills_filter"] = o.SkillsFilter
	}
	if o.SkillSampleLimit != 0 {
		spec["skill_sample_limit"] = o.SkillSampleLimit
	}
	if len(o.DisableTools) > 0 {
		spec["disable_tools"] = o.DisableTools
	}
	if len(o.DisableSkills) > 0 {
		spec["disable_skills"] = o.DisableSkills
	}
	if o.Builtins != nil {
		spec["builtins"] = o.Builtins
	}
	if _, err := json.Marshal(spec); err != nil {
		return nil, bindingError(KindInvalidArgument, "cannot encode the toolkit options: %v", err)
	}
	return spec, nil
}

// CreateToolkit builds a Toolkit from opts: the engine starts the MCP servers (a server that
// fails is isolated: McpStatus says "failed" and a warning, logged and in Warnings, says why)
// and loads the skills. ctx ending while the servers start aborts that with a KindCancelled
// error. The servers run until Close.
func CreateToolkit(ctx context.Context, opts Options) (*Toolkit, error) {
	if abiErr != nil {
		return nil, abiErr
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if name := unsupportedToolkitOption(opts); name != "" {
		return nil, bindingError(KindInvalidArgument, "toolkit option %s is not supported by this binding yet", name)
	}
	spec, err := toolkitSpec(opts)
	if err != nil {
		return nil, err
	}
	return makeToolkit(ctx, spec, opts.ExtraTools, toolkitHooks{waitFor: opts.WaitFor, skillProvider: opts.SkillProvider})
}

// toolkitHooks are a toolkit's own callbacks, beside its tools: Options.WaitFor and
// Options.SkillProvider.
type toolkitHooks struct {
	waitFor       func(Request) (Answer, error)
	skillProvider func(context.Context) ([]SkillDef, error)
}

// buildToolkit makes a toolkit of host tools only (no built-ins): the engine keeps the first
// of tools sharing a name (warning about each other one), checks them and declares them.
func buildToolkit(tools []Tool) (*Toolkit, error) {
	return makeToolkit(context.Background(), nil, tools, toolkitHooks{})
}

// makeToolkit makes the engine toolkit of spec (nil: host tools only) and host, and the
// Toolkit over it.
func makeToolkit(ctx context.Context, spec map[string]any, host []Tool, hooks toolkitHooks) (*Toolkit, error) {
	st := &tkState{}
	tk := &Toolkit{tkState: st, spec: spec, hooks: hooks}
	if err := tk.build(ctx, host); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(st, (*tkState).free)
	return tk, nil
}

// build makes the engine toolkit of tk.spec with host and installs it (freeing the previous
// one) with what it declares; on failure tk is unchanged. The caller holds tk.mu, or owns tk.
func (tk *Toolkit) build(ctx context.Context, host []Tool) error {
	native, refs, warnings, err := newEngineToolkit(ctx, tk.spec, host, tk.hooks)
	if err != nil {
		return err
	}
	kept, styles, byName, err := declared(tk.tkState, native, refs, host)
	if err != nil {
		C.tn_toolkit_free(native)
		return err
	}
	old := tk.native
	tk.native, tk.host, tk.tools, tk.styles, tk.byName = native, append([]Tool(nil), host...), kept, styles, byName
	tk.warnings = warnings
	C.tn_toolkit_free(old)
	return nil
}

// hostEntry is how a host tool is declared to the engine: an HTTP tool as {"http": spec},
// any other with its index in the toolkit's tool set as host_ref.
func hostEntry(i int, t Tool) (any, error) {
	if t.http != nil {
		return map[string]any{"http": t.http.wire()}, nil
	}
	relay := t.Source == SourceRelay
	if !relay && t.Execute == nil {
		return nil, bindingError(KindInvalidArgument, "tool %q has no Execute (only a relay tool may omit it)", t.Name)
	}
	source := t.Source
	if relay {
		source = ""
	}
	w := wireTool{Name: t.Name, Description: t.Description, Source: source, Relay: relay, HostRef: uint64(i)}
	if t.InputSchema != nil { // an empty schema is sent as written
		w.InputSchema = t.InputSchema
	}
	return w, nil
}

// newEngineToolkit makes the engine toolkit: of host only (tn_toolkit_new) when spec is nil,
// else from spec's sources, host and hooks (tn_toolkit_create_with, aborted when ctx ends; the
// skill provider gets ctx). It returns
// the host_ref of every tool kept, in order (nil for an engine-made tool), and the warnings.
func newEngineToolkit(ctx context.Context, spec map[string]any, host []Tool, hooks toolkitHooks) (*C.tn_toolkit, []*int, []string, error) {
	decl := make([]any, len(host))
	for i, t := range host {
		e, err := hostEntry(i, t)
		if err != nil {
			return nil, nil, nil, err
		}
		decl[i] = e
	}
	var payload any = decl
	if spec != nil {
		full := make(map[string]any, len(spec)+1)
		for k, v := range spec {
			full[k] = v
		}
		full["tools"] = decl
		payload = full
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, nil, bindingError(KindInvalidArgument, "cannot encode the tools: %v", err)
	}
	tj := cstring(string(raw))
	defer freeC(tj)
	set := cgo.NewHandle(&toolSet{tools: append([]Tool(nil), host...), waitFor: hooks.waitFor, skillProvider: hooks.skillProvider, ctx: ctx})
	var wired C.uint32_t
	if hooks.waitFor != nil {
		wired |= C.TN_GO_WAIT_FOR
	}
	if hooks.skillProvider != nil {
		wired |= C.TN_GO_SKILL_PROVIDER
	}
	var native *C.tn_toolkit
	var errJSON *C.char
	// The engine releases the handle (goRelease) once the toolkit is freed and no run uses it,
	// and also when this call fails.
	if spec == nil {
		err = check(C.tn_go_toolkit_new(tj, C.uintptr_t(set), &native, &errJSON), errJSON)
	} else {
		err = withCancel(ctx, func(cancel *C.tn_cancel) error {
			return check(C.tn_go_toolkit_create(tj, C.uintptr_t(set), wired, cancel, &native, &errJSON), errJSON)
		})
	}
	if err != nil {
		return nil, nil, nil, err
	}
	var warningsJSON, refsJSON *C.char
	var warnings []string
	if check(C.tn_toolkit_warnings(native, &warningsJSON, &errJSON), errJSON) == nil {
		text := takeString(warningsJSON)
		logWarnings(text)
		warnings = warningMessages(text)
	}
	var refs []*int
	err = check(C.tn_toolkit_host_refs(native, &refsJSON, &errJSON), errJSON)
	if err == nil {
		err = json.Unmarshal([]byte(takeString(refsJSON)), &refs)
	}
	if err != nil {
		C.tn_toolkit_free(native)
		return nil, nil, nil, bindingError(KindInternal, "cannot read the tools the engine kept: %v", err)
	}
	return native, refs, warnings, nil
}

// withCancel runs a blocking engine call with a cancellation handle fired when ctx ends.
func withCancel(ctx context.Context, call func(*C.tn_cancel) error) error {
	if ctx.Done() == nil {
		return call(nil)
	}
	if err := ctx.Err(); err != nil {
		return &Error{Kind: KindCancelled, Code: codeOfKind(KindCancelled), Message: "cancelled before it started: " + err.Error(), cause: err}
	}
	var cancel *C.tn_cancel
	var errJSON *C.char
	if err := check(C.tn_cancel_new(&cancel, &errJSON), errJSON); err != nil {
		return err
	}
	defer C.tn_cancel_free(cancel)
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			var e *C.char
			C.tn_cancel_fire(cancel, &e)
			takeString(e)
		case <-stop:
		}
	}()
	err := call(cancel)
	close(stop)
	<-watched
	var te *Error
	if errors.As(err, &te) && te.Kind == KindCancelled && ctx.Err() != nil {
		te.Message += ": " + ctx.Err().Error()
		te.cause = ctx.Err()
	}
	return err
}

// warningMessages reads the messages of tn_toolkit_warnings' JSON.
func warningMessages(warningsJSON string) []string {
	var ws []struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal([]byte(warningsJSON), &ws)
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.Message)
	}
	return out
}

// declared reads the engine's declarations of native's kept tools (refs from
// newEngineToolkit) and returns them as Tools: the host's own by host_ref, an engine-made
// tool as a Tool whose Execute runs it on st, and the declarations by style and by name.
func declared(st *tkState, native *C.tn_toolkit, refs []*int, host []Tool) ([]Tool, map[string]string, map[string]Tool, error) {
	styles := map[string]string{}
	for _, style := range []string{"openai", "anthropic", "gemini"} {
		s := cstring(style)
		var out, errJSON *C.char
		err := check(C.tn_toolkit_declarations(native, s, &out, &errJSON), errJSON)
		freeC(s)
		if err != nil {
			return nil, nil, nil, err
		}
		styles[style] = takeString(out)
	}
	var toolsOut, errJSON *C.char
	if err := check(C.tn_toolkit_tools(native, &toolsOut, &errJSON), errJSON); err != nil {
		return nil, nil, nil, err
	}
	var decls []struct {
		Name        string     `json:"name"`
		Description string     `json:"description"`
		InputSchema JSONSchema `json:"input_schema"`
		Source      ToolSource `json:"source"`
	}
	if err := json.Unmarshal([]byte(takeString(toolsOut)), &decls); err != nil || len(decls) != len(refs) {
		return nil, nil, nil, bindingError(KindInternal, "the engine listed %d tools for %d kept ones (%v)", len(decls), len(refs), err)
	}
	kept := make([]Tool, len(refs))
	byName := make(map[string]Tool, len(refs))
	for i, d := range decls {
		switch ref := refs[i]; {
		case ref == nil:
			kept[i] = engineTool(st, d.Name, d.Description, d.InputSchema, d.Source)
		case *ref >= 0 && *ref < len(host):
			kept[i] = host[*ref]
		default:
			return nil, nil, nil, bindingError(KindInternal, "the engine kept a tool this package never declared (%d)", *ref)
		}
		byName[d.Name] = kept[i]
	}
	return kept, styles, byName, nil
}

// engineTool is a tool the engine runs itself (MCP, skill, built-in, HTTP), as a Tool whose
// Execute runs it on st through the engine, as Toolkit.Execute does.
func engineTool(st *tkState, name, description string, schema JSONSchema, source ToolSource) Tool {
	return Tool{
		Name:        name,
		Description: description,
		InputSchema: schema,
		Source:      source,
		Execute: func(args map[string]any, tctx *ToolContext) (ToolResult, error) {
			ctx := context.Background()
			call := map[string]any{"name": name}
			if tctx != nil {
				if tctx.Ctx != nil {
					ctx = tctx.Ctx
				}
				if tctx.Answer != nil {
					call["answer"] = tctx.Answer
				}
				if tctx.CallID != "" {
					call["call_id"] = tctx.CallID
				}
				if tctx.Timeout > 0 {
					call["timeout_ms"] = tctx.Timeout
				}
			}
			return executeOn(ctx, st, call, args)
		},
	}
}

// Warnings returns what building the toolkit warned about (a failed MCP server, a dropped
// duplicate tool or skill), in the engine's words; each was also logged. An addition to the
// Go port, whose toolkit only logs them.
func (tk *Toolkit) Warnings() []string {
	if tk == nil || tk.tkState == nil {
		return nil
	}
	tk.mu.RLock()
	defer tk.mu.RUnlock()
	return append([]string(nil), tk.warnings...)
}

// SkillsPrompt returns the skill catalog for the system prompt ("" without skills). A run
// already appends it to the client's system prompt.
func (tk *Toolkit) SkillsPrompt() string {
	var prompt string
	_ = withToolkit(tk, func(native *C.tn_toolkit) error {
		var out, errJSON *C.char
		if err := check(C.tn_toolkit_skills_prompt(native, &out, &errJSON), errJSON); err != nil {
			return err
		}
		prompt = takeString(out)
		return nil
	})
	return prompt
}

// McpStatus returns each configured MCP server's status (empty without servers).
func (tk *Toolkit) McpStatus() map[string]McpStatus {
	status := map[string]McpStatus{}
	_ = withToolkit(tk, func(native *C.tn_toolkit) error {
		if native == nil {
			return nil
		}
		var out, errJSON *C.char
		if err := check(C.tn_toolkit_mcp_status(native, &out, &errJSON), errJSON); err != nil {
			return err
		}
		return json.Unmarshal([]byte(takeString(out)), &status)
	})
	return status
}

// Close stops the toolkit's MCP servers and releases it; a run or Execute on it afterwards is
// an error. Runs in progress finish with it (their MCP tools answer with an error once the
// servers are stopped). Closing twice is harmless.
func (tk *Toolkit) Close() {
	if tk == nil || tk.tkState == nil {
		return
	}
	_ = tk.with(func(native *C.tn_toolkit) error {
		var errJSON *C.char
		return check(C.tn_toolkit_close(native, &errJSON), errJSON)
	})
	tk.free()
}

// Tools returns the tools, in order (a later duplicate name dropped). A nil Toolkit has none.
func (tk *Toolkit) Tools() []Tool {
	if tk == nil || tk.tkState == nil {
		return nil
	}
	tk.mu.RLock()
	defer tk.mu.RUnlock()
	return append([]Tool(nil), tk.tools...)
}

// Get returns the tool called name (as declared, or as the engine sanitized it), if any.
func (tk *Toolkit) Get(name string) (Tool, bool) {
	if tk == nil || tk.tkState == nil {
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
	if tk == nil || tk.tkState == nil {
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
	if ctx == nil {
		ctx = context.Background()
	}
	if tk == nil {
		tk = noTools()
	}
	call := map[string]any{"name": name}
	if deadline, ok := ctx.Deadline(); ok { // what the tool is told it has left
		call["timeout_ms"] = max(time.Until(deadline).Milliseconds(), 0)
	}
	return executeOn(ctx, tk.tkState, call, args)
}

// executeOn runs call (with args) on st's engine toolkit; ctx reaches a Go tool as its
// ToolContext.Ctx, and the call is waited for whatever ctx does.
func executeOn(ctx context.Context, st *tkState, call map[string]any, args map[string]any) (ToolResult, error) {
	if abiErr != nil {
		return ToolResult{}, abiErr
	}
	if args == nil {
		args = map[string]any{}
	}
	call["args"] = args
	callJSON, err := json.Marshal(call)
	if err != nil {
		return ToolResult{}, bindingError(KindInvalidArgument, "cannot encode the arguments: %v", err)
	}
	ccall := cstring(string(callJSON))
	defer freeC(ccall)
	// Background: nothing fires the engine's cancellation, so the tool is waited for.
	out, err := awaitEngine(context.Background(), newScope(ctx, nil), func(cancel *C.tn_cancel, h C.uintptr_t) error {
		return st.with(func(native *C.tn_toolkit) error {
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
		return &Toolkit{tkState: &tkState{}}
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
