package toolnexus

// Content parts (SPEC §1B) with the Go port's names. Every constructor hands what the caller
// holds (a path, a URL, bytes) to the engine (tn_part_build), which reads the extension
// table, encodes the base64 and checks the limit; this file only gathers the bytes of Go's
// own sources (io.Reader, fs.File, fs.FS).

// #include "bridge.h"
import "C"

import (
	"encoding/json"
	"io"
	"io/fs"
	"runtime"
	"unsafe"
)

// The part types. A part is exactly one of these.
const (
	PartText  = "text"
	PartImage = "image"
	PartFile  = "file"
	PartAudio = "audio"
)

// ContentPart is one piece of a prompt or of a tool result beside the text: a text part
// carries Text; any other a MimeType and exactly one of Data (standard base64) or URL. A
// part never holds a filesystem path: the constructors read the file when they are called.
//
// A constructor that fails returns a part carrying its error (Err), so it can stand as an
// argument; RunParts (and a tool result carrying it) reports it.
type ContentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	URL      string `json:"url,omitempty"`
	Name     string `json:"name,omitempty"`

	err error // the constructor's failure; never serialized
}

// Err returns the error the part was made with (a *Error of KindContentPart), or nil.
func (p ContentPart) Err() error { return p.err }

// Text is a text part.
func Text(s string) ContentPart { return ContentPart{Type: PartText, Text: s} }

// File makes a part of the file at path, read now: its type and MIME type come from the
// extension (png, jpg, jpeg, gif, webp, pdf, mp3, wav), its Name is the file's base name.
// An unknown extension or an unreadable file is the part's Err.
func File(path string) ContentPart { return buildPart(partSpec{Path: path}, nil) }

// Bytes makes a part of raw with the MIME type mimeType (required), typed by it: image/* an
// image, audio/* audio, anything else a file.
func Bytes(raw []byte, mimeType string) ContentPart {
	return buildPart(partSpec{MimeType: mimeType}, raw)
}

// Reader makes a part of everything r reads, now, as Bytes does; r is not closed. A read
// failure is the part's Err.
func Reader(r io.Reader, mimeType string) ContentPart {
	raw, err := io.ReadAll(r)
	if err != nil {
		return partFailure("cannot read the reader: %v", err)
	}
	return Bytes(raw, mimeType)
}

// FileHandle makes a part of an open file (an *os.File, or any fs.File), read now; its type,
// MIME type and Name come from the file's own name (Stat), as File's from its path. f is not
// closed.
func FileHandle(f fs.File) ContentPart {
	if f == nil {
		return partFailure("FileHandle needs an open file, got nil")
	}
	info, err := f.Stat()
	if err != nil {
		return partFailure("cannot stat the file: %v", err)
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		return partFailure("cannot read %s: %v", info.Name(), err)
	}
	return buildPart(partSpec{FileName: info.Name()}, raw)
}

// FSFile makes a part of the file name in fsys (an embed.FS, an os.DirFS, ...), read now, as
// File does.
func FSFile(fsys fs.FS, name string) ContentPart {
	if fsys == nil {
		return partFailure("FSFile needs a file system, got nil")
	}
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return partFailure("cannot read %s: %v", name, err)
	}
	return buildPart(partSpec{FileName: name}, raw)
}

// URLPart makes a part of a URL: a data:<mime>;base64,<data> URL becomes its MimeType and
// Data; an http(s):// URL is kept as URL, its MIME type mimeType or else its extension's; any
// other URL is the part's Err.
func URLPart(u, mimeType string) ContentPart {
	return buildPart(partSpec{URL: u, MimeType: mimeType}, nil)
}

// partSpec is tn_part_build's spec_json.
type partSpec struct {
	Path     string `json:"path,omitempty"`
	URL      string `json:"url,omitempty"`
	FileName string `json:"file_name,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
}

// buildPart has the engine make the part of spec and raw (the content when spec has no
// Source); a failure is the part's err.
func buildPart(spec partSpec, raw []byte) ContentPart {
	if abiErr != nil {
		return ContentPart{err: abiErr}
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return partFailure("cannot encode the part: %v", err)
	}
	cspec := cstring(string(specJSON))
	defer freeC(cspec)
	var data *C.uint8_t
	if len(raw) > 0 {
		data = (*C.uint8_t)(unsafe.Pointer(&raw[0]))
	}
	var out, errJSON *C.char
	status := C.tn_part_build(cspec, data, C.size_t(len(raw)), &out, &errJSON)
	runtime.KeepAlive(raw)
	if err := check(status, errJSON); err != nil {
		return ContentPart{err: err}
	}
	var p ContentPart
	if err := json.Unmarshal([]byte(takeString(out)), &p); err != nil {
		return ContentPart{err: bindingError(KindInternal, "unreadable part: %v", err)}
	}
	return p
}

// partFailure is a part that could not be made because a Go source could not be read.
func partFailure(format string, args ...any) ContentPart {
	return ContentPart{err: bindingError(KindContentPart, format, args...)}
}

// firstPartErr is the first constructor error among parts, or nil.
func firstPartErr(parts []ContentPart) error {
	for _, p := range parts {
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// Validate reports what is wrong with the part: its constructor's error, a missing MimeType,
// both or neither of Data and URL, or (when maxBytes > 0) more than maxBytes decoded bytes.
// The error is a *Error of KindContentPart.
func (p ContentPart) Validate(maxBytes int) error {
	if p.err != nil {
		return p.err
	}
	if abiErr != nil {
		return abiErr
	}
	limit := int64(-1)
	if maxBytes > 0 {
		limit = int64(maxBytes)
	}
	cpart := cstring(p.json())
	defer freeC(cpart)
	var errJSON *C.char
	return check(C.tn_part_validate(cpart, C.int64_t(limit), &errJSON), errJSON)
}

// Bytes is the number of decoded bytes the part carries (0 for a text or URL part).
func (p ContentPart) Bytes() int { return p.info().Bytes }

// EstimatedTokens is how many tokens the part is counted as: a quarter of a text part's
// characters (at least 1), max(85, bytes/750) for any other.
func (p ContentPart) EstimatedTokens() int { return p.info().EstimatedTokens }

// String describes the part as {type, mimeType, bytes} (a text part {type, bytes}), never
// its data: what a log line may show of it.
func (p ContentPart) String() string { return string(p.info().View) }

// partInfo is tn_part_inspect's answer.
type partInfo struct {
	View            json.RawMessage `json:"view"`
	Bytes           int             `json:"bytes"`
	EstimatedTokens int             `json:"estimated_tokens"`
}

// info is what the engine says of the part; the zero partInfo when the library cannot answer.
func (p ContentPart) info() partInfo {
	var info partInfo
	if abiErr != nil {
		return info
	}
	cpart := cstring(p.json())
	defer freeC(cpart)
	var out, errJSON *C.char
	if check(C.tn_part_inspect(cpart, &out, &errJSON), errJSON) == nil {
		_ = json.Unmarshal([]byte(takeString(out)), &info)
	}
	return info
}

// json is the part in the engine's canonical form.
func (p ContentPart) json() string {
	b, _ := json.Marshal(p) // a struct of strings always marshals
	return string(b)
}
