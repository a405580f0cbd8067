package toolnexus

// The MCP source's parts on their own, with the Go port's names: configs read
// (ParseMcpConfig), servers loaded (LoadMcp) or only listed (ListMcpTools), `${ENV}`
// headers, elicitation mapped both ways, and which tools MCP serve exposes. Each is the
// engine's; these functions convert.

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"log"
)

// mcpConfigArg converts a config as the port takes it (a file path, raw JSON, an McpConfig
// or a parsed map) to the C ABI's config string and is_path flag.
func mcpConfigArg(input any) (string, C.int32_t, error) {
	switch c := input.(type) {
	case string:
		return c, 1, nil
	case []byte:
		return string(c), 0, nil
	case json.RawMessage:
		return string(c), 0, nil
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return "", 0, bindingError(KindInvalidArgument, "cannot encode the MCP config: %v", err)
	}
	return string(raw), 0, nil
}

// ParseMcpConfig reads an MCP config (a file path, raw JSON bytes, an McpConfig, or a parsed
// map, its servers under mcpServers, servers or mcp, or bare) into its server entries, as
// written. An McpConfig is returned as it is.
func ParseMcpConfig(input any) (McpConfig, error) {
	if c, ok := input.(McpConfig); ok {
		return c, nil
	}
	if abiErr != nil {
		return nil, abiErr
	}
	config, isPath, err := mcpConfigArg(input)
	if err != nil {
		return nil, err
	}
	cconfig := cstring(config)
	defer freeC(cconfig)
	out, err := engineOut(func(out, errJSON **C.char) C.int32_t {
		return C.tn_mcp_config_servers(cconfig, isPath, out, errJSON)
	})
	if err != nil {
		return nil, err
	}
	var servers McpConfig
	if err := json.Unmarshal([]byte(out), &servers); err != nil {
		return nil, bindingError(KindInvalidArgument, "cannot read the MCP config's server entries: %v", err)
	}
	return servers, nil
}

// McpSource is the tools of a set of MCP servers and each server's status. Warnings (why a
// server failed, what was dropped) is an addition to the Go port, which only logs them.
type McpSource struct {
	Tools    []Tool
	Status   map[string]McpStatus
	Warnings []string

	tk *Toolkit // the engine toolkit of just these servers
}

// Close stops the servers; their tools answer with an error from then on.
func (m *McpSource) Close() {
	if m != nil && m.tk != nil {
		m.tk.Close()
	}
}

// LoadMcp connects to every enabled server of input (as ParseMcpConfig reads it) and lists
// its tools, in an engine toolkit of just these servers. A server that fails is isolated:
// its status is failed. waitFor, given, answers the servers' elicitations (as
// Options.WaitFor).
func LoadMcp(input any, waitFor ...func(Request) (Answer, error)) (*McpSource, error) {
	return LoadMcpWithContext(context.Background(), input, waitFor...)
}

// LoadMcpWithContext is LoadMcp with a context: ctx ending while the servers start aborts
// the whole load with a KindCancelled error that unwraps to ctx.Err().
func LoadMcpWithContext(ctx context.Context, input any, waitFor ...func(Request) (Answer, error)) (*McpSource, error) {
	var wf func(Request) (Answer, error)
	if len(waitFor) > 0 {
		wf = waitFor[0]
	}
	tk, err := CreateToolkit(ctx, Options{McpConfig: input, Builtins: false, WaitFor: wf})
	if err != nil {
		return nil, err
	}
	return &McpSource{Tools: tk.Tools(), Status: tk.McpStatus(), Warnings: tk.Warnings(), tk: tk}, nil
}

// ToolInfo is one listed tool of a server (its own, unprefixed name).
type ToolInfo struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	InputSchema JSONSchema `json:"inputSchema"`
}

// McpInventory is the result of ListMcpTools. Warnings is an addition to the Go port.
type McpInventory struct {
	// Tools maps a server's name to its listed tools, unfiltered by ServerConfig.Tools.
	Tools    map[string][]ToolInfo `json:"tools"`
	Status   map[string]McpStatus  `json:"status"`
	Warnings []string              `json:"warnings,omitempty"`
}

