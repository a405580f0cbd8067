package toolnexus

// A JSON encoder for the values a caller's transcript is made of (map[string]any, []any,
// strings, bools, nil), the shape RunWithHistory takes. encoding/json walks such values by
// reflection and sorts each map's keys through an allocated slice: for a 200-message history
// that was most of what this binding added to a run (docs/benchmarks.md, history-200), about
// three times the cost of encoding the same messages as structs. Anything else (numbers,
// structs, json.Marshaler values) is left to encoding/json.

import (
	"encoding/binary"
	"encoding/json"
	"sort"
	"unicode/utf8"
	"unsafe"
)

// appendJSON appends v's JSON to b: what json.Marshal(v) gives, keys sorted, except that
// '<', '>' and '&' are not escaped (nothing here is embedded in HTML).
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, x), nil
	case bool:
		if x {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		return appendJSONObject(b, x)
	}
	out, err := json.Marshal(v)
	return append(b, out...), err
}

func appendJSONObject(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	// A message has a handful of keys: sorting them on the stack allocates nothing.
	var stack [8]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	if len(keys) > 1 {
		sort.Strings(keys)
	}
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

const hexDigits = "0123456789abcdef"

// plainByte says which bytes a JSON string carries as they are (printable ASCII but '"' and
// '\\'); the rest are escaped or, from 0x80 on, checked as UTF-8.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return
}()

// Repeated bytes, for testing eight bytes at once.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// allPlain says whether the eight bytes of w are all plainByte: none is below 0x20, '"',
// '\\' or from 0x80 on. (w - n*ones) & ^w & highs is nonzero exactly when some byte of w is
// below n, for n up to 0x80; a byte equal to c is a zero byte of w ^ c*ones.
func allPlain(w uint64) bool {
	below := (w - 0x20*ones) & ^w
	q := w ^ ('"' * ones)
	quote := (q - ones) & ^q
	bs := w ^ ('\\' * ones)
	backslash := (bs - ones) & ^bs
	return (below|quote|backslash|w)&highs == 0
}

// appendJSONString appends s as a JSON string, escaped as encoding/json does (without its
// HTML escaping); invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	// A read-only view of s, to load eight bytes at a time.
	p := unsafe.Slice(unsafe.StringData(s), len(s))
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(p) && allPlain(binary.LittleEndian.Uint64(p[i:])) {
			i += 8
		}
		for i < len(s) && plainByte[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			// JSON allows them raw, JavaScript source does not: encoding/json escapes them.
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
