package toolnexus

// The tool sources the engine runs itself (built-in tools, skills, HTTP tools, MCP servers)
// and MCP serve, with the Go port's names. Every rule (defaults, validation, precedence,
// prompt texts) is the engine's: these functions only convert to and from its C ABI.

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"log"
	"net/url"
	"runtime"
	"sync"
)

// McpStatus is the connection state of a configured MCP server.
type McpStatus string

// The MCP server states the engine reports.
const (
	StatusConnected McpStatus = "connected"
	StatusDisabled  McpStatus = "disabled"
	StatusFailed    McpStatus = "failed"
)

// ServerConfig is one MCP server entry (the port's shape): a local (stdio) server runs
// Command, a remote one is reached at URL. The engine infers the transport and applies the
// defaults.
type ServerConfig struct {
	Type        string            `json:"type,omitempty"` // "local" | "remote" | "" (inferred)
	Command     []string          `json:"command,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
	Env         map[string]string `json:"env,omitempty"` // alias for Environment
	Cwd         string            `json:"cwd,omitempty"`
	URL         string            `json:"url,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Enabled     *bool             `json:"enabled,omitempty"`
	Disabled    *bool             `json:"disabled,omitempty"`
	Timeout     int               `json:"timeout,omitempty"` // milliseconds; 0: the engine's default
	// Tools is a per-server tool allowlist (or drop-list) keyed on the server's tool names.
	Tools map[string]bool `json:"tools,omitempty"`
}

// McpConfig maps a server name to its config (Options.McpConfig).
type McpConfig map[string]ServerConfig

// SkillDef is a skill supplied as data rather than found on disk (Options.Skills).
type SkillDef struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"` // empty: not in the catalog, as the Go port
	Content     string   `json:"content"`               // the instructions
	Resources   []string `json:"resources,omitempty"`   // logical resource names; nil: instruction-only
	Base        string   `json:"base,omitempty"`        // logical base; empty: the engine's skill://<name>/
}

// BuiltinsConfig is the object form of Options.Builtins: Enabled and Disabled switch the whole
// source (Disabled: true wins, then Enabled: false), Tools drops single built-ins (a name
// mapped to false). Root, BaseDir, ConfineToBaseDir and Shell are the engine's additions:
// the folder the file tools are confined to, what a relative path means, whether paths
// leaving BaseDir are refused, and the argv prefix bash runs commands with.
type BuiltinsConfig struct {
	Enabled          *bool           `json:"enabled,omitempty"`
	Disabled         *bool           `json:"disabled,omitempty"`
	Tools            map[string]bool `json:"tools,omitempty"`
	Root             string          `json:"root,omitempty"`
	BaseDir          string          `json:"base_dir,omitempty"`
	ConfineToBaseDir bool            `json:"confine_to_base_dir,omitempty"`
	Shell            []string        `json:"shell,omitempty"`
}

// builtinToolkit is the engine toolkit of the built-ins cfg selects, and nothing else.
func builtinToolkit(cfg any) (*Toolkit, error) {
	spec := map[string]any{}
	if cfg != nil {
		spec["builtins"] = cfg
	}
	return makeToolkit(context.Background(), spec, nil, toolkitHooks{})
}

// SelectBuiltins returns the built-in tools cfg selects (nil when the source is off), as
// Options.Builtins reads it. Each tool's Execute runs the engine's built-in. A cfg the engine
// refuses is logged and selects nothing (the port's signature has no error).
func SelectBuiltins(cfg any) []Tool {
	tk, err := builtinToolkit(cfg)
	if err != nil {
		log.Printf("[toolnexus] builtins: %v", err)
		return nil
	}
	if tools := tk.Tools(); len(tools) > 0 {
		return tools
	}
	return nil
}

// CreateBuiltinTools returns every built-in tool, in the engine's order.
func CreateBuiltinTools() []Tool { return SelectBuiltins(true) }

