package toolnexus

// #include "bridge.h"
import "C"

import (
	"encoding/json"
	"fmt"
)

// hookOutcome runs the Go hook the engine named, with its event decoded, and encodes what the
// hook returned as the engine's override JSON ("null" for none).
func (s *runScope) hookOutcome(hook, eventJSON string) outcome {
	var ev struct {
		Messages []any          `json:"messages"`
		Tools    []any          `json:"tools"`
		Model    string         `json:"model"`
		Turn     int            `json:"turn"`
		Response map[string]any `json:"response"`
		Name     string         `json:"name"`
		Args     map[string]any `json:"args"`
		ID       string         `json:"id"`
		Result   wireToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(eventJSON), &ev); err != nil {
		return reply(statusHost, "toolnexus: unreadable hook event: "+err.Error())
	}
	h := s.opts.Hooks
	var override any
	err := guard("hook "+hook, func() error {
		switch hookBits[hook] { // the engine's names for its TN_HOOK_* bits
		case C.TN_HOOK_BEFORE_LLM:
			ov, err := h.BeforeLLM(s.ctx, BeforeLLMEvent{Messages: ev.Messages, Tools: ev.Tools, Model: ev.Model, Turn: ev.Turn})
			if ov != nil {
				override = llmOverrideJSON(ov)
			}
			return err
		case C.TN_HOOK_AFTER_LLM:
			return h.AfterLLM(s.ctx, AfterLLMEvent{Response: ev.Response, Model: ev.Model, Turn: ev.Turn})
		case C.TN_HOOK_BEFORE_TOOL:
			ov, err := h.BeforeTool(s.ctx, BeforeToolEvent{Name: ev.Name, Args: ev.Args, ID: ev.ID, Turn: ev.Turn})
			override = toolOverrideJSON(ov)
			return err
		case C.TN_HOOK_AFTER_TOOL:
			e := AfterToolEvent{Name: ev.Name, Args: ev.Args, Result: ev.Result.toResult(), ID: ev.ID, Turn: ev.Turn}
			ov, err := h.AfterTool(s.ctx, e)
			override = toolOverrideJSON(ov)
			return err
		default:
			return fmt.Errorf("toolnexus: the engine called an unknown hook %q", hook)
		}
	})
	if err != nil {
		return failed(err)
	}
	b, err := json.Marshal(override)
	if err != nil {
		return failed(fmt.Errorf("hook %s returned an override that is not JSON: %w", hook, err))
	}
	return reply(statusOK, string(b))
}

func llmOverrideJSON(ov *LLMOverride) map[string]any {
	out := map[string]any{}
	if ov.Messages != nil {
		out["messages"] = ov.Messages
	}
	if ov.Tools != nil {
		out["tools"] = ov.Tools
	}
	if ov.Model != "" {
		out["model"] = ov.Model
	}
	return out
}

// toolOverrideJSON is the override's non-nil fields, nil for none. The engine decides what
// each hook may do with them (before a tool a result wins over args; after one only the
// result counts), as for every binding.
func toolOverrideJSON(ov *ToolOverride) any {
	if ov == nil {
		return nil
	}
	out := map[string]any{}
	if ov.Result != nil {
		out["result"] = toWireResult(*ov.Result)
	}
	if ov.Args != nil {
		out["args"] = ov.Args
	}
	return out
}
