package toolnexus

import (
	"context"
	"log"
)

// NativeTool wraps a plain function as a Tool (source "native"), as the Go port does: the
// returned string is the output, a returned error becomes an error result with its text.
// ctx is the run's context (cancelled when the run ends). A nil inputSchema declares an
// object with no properties.
func NativeTool(
	name, description string,
	inputSchema JSONSchema,
	fn func(ctx context.Context, args map[string]any) (string, error),
) Tool {
	return Tool{
		Name:        name,
		Description: description,
		InputSchema: inputSchema,
		Source:      SourceNative,
		Execute: func(args map[string]any, tctx *ToolContext) (ToolResult, error) {
			ctx := context.Background()
			if tctx != nil && tctx.Ctx != nil {
				ctx = tctx.Ctx
			}
			if args == nil {
				args = map[string]any{}
			}
			out, err := fn(ctx, args)
			if err != nil {
				return ToolResult{Output: err.Error(), IsError: true}, nil
			}
			return ToolResult{Output: out}, nil
		},
	}
}

// Register adds tools to the toolkit and returns it, for chaining (the Go port's signature).
// As at creation a later duplicate name is dropped; a tool the engine refuses (a relay tool
// named like a built-in, a tool without Execute) is not added either, and the reason is
// logged, since the port's signature has no error to return it through. Each added tool
// makes the toolkit's engine toolkit anew, from its sources too (its MCP servers are started
// again, and the previous ones stop once no run uses them); runs in progress finish with the
// one they started with.
func (tk *Toolkit) Register(tools ...Tool) *Toolkit {
	if tk == nil || tk.tkState == nil {
		return nil
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	for _, t := range tools {
		if tk.native == nil {
			log.Printf("[toolnexus] tool %q not registered: the toolkit is closed", t.Name)
			continue
		}
		if err := tk.build(context.Background(), append(append([]Tool(nil), tk.host...), t)); err != nil {
			log.Printf("[toolnexus] tool %q not registered: %v", t.Name, err)
		}
	}
	return tk
}
