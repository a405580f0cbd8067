package toolnexus

import (
	"context"
	"encoding/json"
	"fmt"
)

// ErrorKind classifies an *Error. The values are the engine's stable kind names, one per C
// status code; which code is which kind is the engine's table (tn_error_kinds), read at load.
type ErrorKind string

// The error kinds, one per TN_ERR_* status of the C ABI (a test checks them against the
// engine's table).
const (
	KindInvalidArgument ErrorKind = "invalid_argument"
	KindConfig          ErrorKind = "config"
	KindHTTP            ErrorKind = "http"
	KindNetwork         ErrorKind = "network"
	KindTimeout         ErrorKind = "timeout"
	KindCancelled       ErrorKind = "cancelled"
	KindProtocol        ErrorKind = "protocol"
	KindAnswerMismatch  ErrorKind = "answer_mismatch"
	KindHost            ErrorKind = "host"
	KindInternal        ErrorKind = "internal"
	KindReentrant       ErrorKind = "reentrant"
	// KindConflict: a conversation is in use by another run, or its pending request was
	// already answered (a second resume) or answered differently.
	KindConflict ErrorKind = "conflict"
	// KindStore: a conversation store failed (I/O, a database that cannot be read).
	KindStore ErrorKind = "store"
	// KindContentPart: a content part is malformed or over MaxPartBytes.
	KindContentPart ErrorKind = "content_part"
	// KindUnsupportedPart: the provider's style has no block for a content part.
	KindUnsupportedPart ErrorKind = "unsupported_part"
)

// Error is every failure this package returns. Match it with errors.As; Unwrap reaches the
// detail: a *ProviderError for KindHTTP, a *RunTimeoutError for KindTimeout, the context's
// error when the caller's ctx ended the run, and the host's own error when a WaitFor, hook
// or HTTPClient callback failed.
type Error struct {
	// Kind is the engine's classification.
	Kind ErrorKind
	// Code is the C status code of Kind.
	Code int
	// Message is the engine's message; it never contains the API key.
	Message string
	// cause is what Unwrap returns.
	cause error
	// hostRef names the host error that ended the run (0: none).
	hostRef uint64
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the detail or cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// ProviderError is a non-2xx answer from the model provider, carried as values so a host never
// parses a message. Body is already redacted by the engine (account identifiers and secrets
// replaced; empty for 401/403) and is not capped; Error() caps it.
type ProviderError struct {
	// Status is the HTTP status of the failed response.
	Status int
	// Body is the whole response body, redacted.
	Body string
	// RetryAfter is the raw Retry-After header, empty when the provider sent none.
	RetryAfter string
	// message is the engine's rendering, `LLM <status>: <capped body>`.
	message string
}

// Error renders `LLM <status>: <redacted body, capped>`.
func (e *ProviderError) Error() string { return e.message }

// RunTimeoutError is the whole-run deadline (ClientOptions.TimeoutMs) passing. It unwraps to
// context.DeadlineExceeded, so a host that branches on that keeps working.
type RunTimeoutError struct {
	// TimeoutMs is the configured whole-run deadline, in milliseconds.
	TimeoutMs int
}

// Error names the budget.
func (e *RunTimeoutError) Error() string { return fmt.Sprintf("run timeout after %dms", e.TimeoutMs) }

// Unwrap returns context.DeadlineExceeded.
func (e *RunTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// engineErrorJSON is the error object of the C ABI.
type engineErrorJSON struct {
	Kind       string  `json:"kind"`
	Code       int     `json:"code"`
	Message    string  `json:"message"`
	Status     *int    `json:"status"`
	Body       string  `json:"body"`
	RetryAfter *string `json:"retry_after"`
	HostRef    uint64  `json:"host_ref"`
}

// decodeEngineError builds the *Error for a failed call from its status and error JSON.
func decodeEngineError(status int, text string) *Error {
	var ej engineErrorJSON
	if err := json.Unmarshal([]byte(text), &ej); err != nil {
		ej.Message = fmt.Sprintf("toolnexus: status %d with an unreadable error (%q)", status, text)
	}
	e := &Error{Kind: kindOfCode(status), Code: status, Message: ej.Message, hostRef: ej.HostRef}
	if e.Kind == KindHTTP && ej.Status != nil {
		pe := &ProviderError{Status: *ej.Status, Body: ej.Body, message: ej.Message}
		if ej.RetryAfter != nil {
			pe.RetryAfter = *ej.RetryAfter
		}
		e.cause = pe
	}
	return e
}

// bindingError is an error this package raises before reaching the engine.
func bindingError(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: codeOfKind(kind), Message: "toolnexus: " + fmt.Sprintf(format, args...)}
}
