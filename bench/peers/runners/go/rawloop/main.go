// Baseline: the agent loop written by hand in Go on net/http (keep-alive, encoding/json, the
// turn's tools run on goroutines). Not a framework: the least a Go loop costs, which is what
// the Go binding's overhead is held against (at most half of this loop's).
//
// stream reads the server-sent events and joins the deltas; concurrent-N needs nothing more
// (the Transport keeps an idle connection per request in flight); suspend has a tool that
// returns a "pending" marker, answered inline (a callback, then the tool re-runs) or durably
// (the loop returns the transcript and the pending call, which a resume re-runs).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"

	"benchpeers/harness"
)

type fn struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function fn     `json:"function"`
}

type message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type reply struct {
	Choices []struct {
		Message message `json:"message"`
		Delta   struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function fn     `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
}

// errPending is what approve returns until it is re-run with an answer.
var errPending = errors.New("pending")

// halt is what a durable run stops with: its transcript and the suspended call.
type halt struct {
	messages []message
	call     toolCall
}

func tool(name, desc string, schema map[string]any) map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{"name": name, "description": desc, "parameters": schema}}
}

func text(s string) *string { return &s }

// foldSSE is the assistant message an OpenAI event stream spells out.
func foldSSE(body []byte) (message, error) {
	msg := message{Role: "assistant"}
	var content strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") || line == "data: [DONE]" {
			continue
		}
		var ev reply
		if err := json.Unmarshal([]byte(line[6:]), &ev); err != nil {
			return msg, err
		}
		if len(ev.Choices) == 0 {
			continue
		}
		d := ev.Choices[0].Delta
		content.WriteString(d.Content)
		for _, tc := range d.ToolCalls {
			for len(msg.ToolCalls) <= tc.Index {
				msg.ToolCalls = append(msg.ToolCalls, toolCall{Type: "function"})
			}
			c := &msg.ToolCalls[tc.Index]
			if tc.ID != "" {
				c.ID = tc.ID
			}
			c.Function.Name += tc.Function.Name
			c.Function.Arguments += tc.Function.Arguments
		}
	}
	if content.Len() > 0 {
		msg.Content = text(content.String())
	}
	return msg, sc.Err()
}

func build(c *harness.Ctx) (func() (string, error), error) {
	sp := c.Spec
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: max(sp.Concurrency, runtime.NumCPU())}}
	tools := []any{tool("get_weather", harness.WeatherDesc, harness.WeatherSchema), tool("add", harness.AddDesc, harness.AddSchema)}
	if sp.Suspend {
		tools = []any{tool("approve", harness.ApproveDesc, harness.ApproveSchema)}
	}
	run := func(name string, args map[string]any, answer *string) (string, error) {
		c.Count()
		switch name {
		case "get_weather":
			city, _ := args["city"].(string)
			return harness.Weather(city), nil
		case "add":
			a, _ := args["a"].(float64)
			b, _ := args["b"].(float64)
			return harness.Add(a, b), nil
		case "approve":
			if answer == nil {
				return "", errPending
			}
			action, _ := args["action"].(string)
			return "approved: " + action, nil
		}
		return "", fmt.Errorf("unknown tool %s", name)
	}
	call := func(tc toolCall, answer *string) (string, error) {
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
			return "", err
		}
		return run(tc.Function.Name, args, answer)
	}
	model := func(messages []message) (message, error) {
		body := map[string]any{"model": harness.Model, "messages": messages, "tools": tools, "tool_choice": "auto"}
		if sp.Stream {
			body["stream"] = true
		}
		data, err := json.Marshal(body)
		if err != nil {
			return message{}, err
		}
		req, err := http.NewRequest("POST", c.V1URL+"/chat/completions", bytes.NewReader(data))
		if err != nil {
			return message{}, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+harness.APIKey)
		resp, err := client.Do(req)
		if err != nil {
			return message{}, err
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return message{}, err
		}
		if resp.StatusCode != 200 {
			return message{}, fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, raw)
		}
		if sp.Stream {
			return foldSSE(raw)
		}
		var r reply
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Choices) == 0 {
			return message{}, fmt.Errorf("bad reply %.300s: %v", raw, err)
		}
		return r.Choices[0].Message, nil
	}
	result := func(tc toolCall, out string) message {
		return message{Role: "tool", ToolCallID: tc.ID, Content: text(out)}
	}
	// loop runs turns until the final text or, without waitFor, a pending call (*halt).
	var loop func(messages []message, waitFor func(toolCall) string) (string, *halt, error)
	loop = func(messages []message, waitFor func(toolCall) string) (string, *halt, error) {
		for t := 0; t < harness.MaxTurns; t++ {
			msg, err := model(messages)
			if err != nil {
				return "", nil, err
			}
			messages = append(messages, msg)
			if len(msg.ToolCalls) == 0 {
				if msg.Content == nil {
					return "", nil, nil
				}
				return *msg.Content, nil, nil
			}
			outs, errs := make([]string, len(msg.ToolCalls)), make([]error, len(msg.ToolCalls))
			var wg sync.WaitGroup
			for i, tc := range msg.ToolCalls {
				wg.Add(1)
				go func(i int, tc toolCall) { defer wg.Done(); outs[i], errs[i] = call(tc, nil) }(i, tc)
			}
			wg.Wait()
			for i, tc := range msg.ToolCalls {
				if errors.Is(errs[i], errPending) {
					if waitFor == nil {
						// One suspending call per turn in these scenarios: halt on it.
						return "", &halt{messages: messages, call: tc}, nil
					}
					answer := waitFor(tc)
					outs[i], errs[i] = call(tc, &answer)
				}
				if errs[i] != nil {
					return "", nil, errs[i]
				}
				messages = append(messages, result(tc, outs[i]))
			}
		}
		return "", nil, errors.New("max turns")
	}
	history := sp.HistoryMessages()
	opening := func() []message {
		msgs := make([]message, 0, len(history)+8)
		msgs = append(msgs, message{Role: "system", Content: text(harness.SystemPrompt)})
		for _, h := range history {
			m := h.(map[string]any)
			msgs = append(msgs, message{Role: m["role"].(string), Content: text(m["content"].(string))})
		}
		return append(msgs, message{Role: "user", Content: text(sp.Prompt())})
	}
	if sp.Suspend {
		return func() (string, error) {
			a, _, err := loop(opening(), func(toolCall) string { return "yes" })
			if err != nil {
				return "", err
			}
			_, h, err := loop(opening(), nil)
			if err != nil || h == nil {
				return "", fmt.Errorf("the durable run did not halt: %v", err)
			}
			answer := "yes"
			out, err := call(h.call, &answer)
			if err != nil {
				return "", err
			}
			b, _, err := loop(append(h.messages, result(h.call, out)), nil)
			return a + " | " + b, err
		}, nil
	}
	return func() (string, error) {
		t, _, err := loop(opening(), nil)
		return t, err
	}, nil
}

func main() {
	harness.Main(harness.Runner{Label: "go raw loop", Kind: "baseline", Version: runtime.Version, Build: build})
}
