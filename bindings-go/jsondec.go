package toolnexus

// A JSON reader for the two documents the engine hands this binding on every run: the run's
// result and each tool call. encoding/json decodes them by reflection and scans each twice
// (to validate, then to decode); on a weather run that was about a sixth of the process's CPU
// (bench/peers/left.md). This reader goes through a document once. Its values are what
// encoding/json gives an `any` (map[string]any, []any, float64, string, bool, nil); the
// documents' own fields are read by key (wiredec.go), and what is rare and nested (a pending
// Request, an Answer) is handed to encoding/json as raw text.

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// numbers says how a value's numbers are decoded.
type numbers uint8

const (
	// floats: every number a float64, as encoding/json decodes into an `any`.
	floats numbers = iota
	// goInts: an integral literal that fits an int is an int, any other number a float64, as
	// a Go tool writes metadata (decodeMetadata).
	goInts
)

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// jsonReader reads one JSON document. The first error sticks: every read after it returns
// a zero value, and end reports it.
type jsonReader struct {
	s     string
	i     int
	depth int
	err   error
}

func (r *jsonReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("invalid JSON at offset %d: %s", r.i, fmt.Sprintf(format, args...))
	}
	r.i = len(r.s)
}

func (r *jsonReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, 0 at the end.
func (r *jsonReader) peek() byte {
	r.space()
	if r.i < len(r.s) {
		return r.s[r.i]
	}
	return 0
}

// end checks that nothing but white space follows the document and returns the first error.
func (r *jsonReader) end() error {
	if r.space(); r.err == nil && r.i < len(r.s) {
		r.fail("unexpected %q after the document", r.s[r.i])
	}
	return r.err
}

// null consumes a null if one is next.
func (r *jsonReader) null() bool {
	if r.peek() == 'n' {
		r.literal("null")
		return true
	}
	return false
}

func (r *jsonReader) literal(word string) {
	if len(r.s)-r.i >= len(word) && r.s[r.i:r.i+len(word)] == word {
		r.i += len(word)
		return
	}
	r.fail("expected %s", word)
}

// members reads an object, calling member with each key; member reads the value. A null
// reads as an object with no members.
func (r *jsonReader) members(member func(key string)) {
	if r.null() {
		return
	}
	if r.peek() != '{' {
		r.fail("expected an object")
		return
	}
	if r.depth++; r.depth > maxDepth {
		r.fail("exceeded max depth")
		return
	}
	r.i++
	if r.peek() == '}' {
		r.i++
		r.depth--
		return
	}
	for r.err == nil {
		if r.peek() != '"' {
			r.fail("expected a key")
			return
		}
		key := r.str()
		if r.peek() != ':' {
			r.fail("expected ':'")
			return
		}
		r.i++
		member(key)
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return
		default:
			r.fail("expected ',' or '}'")
		}
	}
}

// elements reads an array, calling element to read each value. A null reads as no elements.
func (r *jsonReader) elements(element func()) {
	if r.null() {
		return
	}
	if r.peek() != '[' {
		r.fail("expected an array")
		return
	}
	if r.depth++; r.depth > maxDepth {
		r.fail("exceeded max depth")
		return
	}
	r.i++
	if r.peek() == ']' {
		r.i++
		r.depth--
		return
	}
	for r.err == nil {
		element()
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return
		default:
			r.fail("expected ',' or ']'")
		}
	}
}

// value reads any value.
func (r *jsonReader) value(mode numbers) any {
	switch c := r.peek(); {
	case c == '{':
		return r.object(mode)
	case c == '[':
		return r.array(mode)
	case c == '"':
		return r.str()
	case c == 't':
		r.literal("true")
		return true
	case c == 'f':
		r.literal("false")
		return false
	case c == 'n':
		r.literal("null")
		return nil
	case c == '-' || c >= '0' && c <= '9':
		return r.number(mode)
	case c == 0:
		r.fail("unexpected end of the document")
	default:
		r.fail("unexpected %q", c)
	}
	return nil
}

// object reads an object as a map, nil for null.
func (r *jsonReader) object(mode numbers) map[string]any {
	if r.null() {
		return nil
	}
	m := map[string]any{}
	r.members(func(key string) { m[key] = r.value(mode) })
	if r.err != nil {
		return nil
	}
	return m
}

// array reads an array as a slice, nil for null.
func (r *jsonReader) array(mode numbers) []any {
	if r.null() {
		return nil
	}
	a := []any{}
	r.elements(func() { a = append(a, r.value(mode)) })
	if r.err != nil {
		return nil
	}
	return a
}

