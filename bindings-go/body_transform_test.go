package toolnexus_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

func TestBodyTransformRewritesEachRequest(t *testing.T) {
	var mu sync.Mutex // the server and the transform run on goroutines of their own
	var seen []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		seen = append(seen, body)
		mu.Unlock()
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"hi"}}]}`))
	}))
	defer srv.Close()
	calls := 0
	c := tn.CreateClient(tn.ClientOptions{BaseURL: srv.URL, Model: "m", APIKey: "k",
		BodyTransform: func(body map[string]any) map[string]any {
			mu.Lock()
			calls++
			first := calls == 1
			mu.Unlock()
			if first {
				return nil // sent as built
			}
			body["temperature"] = 0
			return body
		}})
	for i := 0; i < 2; i++ {
		if _, err := c.Run(context.Background(), "hello", nil); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0]["temperature"] != nil || seen[1]["temperature"] != float64(0) || seen[1]["model"] != "m" {
		t.Fatalf("bodies: %v", seen)
	}
	mu.Unlock()
	c = tn.CreateClient(tn.ClientOptions{BaseURL: srv.URL, Model: "m", APIKey: "k",
		BodyTransform: func(map[string]any) map[string]any { panic("no") }})
	_, err := c.Run(context.Background(), "hello", nil)
	mu.Lock()
	if err == nil || len(seen) != 2 {
		t.Fatalf("a panicking transform ends the run before a request: %v, %d requests", err, len(seen))
	}
}