// ListMcpTools connects to every enabled server of input (as ParseMcpConfig reads it), lists
// its tools and disconnects. A server that fails is isolated: its status is failed. ctx
// ending aborts the listing with a KindCancelled error that unwraps to ctx.Err().
func ListMcpTools(ctx context.Context, input any) (*McpInventory, error) {
	if abiErr != nil {
		return nil, abiErr
	}
	if ctx == nil {
		ctx = context.Background()
	}
	config, isPath, err := mcpConfigArg(input)
	if err != nil {
		return nil, err
	}
	cconfig := cstring(config)
	defer freeC(cconfig)
	var out string
	err = withCancel(ctx, func(cancel *C.tn_cancel) error {
		var e error
		out, e = engineOut(func(o, errJSON **C.char) C.int32_t {
			return C.tn_mcp_list_tools(cconfig, isPath, cancel, o, errJSON)
		})
		return e
	})
	if err != nil {
		return nil, err
	}
	var listed struct {
		Tools map[string][]struct {
			Name        string     `json:"name"`
			Description string     `json:"description"`
			InputSchema JSONSchema `json:"input_schema"`
		} `json:"tools"`
		Status   map[string]McpStatus `json:"status"`
		Warnings json.RawMessage      `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		return nil, bindingError(KindInternal, "unreadable MCP inventory: %v", err)
	}
	logWarnings(string(listed.Warnings))
	inv := &McpInventory{Tools: map[string][]ToolInfo{}, Status: listed.Status, Warnings: warningMessages(string(listed.Warnings))}
	if inv.Status == nil {
		inv.Status = map[string]McpStatus{}
	}
	for server, tools := range listed.Tools {
		infos := make([]ToolInfo, len(tools))
		for i, t := range tools {
			infos[i] = ToolInfo{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		}
		inv.Tools[server] = infos
	}
	return inv, nil
}

// ExpandEnvHeaders returns a new map with `${NAME}` in each value expanded from the
// environment, as the engine expands headers; nil stays nil. Values are never logged.
func ExpandEnvHeaders(headers map[string]string) map[string]string {
	if headers == nil {
		return nil
	}
	var expanded map[string]string
	if err := engineJSON(headers, &expanded, func(in *C.char, out, errJSON **C.char) C.int32_t {
		return C.tn_expand_env_headers(in, out, errJSON)
	}); err != nil {
		log.Printf("[toolnexus] expand env headers: %v", err)
		return nil
	}
	return expanded
}

// engineJSON hands in (as JSON) to an engine call that writes one JSON string, decoded into
// out.
func engineJSON(in any, out any, call func(in *C.char, out, errJSON **C.char) C.int32_t) error {
	if abiErr != nil {
		return abiErr
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return bindingError(KindInvalidArgument, "cannot encode the argument: %v", err)
	}
	cin := cstring(string(raw))
	defer freeC(cin)
	text, err := engineOut(func(o, errJSON **C.char) C.int32_t { return call(cin, o, errJSON) })
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return bindingError(KindInternal, "unreadable engine answer: %v", err)
	}
	return nil
}

// ElicitationToRequest returns the Request an MCP server's elicitation becomes: params are
// the `elicitation/create` params (mcp-go's mcp.ElicitationParams, a map, or anything that
// encodes to them as JSON). Params the engine refuses are logged and give the zero Request.
func ElicitationToRequest(params any) Request {
	var req Request
	if err := engineJSON(params, &req, func(in *C.char, out, errJSON **C.char) C.int32_t {
		return C.tn_elicitation_request(in, out, errJSON)
	}); err != nil {
		log.Printf("[toolnexus] elicitation request: %v", err)
		return Request{}
	}
	return req
}

// ElicitationResponseAction is what an MCP server is told the user did with its
// elicitation (the engine's words).
type ElicitationResponseAction string

// The elicitation actions the engine answers with.
const (
	ElicitationResponseActionAccept  ElicitationResponseAction = "accept"
	ElicitationResponseActionDecline ElicitationResponseAction = "decline"
	ElicitationResponseActionCancel  ElicitationResponseAction = "cancel"
)

// ElicitationResult is what an MCP server is told for an Answer: the action and, on
// accept, the content. (The Go port returns mcp-go's type of the same shape; this package
// has no Go dependencies.)
type ElicitationResult struct {
	Action  ElicitationResponseAction `json:"action"`
	Content any                       `json:"content,omitempty"`
}

// AnswerToElicitResult returns what an MCP server is told for the host's answer to its
// elicitation. An answer the engine refuses is logged and gives nil.
func AnswerToElicitResult(answer Answer) *ElicitationResult {
	res := &ElicitationResult{}
	if err := engineJSON(answer, res, func(in *C.char, out, errJSON **C.char) C.int32_t {
		return C.tn_elicit_result(in, out, errJSON)
	}); err != nil {
		log.Printf("[toolnexus] elicit result: %v", err)
		return nil
	}
	return res
}

// ExposedMcpTools returns the tools MCP serve exposes of tools with cfg, in the engine's
// order: cfg.Tools names them (an unknown name is ignored, and warned about); without it,
// the engine's default set, which leaves out relay tools and the command and file
// built-ins. Tools the engine refuses are logged and expose nothing.
func ExposedMcpTools(tools []Tool, cfg *MCPServeConfig) []Tool {
	tk, err := buildToolkit(tools)
	if err != nil {
		log.Printf("[toolnexus] MCP serve tools: %v", err)
		return nil
	}
	defer tk.Close()
	var names any
	if cfg != nil && cfg.Tools != nil {
		names = cfg.Tools
	}
	var exposed struct {
		Tools    []string        `json:"tools"`
		Warnings json.RawMessage `json:"warnings"`
	}
	err = withToolkit(tk, func(native *C.tn_toolkit) error {
		return engineJSON(names, &exposed, func(in *C.char, out, errJSON **C.char) C.int32_t {
			return C.tn_mcp_exposed_tools(native, in, out, errJSON)
		})
	})
	if err != nil {
		log.Printf("[toolnexus] MCP serve tools: %v", err)
		return nil
	}
	logWarnings(string(exposed.Warnings))
	out := make([]Tool, 0, len(exposed.Tools))
	for _, name := range exposed.Tools {
		if t, ok := tk.Get(name); ok {
			out = append(out, t)
		}
	}
	return out
}
