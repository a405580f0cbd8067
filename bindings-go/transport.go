package toolnexus

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"time"
)

// transportOutcome sends one model request through ClientOptions.HTTPClient. Any HTTP answer
// goes back to the engine as it came (the engine applies its retry policy); no answer is a
// network error, which the engine may retry. The request is bound to the run's context and
// to the per-request timeout the engine gives.
func (s *runScope) transportOutcome(requestJSON string) outcome {
	var req struct {
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers"`
		Body      string            `json:"body"`
		TimeoutMs int64             `json:"timeout_ms"`
	}
	if err := json.Unmarshal([]byte(requestJSON), &req); err != nil {
		return reply(statusHost, "toolnexus: unreadable transport request: "+err.Error())
	}
	ctx := s.ctx
	if req.TimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	var status int
	var payload string
	err := guard("HTTPClient", func() error {
		status, payload = send(ctx, s.opts.HTTPClient, req.URL, req.Headers, req.Body)
		return nil
	})
	if err != nil {
		return failed(err)
	}
	return reply(status, payload)
}

// send POSTs body and encodes the answer as the transport completion JSON.
func send(ctx context.Context, client *http.Client, url string, headers map[string]string, body string) (int, string) {
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return statusNetwork, err.Error()
	}
	for k, v := range headers {
		httpReq.Header.Set(k, v)
	}
	resp, err := client.Do(httpReq)
	if err != nil {
		// Without the URL: a host may keep a credential in its query.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			return statusNetwork, ue.Op + ": " + ue.Err.Error()
		}
		return statusNetwork, err.Error()
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return statusNetwork, "reading the response: " + err.Error()
	}
	names := make(map[string]string, len(resp.Header))
	for k, v := range resp.Header {
		names[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	out, err := json.Marshal(struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}{resp.StatusCode, names, string(raw)})
	if err != nil {
		return statusNetwork, err.Error()
	}
	return statusOK, string(out)
}
