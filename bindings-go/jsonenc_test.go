package toolnexus

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// stdJSON is encoding/json's encoding of v without HTML escaping: what appendJSON promises.
func stdJSON(t testing.TB, v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

type jsonencMessage struct {
	Role string `json:"role"`
	N    int    `json:"n,omitempty"`
}

func TestAppendJSONEncodesAsEncodingJSON(t *testing.T) {
	values := []any{
		nil, "", "plain", true, false, 3, 2.5, -0.0, 1e21, []any(nil), []any{}, map[string]any(nil), map[string]any{},
		"quote \" backslash \\ newline \n return \r tab \t bell \x07 nul \x00 del \x7f",
		"<b>&amp;</b> \u2028 é 日本 🎉", "bad \xff\xfe utf-8 \xe2\x82",
		[]any{map[string]any{"role": "user", "content": "hi", "z": nil, "a": []any{1, "x", false}}},
		map[string]any{"k9": 1, "k8": 2, "k7": 3, "k6": 4, "k5": 5, "k4": 6, "k3": 7, "k2": 8, "k1": 9, "k0": 10},
		map[string]any{"typed": jsonencMessage{Role: "tool", N: 2}, "raw": json.RawMessage(`{"a":1}`),
			"strs": []string{"a"}, "nested": map[string]any{"\x01key": map[string]any{}}},
	}
	for _, v := range values {
		got, err := appendJSON(nil, v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		if want := stdJSON(t, v); string(got) != want {
			t.Errorf("%#v:\n got %s\nwant %s", v, got, want)
		}
	}
}

func TestAppendJSONRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for _, v := range []any{[]any{"ok", func() {}}, map[string]any{"c": make(chan int)}} {
		if _, err := appendJSON(nil, v); err == nil {
			t.Errorf("%#v: encoded, want an error", v)
		}
	}
}

func TestRunInputEncodesItsHistoryInPlace(t *testing.T) {
	prompt := "go"
	history := []any{map[string]any{"role": "user", "content": "a"}}
	for _, in := range []wireRunInput{
		{Prompt: &prompt, History: history, ElideHistory: true},
		{History: history},
		{Prompt: &prompt},
		{},
	} {
		got, err := in.encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[len(got)-1] != 0 {
			t.Fatalf("%s is not NUL-terminated", got)
		}
		var back, want map[string]any
		if err := json.Unmarshal(got[:len(got)-1], &back); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		std, _ := json.Marshal(in)
		_ = json.Unmarshal(std, &want)
		if stdJSON(t, back) != stdJSON(t, want) {
			t.Errorf("got %s, want %s", got, std)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "\u2028<&>", "\x00\x1f", "日本\xe6\x97"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := map[string]any{s: []any{s, map[string]any{"content": s}}}
		got, err := appendJSON(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if want := stdJSON(t, v); string(got) != want {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

func TestAllPlainAgreesWithPlainByte(t *testing.T) {
	// Every byte value at every position, among plain neighbours and among other ones.
	for _, fill := range []byte{'a', 0x1f, 0x7f, 0x80, '"'} {
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[pos] = byte(c)
				want := true
				for _, x := range w {
					want = want && plainByte[x]
				}
				if got := allPlain(binary.LittleEndian.Uint64(w[:])); got != want {
					t.Fatalf("%q: allPlain %v, want %v", w, got, want)
				}
			}
		}
	}
}

// BenchmarkEncodeHistory is a 200-message transcript (as the history-200 bench passes it)
// through appendJSON, against encoding/json.
func BenchmarkEncodeHistory(b *testing.B) {
	filler := strings.Repeat("lorem ipsum dolor sit amet, ", 7)
	history := make([]any, 200)
	for i := range history {
		history[i] = map[string]any{"role": []string{"user", "assistant"}[i%2], "content": fmt.Sprintf("Earlier message %d: %s", i, filler)}
	}
	prompt := "go"
	in := wireRunInput{Prompt: &prompt, History: history, ElideHistory: true}
	b.Run("appendJSON", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c, err := cinput(in)
			if err != nil {
				b.Fatal(err)
			}
			freeC(c)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			raw, err := json.Marshal(in)
			if err != nil {
				b.Fatal(err)
			}
			freeC(cstring(string(raw)))
		}
	})
}
