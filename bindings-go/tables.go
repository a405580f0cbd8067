package toolnexus

// The engine's tables, read from the linked library once, at load: every error kind (its
// name and TN_ERR_* code) and every hook (its name and TN_HOOK_* bit). This package keeps no
// copy of either; its ErrorKind constants are the Go port's names for the engine's kinds, and
// a test checks them against the engine's table.

// #include "bridge.h"
import "C"

import "encoding/json"

// engineKind is one entry of tn_error_kinds.
type engineKind struct {
	Name      string `json:"name"`
	Code      int    `json:"code"`
	Retryable bool   `json:"retryable"`
}

// engineHook is one entry of tn_hook_bits.
type engineHook struct {
	Name string `json:"name"`
	Bit  uint32 `json:"bit"`
}

var (
	errorKinds = readTable[engineKind](func(out, errJSON **C.char) C.int32_t { return C.tn_error_kinds(out, errJSON) })
	hookBits   = hookBitsByName(readTable[engineHook](func(out, errJSON **C.char) C.int32_t { return C.tn_hook_bits(out, errJSON) }))
)

// readTable decodes one of the engine's JSON tables; a library that cannot give it leaves
// the table empty (every status then reads as KindInternal, and abiErr says why).
func readTable[T any](get func(out, errJSON **C.char) C.int32_t) []T {
	var out, errJSON *C.char
	// Not through check: decoding an error needs the very table being read.
	if status := get(&out, &errJSON); status != C.TN_OK {
		takeString(errJSON)
		return nil
	}
	var rows []T
	if json.Unmarshal([]byte(takeString(out)), &rows) != nil {
		return nil
	}
	return rows
}

func hookBitsByName(hooks []engineHook) map[string]C.uint32_t {
	m := make(map[string]C.uint32_t, len(hooks))
	for _, h := range hooks {
		m[h.Name] = C.uint32_t(h.Bit)
	}
	return m
}

// kindOfCode is the kind of a C status code, as the engine's table names it; an unknown code
// is reported as internal.
func kindOfCode(code int) ErrorKind {
	for _, k := range errorKinds {
		if k.Code == code {
			return ErrorKind(k.Name)
		}
	}
	return KindInternal
}

// codeOfKind is the C status code of kind, from the engine's table (0 for no kind).
func codeOfKind(kind ErrorKind) int {
	for _, k := range errorKinds {
		if ErrorKind(k.Name) == kind {
			return k.Code
		}
	}
	return 0
}