// numberText reads a number literal as JSON's grammar has it and says whether it is integral.
func (r *jsonReader) numberText() (text string, integral bool) {
	start := r.i
	s := r.s
	i := r.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		r.fail("invalid number")
		return "", false
	}
	integral = true
	if i < len(s) && s[i] == '.' {
		integral = false
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			r.i = i
			r.fail("invalid number")
			return "", false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		integral = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			r.i = i
			r.fail("invalid number")
			return "", false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	r.i = i
	return s[start:i], integral
}

func (r *jsonReader) number(mode numbers) any {
	text, integral := r.numberText()
	if r.err != nil {
		return nil
	}
	if mode == goInts && integral {
		if n, err := strconv.ParseInt(text, 10, 0); err == nil {
			return int(n)
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		r.fail("number %s out of range", text)
		return nil
	}
	return f
}

// integer reads an integral number into an int (0 for null), as encoding/json fills an int.
func (r *jsonReader) integer() int {
	if r.null() {
		return 0
	}
	if c := r.peek(); c != '-' && (c < '0' || c > '9') {
		r.fail("expected a number")
		return 0
	}
	text, integral := r.numberText()
	if r.err != nil {
		return 0
	}
	n, err := strconv.ParseInt(text, 10, 0)
	if !integral || err != nil {
		r.fail("number %s is not an int", text)
	}
	return int(n)
}

// uinteger reads a non-negative integral number into a uint64.
func (r *jsonReader) uinteger() uint64 {
	if c := r.peek(); c < '0' || c > '9' {
		r.fail("expected a non-negative number")
		return 0
	}
	text, integral := r.numberText()
	if r.err != nil {
		return 0
	}
	n, err := strconv.ParseUint(text, 10, 64)
	if !integral || err != nil {
		r.fail("number %s is not a uint64", text)
	}
	return n
}

// boolean reads true or false (false for null).
func (r *jsonReader) boolean() bool {
	switch r.peek() {
	case 't':
		r.literal("true")
		return true
	case 'f':
		r.literal("false")
	case 'n':
		r.literal("null")
	default:
		r.fail("expected a boolean")
	}
	return false
}

// raw reads any value and returns its text.
func (r *jsonReader) raw() string {
	r.space()
	start := r.i
	r.value(floats)
	if r.err != nil {
		return ""
	}
	return r.s[start:r.i]
}

// str reads a string ("" for null). A string with no escapes is a substring of the
// document, not a copy: the strings of a result are most of its text, which is what the
// document is kept alive for.
func (r *jsonReader) str() string {
	switch r.peek() {
	case '"':
	case 'n':
		r.literal("null")
		return ""
	default:
		r.fail("expected a string")
		return ""
	}
	s := r.s
	start := r.i + 1
	i := start
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			r.i = i + 1
			return s[start:i]
		case c == '\\' || c < 0x20:
			return r.unescape(start, i)
		case c < utf8.RuneSelf:
			i++
		default:
			rn, size := utf8.DecodeRuneInString(s[i:])
			if rn == utf8.RuneError && size == 1 {
				return r.unescape(start, i)
			}
			i += size
		}
	}
	r.i = len(s)
	r.fail("unterminated string")
	return ""
}

// unescape finishes the string that starts at start, plain up to i, as encoding/json does:
// escapes decoded, a lone surrogate and every byte that is not UTF-8 a U+FFFD.
func (r *jsonReader) unescape(start, i int) string {
	s := r.s
	b := make([]byte, 0, i-start+16)
	b = append(b, s[start:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			r.i = i + 1
			return string(b)
		case c < 0x20:
			r.i = i
			r.fail("control character %q in a string", c)
			return ""
		case c == '\\':
			if i+1 >= len(s) {
				r.i = i
				r.fail("unterminated string")
				return ""
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rn, ok := hex4(s, i)
				if !ok {
					r.i = i
					r.fail("invalid \\u escape")
					return ""
				}
				i += 4
				if utf16.IsSurrogate(rn) {
					rn2, ok := rune(0), false
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						rn2, ok = hex4(s, i+2)
					}
					if pair := utf16.DecodeRune(rn, rn2); ok && pair != utf8.RuneError {
						rn = pair
						i += 6
					} else {
						rn = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, rn)
			default:
				r.i = i - 1
				r.fail("invalid escape \\%c", e)
				return ""
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			rn, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, rn)
			i += size
		}
	}
	r.i = len(s)
	r.fail("unterminated string")
	return ""
}

// hex4 reads the four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var rn rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		rn = rn<<4 | rune(c)
	}
	return rn, true
}
