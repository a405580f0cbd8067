package toolnexus_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tn "github.com/toolnexus/toolnexus/bindings-go"
)

// badOptions is tests/options/bad-client-options.json: the cases the C, Go and Clojure tests
// all run.
type badOptions struct {
	Base struct {
		BaseURL string `json:"base_url"`
		Style   string `json:"style"`
		Model   string `json:"model"`
		APIKey  string `json:"api_key"`
	} `json:"base"`
	Cases []struct {
		Option string          `json:"option"`
		Value  json.RawMessage `json:"value"`
	} `json:"cases"`
}

// setters are the shared cases' options as ClientOptions fields. A case whose value the field's
// Go type cannot hold (a float max_turns, a string timeout, a non-string header) cannot be
// written in Go at all; nor can an option ClientOptions has no field for.
var setters = map[string]func(*tn.ClientOptions, json.RawMessage) bool{
	"timeout_ms": func(o *tn.ClientOptions, v json.RawMessage) bool { return json.Unmarshal(v, &o.TimeoutMs) == nil },
	"max_turns":  func(o *tn.ClientOptions, v json.RawMessage) bool { return json.Unmarshal(v, &o.MaxTurns) == nil },
	"retries":    func(o *tn.ClientOptions, v json.RawMessage) bool { return json.Unmarshal(v, &o.Retries) == nil },
	"retry_base_ms": func(o *tn.ClientOptions, v json.RawMessage) bool {
		return json.Unmarshal(v, &o.RetryBaseMs) == nil
	},
	"headers": func(o *tn.ClientOptions, v json.RawMessage) bool { return json.Unmarshal(v, &o.Headers) == nil },
	"retryable_statuses": func(o *tn.ClientOptions, v json.RawMessage) bool {
		return json.Unmarshal(v, &o.RetryableStatuses) == nil
	},
}

func TestTheSharedBadOptionsAreInvalidArguments(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "tests", "options", "bad-client-options.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc badOptions
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, c := range doc.Cases {
		opts := tn.ClientOptions{BaseURL: doc.Base.BaseURL, Style: tn.ClientStyle(doc.Base.Style), Model: doc.Base.Model, APIKey: doc.Base.APIKey}
		set, ok := setters[c.Option]
		if !ok || !set(&opts, c.Value) {
			t.Logf("%s = %s: not expressible in ClientOptions", c.Option, c.Value)
			continue
		}
		ran++
		_, err := tn.NewClient(opts)
		var te *tn.Error
		if !errors.As(err, &te) || te.Kind != tn.KindInvalidArgument || !strings.Contains(te.Message, c.Option) {
			t.Errorf("%s = %s: want invalid_argument naming %s, got %v", c.Option, c.Value, c.Option, err)
		}
	}
	if ran < 6 {
		t.Errorf("only %d of the shared cases ran", ran)
	}
}