// BuiltinsEnabled reports whether cfg turns the built-in source on (as Options.Builtins reads
// it, its per-tool map aside).
func BuiltinsEnabled(cfg any) bool {
	raw, err := json.Marshal(cfg)
	if err != nil {
		log.Printf("[toolnexus] builtins: %v", err)
		return false
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	if o, ok := v.(map[string]any); ok {
		delete(o, "tools") // the question is the source's switch, not which tools it keeps
	}
	return len(SelectBuiltins(v)) > 0
}

// HTTPToolOptions configures an HTTP-backed tool (HTTPTool). Zero fields are left to the
// engine's defaults.
type HTTPToolOptions struct {
	Name        string
	Description string
	Method      string // "GET" | "POST" | ...
	// URL may contain {placeholders} filled (and consumed) from args.
	URL string
	// Headers are static; ${ENV_VAR} in values expands from the environment. Never logged.
	Headers map[string]string
	// Query arg names are sent as querystring instead of in the body.
	Query []string
	// Body encoding for non-GET requests: "json" (default) | "form" | "raw".
	Body string
	// InputSchema describes the args the model supplies. Nil: an empty object.
	InputSchema JSONSchema
	// Timeout in milliseconds; 0: the engine's default.
	Timeout int
	// ResultMode: "text" (default) | "json" | "status+text".
	ResultMode string
}

// wire is the engine's HTTP tool spec (the value of a {"http": ...} tool entry).
func (o *HTTPToolOptions) wire() map[string]any {
	w := map[string]any{"name": o.Name, "description": o.Description, "method": o.Method, "url": o.URL}
	if o.Headers != nil {
		w["headers"] = o.Headers
	}
	if o.Query != nil {
		w["query"] = o.Query
	}
	if o.Body != "" {
		w["body"] = o.Body
	}
	if o.InputSchema != nil {
		w["input_schema"] = o.InputSchema
	}
	if o.Timeout != 0 {
		w["timeout_ms"] = o.Timeout
	}
	if o.ResultMode != "" {
		w["result_mode"] = o.ResultMode
	}
	return w
}

// HTTPTool wraps an HTTP endpoint as a Tool (source "http") the engine runs: in a toolkit
// (Options.ExtraTools, Register) it is declared to the engine as an HTTP tool, and the engine
// checks opts when the toolkit is made. Its Execute, called directly, runs it through an
// engine toolkit of that one tool (made on first use; a spec the engine refuses is that
// call's error).
func HTTPTool(opts HTTPToolOptions) Tool {
	spec := opts
	decl := Tool{Name: opts.Name, Description: opts.Description, InputSchema: opts.InputSchema, Source: SourceHTTP, http: &spec}
	alone := sync.OnceValues(func() (*Toolkit, error) { return buildToolkit([]Tool{decl}) })
	t := decl
	t.Execute = func(args map[string]any, tctx *ToolContext) (ToolResult, error) {
		tk, err := alone()
		if err != nil {
			return ToolResult{}, err
		}
		tools := tk.Tools()
		if len(tools) != 1 {
			return ToolResult{}, bindingError(KindInternal, "the engine kept %d tools of one HTTP tool", len(tools))
		}
		return tools[0].Execute(args, tctx)
	}
	return t
}

// MCPServeConfig is the MCP serve profile (ServeOptions.MCP): the toolkit's tools exposed as
// an MCP server over streamable HTTP. Token and AllowedOrigins are the engine's additions.
type MCPServeConfig struct {
	// Name is the advertised server name (empty: the engine's default).
	Name string `json:"name,omitempty"`
	// Version is the advertised server version (empty: the engine's default).
	Version string `json:"version,omitempty"`
	// Tools is the names of the tools to expose; nil: the engine's default set, which leaves
	// out the command and file built-ins and relay tools (name them here to expose them).
	Tools []string `json:"tools,omitempty"`
	// Token, when set, is the bearer token every request must carry (required by the engine
	// to serve off loopback).
	Token string `json:"token,omitempty"`
	// AllowedOrigins are the browser origins allowed besides the engine's default.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
}

// OnCallEvent is the port's per-call event of an inbound MCP tools/call.
type OnCallEvent struct {
	Name    string
	Source  ToolSource
	Ms      int64
	IsError bool
}

// OnCall is the port's per-call callback of Serve. The C ABI has no such callback yet: set,
// Serve refuses it.
type OnCall func(ev OnCallEvent)

// ServeOptions configures Serve. This binding serves the MCP profile only (the C ABI has no
// A2A serving yet), so MCP must be set; Client is what A2A would run, and unused here.
type ServeOptions struct {
	Client *Client
	// MCP is the MCP serve profile.
	MCP *MCPServeConfig
	// OnCall (per-call events) is not in the C ABI yet: set, it is rejected.
	OnCall OnCall
}

// ServeHandle is a running server, returned by Serve.
type ServeHandle struct {
	// URL is the server's base URL (http://HOST:PORT), as in the Go port.
	URL string
	// Endpoint is the MCP endpoint, as the engine serves it (http://HOST:PORT/mcp). An
	// addition to the Go port.
	Endpoint string
	// Tools are the names of the tools it exposes.
	Tools []string
	// Warnings are what serving warned about (a Tools name the toolkit lacks).
	Warnings []string

	mu     sync.Mutex
	native *C.tn_mcp_server
}

// Serve exposes the toolkit as an MCP server on addr ("host:port"; empty: the engine's
// default, a free loopback port). The engine refuses an address off loopback without a token.
func (tk *Toolkit) Serve(addr string, opts ServeOptions) (*ServeHandle, error) {
	if abiErr != nil {
		return nil, abiErr
	}
	if opts.OnCall != nil {
		return nil, bindingError(KindInvalidArgument, "serve option OnCall is not supported by this binding yet")
	}
	// Without MCP, the engine serves the mcpServer block of the toolkit's config (and refuses
	// a toolkit without one: serving A2A alone is not supported yet).
	var copts *C.char
	if opts.MCP != nil {
		raw, err := json.Marshal(opts.MCP)
		if err != nil {
			return nil, bindingError(KindInvalidArgument, "cannot encode the serve options: %v", err)
		}
		copts = cstring(string(raw))
		defer freeC(copts)
	}
	var caddr *C.char
	if addr != "" {
		caddr = cstring(addr)
		defer freeC(caddr)
	}
	h := &ServeHandle{}
	err := withToolkit(tk, func(native *C.tn_toolkit) error {
		var errJSON *C.char
		return check(C.tn_mcp_serve(native, copts, caddr, &h.native, &errJSON), errJSON)
	})
	if err != nil {
		return nil, err
	}
	runtime.SetFinalizer(h, (*ServeHandle).Stop)
	var out, errJSON *C.char
	var info struct {
		URL      string   `json:"url"`
		Tools    []string `json:"tools"`
		Warnings []struct {
			Message string `json:"message"`
		} `json:"warnings"`
	}
	if err := check(C.tn_mcp_server_info(h.native, &out, &errJSON), errJSON); err != nil {
		_ = h.Stop()
		return nil, err
	}
	if err := json.Unmarshal([]byte(takeString(out)), &info); err != nil {
		_ = h.Stop()
		return nil, bindingError(KindInternal, "unreadable MCP server info: %v", err)
	}
	endpoint, err := url.Parse(info.URL)
	if err != nil {
		_ = h.Stop()
		return nil, bindingError(KindInternal, "unreadable MCP server URL %q: %v", info.URL, err)
	}
	h.URL = (&url.URL{Scheme: endpoint.Scheme, Host: endpoint.Host}).String()
	h.Endpoint, h.Tools = info.URL, info.Tools
	for _, w := range info.Warnings {
		h.Warnings = append(h.Warnings, w.Message)
	}
	return h, nil
}

// Stop shuts the server down (idempotent).
func (h *ServeHandle) Stop() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	C.tn_mcp_server_free(h.native)
	h.native = nil
	return nil
}

// Close is an alias for Stop.
func (h *ServeHandle) Close() error { return h.Stop() }
