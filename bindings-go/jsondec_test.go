package toolnexus

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsondecCorpus: valid and invalid documents, the seeds of FuzzJSONReader.
var jsondecCorpus = []string{
	`null`, `true`, `false`, `0`, `-0`, `12`, `-3.25`, `1e3`, `1E-2`, `2.5e+10`, `123456789012345678901234567890`,
	`9007199254740993`, `-9223372036854775808`, `9223372036854775808`, `1e999`, `-`, `01`, `1.`, `.5`, `1e`, `+1`,
	`""`, `"plain"`, `"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\u65e5\ud83c\udf89"`, `"lone \ud800 high"`,
	`"lone \udc00 low"`, `"pair broken \ud800\u0041"`, `"\ud800\ud800"`, `"bad \xff utf-8 \xe2\x82"`, "\"tab\tinside\"",
	`"\x"`, `"\u12"`, `"\u12G4"`, `"unterminated`, `"\`, `[]`, `[1,"a",null,true,{}]`, `[1,]`, `[,1]`, `[1 2]`,
	`{}`, `{"a":1,"b":[{"c":null}],"a":2}`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":}`, ` {"ws" : [ 1 , 2 ] } `,
	"\t\r\n[\n1\n]\n", `[1] 2`, "0\x00", "\x00", ``, `   `, `nul`, `tru`, `{"k":"v"`, `[[[[]]]]`, strings.Repeat("[", 10001) +
		strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"role":"assistant","content":"It is 21°C","tool_calls":[{"id":"c1","type":"function",` +
		`"function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`,
}

// readValue reads s as one value with numbers in mode.
func readValue(s string, mode numbers) (any, error) {
	r := jsonReader{s: s}
	v := r.value(mode)
	return v, r.end()
}

// sameAsEncodingJSON checks readValue against encoding/json on s.
func sameAsEncodingJSON(t *testing.T, s string) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal([]byte(s), &want)
	got, err := readValue(s, floats)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%.80q: error %v, encoding/json's %v", s, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.80q:\n got %#v\nwant %#v", s, got, want)
	}
}

func TestJSONReaderReadsAsEncodingJSON(t *testing.T) {
	for _, s := range jsondecCorpus {
		sameAsEncodingJSON(t, s)
	}
}

func FuzzJSONReader(f *testing.F) {
	for _, s := range jsondecCorpus {
		f.Add(s)
	}
	f.Fuzz(sameAsEncodingJSON)
}

func TestJSONReaderGoIntsAreDecodeMetadatas(t *testing.T) {
	for _, s := range []string{`{"n":3,"f":2.5,"e":1e2,"neg":-7,"big":123456789012345678901234567890,` +
		`"nested":{"a":[1,2.0,{"b":4}]},"s":"x","z":null}`, `{}`, `null`} {
		var want map[string]any
		if err := decodeNumbers([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		want = decodeMetadata(want)
		r := jsonReader{s: s}
		got := r.object(goInts)
		if err := r.end(); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v (%v)\nwant %#v", s, got, err, want)
		}
	}
}

// allFieldsSet fails unless every field of v (a struct) is set: a field added to a wire
// type must be given a value in the documents below, and so a case in its decoder.
func allFieldsSet(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := 0; i < rv.NumField(); i++ {
		if rv.Field(i).IsZero() {
			t.Errorf("%T.%s is not set in the test's document", v, rv.Type().Field(i).Name)
		}
	}
}

func TestDecodeRunResultAsEncodingJSON(t *testing.T) {
	doc := `{"text":"done \u00e9","messages":[{"role":"user","content":"hi"},{"role":"tool","n":1}],
	  "tool_calls":[{"name":"w","args":{"city":"Paris","n":2},"output":"21","is_error":true,"metadata":{"ms":12,"r":0.5}},
	    {"name":"x","args":null,"output":"","is_error":false,"metadata":null,"extra":[1]}],
	  "tool_call_count":2,"turns":3,"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"cached":1},
	  "model":"m","status":"pending","limit":"max_turns",
	  "pending":{"id":"r1","kind":"approval","prompt":"ok?","url":"http://x","data":{"n":1},"expiresAt":"2026"},
	  "history_kept":4,"unknown":{"deep":[null]}}`
	got, err := decodeRunResult(doc)
	if err != nil {
		t.Fatal(err)
	}
	allFieldsSet(t, got)
	var want wireRunResult
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	// Metadata's numbers as a tool result's (decodeMetadata), not encoding/json's float64.
	var meta struct {
		ToolCalls []struct {
			Metadata map[string]any `json:"metadata"`
		} `json:"tool_calls"`
	}
	if err := decodeNumbers([]byte(doc), &meta); err != nil {
		t.Fatal(err)
	}
	for i := range want.ToolCalls {
		want.ToolCalls[i].Metadata = decodeMetadata(meta.ToolCalls[i].Metadata)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %#v\nwant %#v", got, want)
	}
	for _, doc := range []string{`{}`, `null`, `{"tool_calls":[]}`, `{"tool_calls":null,"pending":null,"usage":null}`} {
		got, err := decodeRunResult(doc)
		var want wireRunResult
		if json.Unmarshal([]byte(doc), &want) != nil || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v (%v)\nwant %#v", doc, got, err, want)
		}
	}
}

func TestDecodeToolCallAsEncodingJSON(t *testing.T) {
	doc := `{"name":"get_weather","args":{"city":"Paris","days":[1,2.5]},"call_id":"c1",
	  "answer":{"id":"r1","ok":true,"data":{"output":"yes"},"reason":"declined"},"timeout_ms":5000,"host_ref":3,"x":1}`
	got, err := decodeToolCall(doc)
	if err != nil {
		t.Fatal(err)
	}
	allFieldsSet(t, got)
	var want wireToolCall
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %#v\nwant %#v", got, want)
	}
	got, err = decodeToolCall(`{"name":"n","args":null,"answer":null,"host_ref":null}`)
	if err != nil || got.Args != nil || got.Answer != nil || got.HostRef != nil {
		t.Errorf("nulls: %#v (%v)", got, err)
	}
}

func TestDecodeStreamEventAsEncodingJSON(t *testing.T) {
	doc := `{"type":"tool_result","delta":"d","id":"c1","name":"w","args":{"a":[true]},"output":"o","is_error":true,
	  "usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"request":{"id":"r","kind":"input","prompt":"p"}}`
	got, err := decodeStreamEvent(doc)
	if err != nil {
		t.Fatal(err)
	}
	allFieldsSet(t, got)
	var want wireStreamEvent
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %#v\nwant %#v", got, want)
	}
}

func TestWireDecodersRefuseWhatIsNotTheirShape(t *testing.T) {
	for _, doc := range []string{`[]`, `{"turns":1.5}`, `{"turns":"1"}`, `{"text":1}`, `{"messages":{}}`,
		`{"tool_calls":[1]}`, `{"usage":[]}`, `{"pending":{"id":1}}`, `{"text":"a"} x`, `{"text":"a"`} {
		if _, err := decodeRunResult(doc); err == nil {
			t.Errorf("run result %s: read, want an error", doc)
		}
		var w wireRunResult
		if json.Unmarshal([]byte(doc), &w) == nil {
			t.Errorf("run result %s: encoding/json reads it, so should the reader", doc)
		}
	}
	for _, doc := range []string{`{"host_ref":-1}`, `{"host_ref":1.5}`, `{"answer":{"ok":"yes"}}`, `{"args":[]}`} {
		if _, err := decodeToolCall(doc); err == nil {
			t.Errorf("tool call %s: read, want an error", doc)
		}
	}
}
