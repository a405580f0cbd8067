package toolnexus

import (
	"context"
	"strings"
	"testing"
)

func TestABIMismatchAsksForARebuild(t *testing.T) {
	if abiErr != nil {
		t.Fatalf("the linked library does not match the header: %v", abiErr)
	}
	err := checkABI(2, 1)
	if err == nil || !strings.Contains(err.Error(), "rebuild libtoolnexus") || !strings.Contains(err.Error(), "ABI 2") {
		t.Fatalf("got %v", err)
	}
	if checkABI(1, 1) != nil {
		t.Fatal("equal versions must pass")
	}
}

// The package's kinds are the engine's table (tn_error_kinds), name for name and in code
// order, and the statuses its callbacks complete with are those kinds' codes.
func TestErrorKindsAreTheEnginesTable(t *testing.T) {
	want := []ErrorKind{KindInvalidArgument, KindConfig, KindHTTP, KindNetwork, KindTimeout, KindCancelled,
		KindProtocol, KindAnswerMismatch, KindHost, KindInternal, KindReentrant, KindConflict, KindStore,
		KindContentPart, KindUnsupportedPart}
	if len(errorKinds) != len(want) {
		t.Fatalf("the engine has %d kinds, this package %d: %+v", len(errorKinds), len(want), errorKinds)
	}
	for i, k := range errorKinds {
		if ErrorKind(k.Name) != want[i] || kindOfCode(k.Code) != want[i] || codeOfKind(want[i]) != k.Code {
			t.Errorf("engine kind %+v, this package's %s (code %d)", k, want[i], codeOfKind(want[i]))
		}
	}
	if codeOfKind(KindNetwork) != statusNetwork || codeOfKind(KindHost) != statusHost || statusOK != 0 {
		t.Errorf("callback statuses %d %d %d", statusOK, statusNetwork, statusHost)
	}
	if kindOfCode(999) != KindInternal || codeOfKind("nonsense") != 0 {
		t.Error("an unknown code is internal; an unknown kind has no code")
	}
	// The engine's own error JSON names the kind; it must agree with the code.
	e := decodeEngineError(8, `{"kind":"answer_mismatch","code":8,"message":"m"}`)
	if string(e.Kind) != "answer_mismatch" || e.Message != "m" {
		t.Fatalf("got %+v", e)
	}
}

// Every hook this package dispatches is one the engine names, with the bit hookMask sets.
func TestHookBitsAreTheEnginesTable(t *testing.T) {
	for name, h := range map[string]*Hooks{
		"before_llm":  {BeforeLLM: func(context.Context, BeforeLLMEvent) (*LLMOverride, error) { return nil, nil }},
		"after_llm":   {AfterLLM: func(context.Context, AfterLLMEvent) error { return nil }},
		"before_tool": {BeforeTool: func(context.Context, BeforeToolEvent) (*ToolOverride, error) { return nil, nil }},
		"after_tool":  {AfterTool: func(context.Context, AfterToolEvent) (*ToolOverride, error) { return nil, nil }},
	} {
		bit, ok := hookBits[name]
		if !ok || hookMask(h) != bit {
			t.Errorf("%s: engine bit %v (%v), hookMask %v", name, bit, ok, hookMask(h))
		}
	}
	if len(hookBits) != 4 {
		t.Errorf("the engine has hooks this package does not dispatch: %v", hookBits)
	}
}
