package toolnexus

import (
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

func TestEveryStatusCodeHasItsKind(t *testing.T) {
	want := []ErrorKind{KindInvalidArgument, KindConfig, KindHTTP, KindNetwork, KindTimeout, KindCancelled,
		KindProtocol, KindAnswerMismatch, KindHost, KindInternal, KindReentrant}
	for i, k := range want {
		if got := kindOfCode(i + 1); got != k || codeOfKind(k) != i+1 {
			t.Errorf("code %d: %s, want %s", i+1, got, k)
		}
	}
	// The engine's own error JSON names the kind; it must agree with the code.
	e := decodeEngineError(8, `{"kind":"answer_mismatch","code":8,"message":"m"}`)
	if string(e.Kind) != "answer_mismatch" || e.Message != "m" {
		t.Fatalf("got %+v", e)
	}
}
