package toolnexus_test

// Content parts: the Go port's constructors, prompts of parts in both styles (run, ask and
// stream), a tool's parts to and from the engine, and the warning of a placeholder.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// golden is upstream's 8x8 PNG fixture (examples/media/fixture.png), 82 bytes.
const golden = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAGUlEQVR42mP4z8AARwyrkBAVJZClkAEVJQBm3VpRJDtqMQAAAABJRU5ErkJggg=="

func fixtureBytes(t *testing.T) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(golden)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// fixture writes the PNG fixture as name in a fresh directory and returns its path.
func fixture(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, fixtureBytes(t), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// partKind is the kind of the *Error a constructor or a run failed with ("" when it is not one).
func partKind(err error) tn.ErrorKind {
	var e *tn.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

func TestPartConstructors(t *testing.T) {
	path := fixture(t, "fixture.png")
	f := tn.File(path)
	if f.Err() != nil || f.Type != tn.PartImage || f.MimeType != "image/png" || f.Data != golden || f.URL != "" ||
		f.Name != "fixture.png" {
		t.Fatalf("File: %+v (%v)", f, f.Err())
	}
	if strings.Contains(asJSON(f), path) {
		t.Fatalf("a part holds its path: %s", asJSON(f))
	}
	raw := fixtureBytes(t)
	for name, p := range map[string]tn.ContentPart{
		"Bytes":  tn.Bytes(raw, "image/png"),
		"Reader": tn.Reader(bytes.NewReader(raw), "image/png"),
		"FSFile": tn.FSFile(fstest.MapFS{"img/fixture.png": {Data: raw}}, "img/fixture.png"),
	} {
		if p.Err() != nil || p.Type != tn.PartImage || p.Data != golden {
			t.Errorf("%s: %+v (%v)", name, p, p.Err())
		}
	}
	h, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if p := tn.FileHandle(h); p.Err() != nil || p.Data != golden || p.Name != "fixture.png" {
		t.Errorf("FileHandle: %+v (%v)", p, p.Err())
	}
	if _, err := h.Stat(); err != nil {
		t.Errorf("FileHandle closed the caller's file: %v", err)
	}
	if p := tn.Bytes([]byte("%PDF"), "application/pdf"); p.Type != tn.PartFile || p.Name != "" {
		t.Errorf("a pdf's bytes: %+v", p)
	}
	if p := tn.Bytes([]byte("ID3"), "audio/ogg"); p.Type != tn.PartAudio {
		t.Errorf("audio bytes: %+v", p)
	}
	if p := tn.URLPart("data:image/png;base64,"+golden, ""); p.Err() != nil || p.Data != golden || p.URL != "" ||
		p.MimeType != "image/png" {
		t.Errorf("a data: URL: %+v (%v)", p, p.Err())
	}
	if p := tn.URLPart("https://example.test/a.pdf", ""); p.URL != "https://example.test/a.pdf" || p.Data != "" ||
		p.Type != tn.PartFile || p.MimeType != "application/pdf" {
		t.Errorf("an https URL: %+v (%v)", p, p.Err())
	}
	if p := tn.Text("hi"); p.Type != tn.PartText || p.Text != "hi" || asJSON(p) != `{"type":"text","text":"hi"}` {
		t.Errorf("Text: %s", asJSON(p))
	}
}

func TestPartConstructorFailuresAreDeferred(t *testing.T) {
	unknown := filepath.Join(t.TempDir(), "thing.heic")
	if err := os.WriteFile(unknown, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		part tn.ContentPart
		want string
	}{
		"unknown extension": {tn.File(unknown), `unknown file extension ".heic"`},
		"missing file":      {tn.File("/no/such/shot.png"), "cannot read /no/such/shot.png"},
		"bytes, no mime":    {tn.Bytes([]byte{1}, ""), "mime_type is required"},
		"plain data: URL":   {tn.URLPart("data:image/png,abc", ""), "only base64 data: URLs are supported"},
		"failing reader":    {tn.Reader(failingReader{}, "image/png"), "disk went away"},
		"FSFile, missing":   {tn.FSFile(fstest.MapFS{}, "gone.png"), "gone.png"},
	} {
		err := c.part.Err()
		if partKind(err) != tn.KindContentPart || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a content_part error saying %q", name, err, c.want)
		}
	}
	m := newMock(t)
	m.script(textReply("never"))
	_, err := openaiClient(t, m, nil).RunParts(testCtx(t), []tn.ContentPart{tn.Text("hi"), tn.File(unknown)}, nil)
	if partKind(err) != tn.KindContentPart || len(m.seen()) != 0 {
		t.Fatalf("RunParts with a bad part: %v, %d requests", err, len(m.seen()))
	}
}

// TestPartMethods: what the Go port asks of a part (Validate, Bytes, EstimatedTokens, String)
// is the engine's answer; File reads a path even when it looks like a URL.
func TestPartMethods(t *testing.T) {
	png := tn.ContentPart{Type: tn.PartImage, MimeType: "image/png", Data: golden}
	if err := png.Validate(0); err != nil {
		t.Errorf("a valid part: %v", err)
	}
	if err := png.Validate(10); partKind(err) != tn.KindContentPart || !strings.Contains(err.Error(), "over the maxPartBytes limit of 10") {
		t.Errorf("over the limit: %v", err)
	}
	both := tn.ContentPart{Type: tn.PartImage, MimeType: "image/png", Data: golden, URL: "https://x.test/a.png"}
	if err := both.Validate(0); partKind(err) != tn.KindContentPart || !strings.Contains(err.Error(), "both data and url") {
		t.Errorf("both: %v", err)
	}
	if err := tn.File("/no/such/shot.png").Validate(0); partKind(err) != tn.KindContentPart {
		t.Errorf("a constructor's error: %v", err)
	}
	if png.Bytes() != 82 || png.EstimatedTokens() != 85 || tn.Text(strings.Repeat("a", 40)).EstimatedTokens() != 10 {
		t.Errorf("bytes %d, tokens %d", png.Bytes(), png.EstimatedTokens())
	}
	if s := png.String(); s != `{"type":"image","mimeType":"image/png","bytes":82}` || strings.Contains(fmt.Sprint(png), golden) {
		t.Errorf("String: %s", s)
	}
	if p := tn.File("https://x.test/a.png"); partKind(p.Err()) != tn.KindContentPart || p.URL != "" {
		t.Errorf("File of a URL-shaped path is read, never kept as a URL: %+v, %v", p, p.Err())
	}
	if p := tn.URLPart("ftp://x.test/a.png", ""); partKind(p.Err()) != tn.KindContentPart {
		t.Errorf("URLPart of a URL a provider cannot fetch: %v", p.Err())
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, fmt.Errorf("disk went away") }

// userContent is the content of the first user message of a request body.
func userContent(t *testing.T, body any) []any {
	t.Helper()
	msgs, _ := body.(map[string]any)["messages"].([]any)
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "user" {
			content, _ := mm["content"].([]any)
			return content
		}
	}
	t.Fatalf("no user message in %s", asJSON(body))
	return nil
}

func anthropicText(text string) mockReply {
	return mockReply{Body: json.RawMessage(fmt.Sprintf(
		`{"role":"assistant","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
		text))}
}

func TestPromptOfPartsInBothStyles(t *testing.T) {
	path := fixture(t, "fixture.png")
	m := newMock(t)
	m.script(textReply("seen"))
	res, err := openaiClient(t, m, nil).RunParts(testCtx(t), []tn.ContentPart{tn.Text("before"), tn.File(path), tn.Text("after")}, nil)
	if err != nil || res.Text != "seen" {
		t.Fatalf("openai: %v %+v", err, res)
	}
	want := `[{"text":"before","type":"text"},{"image_url":{"url":"data:image/png;base64,` + golden +
		`"},"type":"image_url"},{"text":"after","type":"text"}]`
	if got := asJSON(userContent(t, m.seen()[0].Body)); got != want {
		t.Fatalf("openai user content:\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(asJSON(res.Messages), `"mimeType":"image/png"`) {
		t.Errorf("the transcript keeps the canonical part: %s", asJSON(res.Messages))
	}

	m.script(anthropicText("seen"))
	c, err := tn.NewClient(tn.ClientOptions{BaseURL: m.anthropicURL(), Style: tn.StyleAnthropic, Model: "m", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunParts(testCtx(t), []tn.ContentPart{tn.Text("look"), tn.File(path)}, nil); err != nil {
		t.Fatalf("anthropic: %v", err)
	}
	want = `[{"text":"look","type":"text"},{"source":{"data":"` + golden + `","media_type":"image/png","type":"base64"},"type":"image"}]`
	if got := asJSON(userContent(t, m.seen()[0].Body)); got != want {
		t.Fatalf("anthropic user content:\n got %s\nwant %s", got, want)
	}

	// Anthropic has no audio block: a prompt's audio is refused before any request.
	m.script(anthropicText("never"))
	_, err = c.RunParts(testCtx(t), []tn.ContentPart{tn.Bytes([]byte("ID3"), "audio/mpeg")}, nil)
	if partKind(err) != tn.KindUnsupportedPart || len(m.seen()) != 0 {
		t.Fatalf("anthropic audio: %v, %d requests", err, len(m.seen()))
	}
}

func TestPartsThroughAskAndStream(t *testing.T) {
	path := fixture(t, "fixture.png")
	m := newMock(t)
	m.script(textReply("one"), textReply("two"))
	c := openaiClient(t, m, nil)
	if _, err := c.AskParts(testCtx(t), []tn.ContentPart{tn.File(path)}, nil, "conv"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ask(testCtx(t), "and now?", nil, "conv"); err != nil {
		t.Fatal(err)
	}
	if second := asJSON(m.seen()[1].Body); !strings.Contains(second, "data:image/png;base64,"+golden) {
		t.Fatalf("the remembered conversation lost its image: %s", second)
	}

	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("content-type", "text/event-stream")
		for _, ev := range textEvents("streamed") {
			fmt.Fprint(w, ev)
		}
	}))
	t.Cleanup(srv.Close)
	sc, _ := tn.NewClient(tn.ClientOptions{BaseURL: srv.URL + "/v1", Model: "m", APIKey: "k"})
	ch, err := sc.StreamParts(testCtx(t), []tn.ContentPart{tn.Text("look"), tn.File(path)}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var last tn.StreamEvent
	for ev := range ch {
		last = ev
	}
	mu.Lock()
	defer mu.Unlock()
	if last.Type != "done" || last.Result.Text != "streamed" || len(bodies) != 1 ||
		!strings.Contains(bodies[0], `"image_url":{"url":"data:image/png;base64,`+golden) {
		t.Fatalf("stream: %+v, bodies %v", last, bodies)
	}
	if _, err := sc.StreamParts(testCtx(t), []tn.ContentPart{tn.File("/no/such.png")}, nil, ""); partKind(err) != tn.KindContentPart {
		t.Fatalf("a bad part before streaming: %v", err)
	}
}

// shot is a tool answering with text and the fixture image.
func shot(t *testing.T, name string) tn.Tool {
	raw := fixtureBytes(t)
	return fn(name, func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		return tn.ToolResult{Output: name + " output", Parts: []tn.ContentPart{tn.Bytes(raw, "image/png")}}, nil
	})
}

func TestToolResultParts(t *testing.T) {
	m := newMock(t)
	m.script(callReply("c1:shot_a"), textReply("done"))
	res, err := openaiClient(t, m, nil).Run(testCtx(t), "go", toolkit(t, shot(t, "shot_a")))
	if err != nil || res.Text != "done" {
		t.Fatalf("run: %v %+v", err, res)
	}
	sent, _ := m.seen()[1].Body.(map[string]any)["messages"].([]any)
	moved := asJSON(sent[len(sent)-1])
	if !strings.Contains(moved, `"Output of tool shot_a (c1):"`) || !strings.Contains(moved, "data:image/png;base64,"+golden) {
		t.Fatalf("the image is not in a user message after the tool's: %s", asJSON(sent))
	}
	if tm := toolMessages(m.seen()[1].Body); len(tm) != 1 || tm[0]["content"] != "shot_a output" {
		t.Fatalf("tool message: %v", tm)
	}

	// From the engine: the read built-in answers a PNG with its part.
	path := fixture(t, "fixture.png")
	tk, err := tn.CreateToolkit(testCtx(t), tn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Close()
	r, err := tk.Execute(testCtx(t), "read", map[string]any{"path": path})
	if err != nil || len(r.Parts) != 1 || r.Parts[0].Data != golden || r.Parts[0].Type != tn.PartImage ||
		r.Output != path+" (image/png, 82 bytes)" {
		t.Fatalf("read: %v %+v", err, r)
	}
}

func TestToolPartThatCouldNotBeMadeIsAnErrorResult(t *testing.T) {
	m := newMock(t)
	m.script(callReply("c1:broken"), textReply("ok"))
	broken := fn("broken", func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		return tn.ToolResult{Output: "here", Parts: []tn.ContentPart{tn.File("/no/such/shot.png")}}, nil
	})
	res, err := openaiClient(t, m, nil).Run(testCtx(t), "go", toolkit(t, broken))
	if err != nil || len(res.ToolCalls) != 1 || !res.ToolCalls[0].IsError ||
		!strings.Contains(res.ToolCalls[0].Output, "cannot read /no/such/shot.png") {
		t.Fatalf("run: %v %+v", err, res)
	}
}

func TestPlaceholderWarnsOnceAndOversizedPromptFails(t *testing.T) {
	var logged bytes.Buffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&logged)
	log.SetFlags(0)
	t.Cleanup(func() { log.SetOutput(prev); log.SetFlags(flags) })

	m := newMock(t)
	m.script(callReply("c1:shot_a", "c2:shot_b"), textReply("done"))
	c := openaiClient(t, m, func(o *tn.ClientOptions) { o.MaxPartBytes = 10 })
	res, err := c.Run(testCtx(t), "go", toolkit(t, shot(t, "shot_a"), shot(t, "shot_b")))
	if err != nil || res.Text != "done" {
		t.Fatalf("an oversized tool part must not fail the run: %v %+v", err, res)
	}
	second := asJSON(m.seen()[1].Body)
	if strings.Count(second, "[unsupported image part (image/png, 82 bytes)]") != 2 || strings.Contains(second, golden) {
		t.Fatalf("placeholders: %s", second)
	}
	if n := strings.Count(logged.String(), "[toolnexus]"); n != 1 ||
		!strings.Contains(logged.String(), "over the maxPartBytes limit of 10 — sent as a text placeholder") {
		t.Fatalf("want one warning, got %d: %q", n, logged.String())
	}

	m.script(textReply("never"))
	_, err = c.RunParts(testCtx(t), []tn.ContentPart{tn.File(fixture(t, "big.png"))}, nil)
	if partKind(err) != tn.KindContentPart || !strings.Contains(err.Error(), "over the maxPartBytes limit of 10") ||
		len(m.seen()) != 0 {
		t.Fatalf("an oversized prompt part: %v, %d requests", err, len(m.seen()))
	}
}

// TestLlmEventDescribesItsParts: an llm event lists the request's parts by type, MIME type
// and size, never their data.
func TestLlmEventDescribesItsParts(t *testing.T) {
	m := newMock(t)
	m.script(textReply("seen"))
	var events []tn.MetricEvent
	c := openaiClient(t, m, func(o *tn.ClientOptions) { o.OnMetric = func(ev tn.MetricEvent) { events = append(events, ev) } })
	if _, err := c.RunParts(testCtx(t), []tn.ContentPart{tn.Text("look"), tn.File(fixture(t, "fixture.png"))}, nil); err != nil {
		t.Fatal(err)
	}
	want := []tn.PartSummary{{Type: "image", MimeType: "image/png", Bytes: int64(len(fixtureBytes(t)))}}
	if len(events) == 0 || events[0].Event != "llm" || !reflect.DeepEqual(events[0].Parts, want) {
		t.Fatalf("llm event parts: %+v", events)
	}
	if last := events[len(events)-1]; last.Event != "run" || last.Parts != nil {
		t.Fatalf("a run event has no parts: %+v", last)
	}
}
