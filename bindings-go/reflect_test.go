package toolnexus_test

import (
	"context"
	"strconv"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func TestNativeToolReflectReadsTheSchemaFromTheStruct(t *testing.T) {
	type inner struct {
		Tags []string `json:"tags"`
	}
	type args struct {
		A     float64 `json:"a"`
		Note  string  `json:"note,omitempty"`
		Skip  string  `json:"-"`
		Inner inner   `json:"inner,omitempty"`
		hide  int
	}
	tool := tn.NativeToolReflect("add", "adds", func(_ context.Context, in args) (string, error) {
		return strconv.FormatFloat(in.A*2, 'f', -1, 64) + in.Note, nil
	})
	props := tool.InputSchema["properties"].(map[string]any)
	if len(props) != 3 || props["a"].(map[string]any)["type"] != "number" || props["Skip"] != nil {
		t.Fatalf("properties: %v", props)
	}
	tags := props["inner"].(tn.JSONSchema)["properties"].(map[string]any)["tags"].(map[string]any)
	if tags["type"] != "array" || tags["items"].(map[string]any)["type"] != "string" {
		t.Fatalf("nested: %v", tags)
	}
	if req := tool.InputSchema["required"].([]string); len(req) != 1 || req[0] != "a" {
		t.Fatalf("required: %v", req)
	}
	res, err := tool.Execute(map[string]any{"a": 2.5, "note": "!"}, nil)
	if err != nil || res.IsError || res.Output != "5!" {
		t.Fatalf("execute: %+v %v", res, err)
	}
	res, _ = tool.Execute(map[string]any{"a": "two"}, nil)
	if !res.IsError {
		t.Fatalf("arguments that do not decode are an error result: %+v", res)
	}
}
