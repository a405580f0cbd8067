package toolnexus

// The link to libtoolnexus: cgo flags, the ABI check, and the string edges every call uses.
//
// The archive is linked statically from ./lib/<GOOS>-<GOARCH>, so `go build` gives a
// self-contained binary. A released module carries the archive and the header (include/) in
// it, as cgo libraries ship theirs, and links with no step before it; in a checkout,
// build-lib.sh fills lib/ and the header is the repository's own include/toolnexus.h.

/*
#cgo CFLAGS: -I${SRCDIR}/include -I${SRCDIR}/../include
#cgo LDFLAGS: -ltoolnexus -lpthread -ldl -lm -lrt
#cgo linux,amd64 LDFLAGS: -L${SRCDIR}/lib/linux-amd64
#cgo linux,arm64 LDFLAGS: -L${SRCDIR}/lib/linux-arm64
#cgo darwin,amd64 LDFLAGS: -L${SRCDIR}/lib/darwin-amd64
#cgo darwin,arm64 LDFLAGS: -L${SRCDIR}/lib/darwin-arm64
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// abiErr is set at load time when the linked library speaks another ABI than the header this
// package was compiled against; every entry point that reaches the engine returns it.
var abiErr = checkABI(uint32(C.tn_abi_version()), uint32(C.TN_ABI_VERSION))

// checkABI compares the loaded library's ABI version with the header's.
func checkABI(loaded, header uint32) error {
	if loaded == header {
		return nil
	}
	return &Error{
		Kind: KindConfig,
		Code: codeOfKind(KindConfig),
		Message: fmt.Sprintf("toolnexus: the linked libtoolnexus implements ABI %d but this binding was built "+
			"for ABI %d: rebuild libtoolnexus (bindings-go/build-lib.sh), then rebuild this program", loaded, header),
	}
}

// EngineVersion is the version of the linked libtoolnexus.
func EngineVersion() string {
	return C.GoString(C.tn_version())
}

// cstring copies s into C memory; the caller frees it with freeC. Every string this package
// hands over is JSON from encoding/json or plain text, so it is valid UTF-8 and NUL-free
// where it matters (JSON escapes NUL).
func cstring(s string) *C.char { return C.CString(s) }

// ctext copies a caller's plain text (an id, an output) into C memory for the engine, which
// reads NUL-terminated UTF-8: NUL and bytes that are not UTF-8 become U+FFFD, as encoding/json
// turns the latter. The caller frees it with freeC.
func ctext(s string) *C.char {
	return C.CString(strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD"))
}

// encodeBuffers keep the buffers run inputs are encoded in: a long history is tens of KB,
// which would otherwise be allocated and collected again on every run.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// cinput encodes a run's input into C memory, to be freed with freeC.
func cinput(input wireRunInput) (*C.char, error) {
	buf := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(buf)
	b, err := input.encode((*buf)[:0])
	*buf = b
	if err != nil {
		return nil, err
	}
	return (*C.char)(C.CBytes(b)), nil
}

// freeC releases a string made by cstring.
func freeC(p *C.char) { C.free(unsafe.Pointer(p)) }

// takeString copies a string the library handed out and releases it.
func takeString(p *C.char) string {
	if p == nil {
		return ""
	}
	s := C.GoString(p)
	C.tn_string_free(p)
	return s
}

// check turns a status and its error JSON into nil or an *Error.
func check(status C.int32_t, errJSON *C.char) error {
	text := takeString(errJSON)
	if status == C.TN_OK {
		return nil
	}
	return decodeEngineError(int(status), text)
}

// complete answers a library callback. A refused completion means the run stopped waiting
// (cancelled or finished), so there is nobody left to tell.
func complete(token uint64, status int, payload string) {
	p := cstring(payload)
	defer freeC(p)
	var errJSON *C.char
	C.tn_complete(C.uint64_t(token), C.int32_t(status), p, &errJSON)
	takeString(errJSON)
}

// completeHostError ends a callback with a host failure the engine refers back to by ref.
func completeHostError(token uint64, message string, ref uint64) {
	m := cstring(message)
	defer freeC(m)
	var errJSON *C.char
	C.tn_complete_host_error(C.uint64_t(token), m, C.uint64_t(ref), &errJSON)
	takeString(errJSON)
}

// Status codes used by the binding's own callbacks.
const (
	statusOK      = int(C.TN_OK)
	statusNetwork = int(C.TN_ERR_NETWORK)
	statusHost    = int(C.TN_ERR_HOST)
)
