package stream

import (
	"bytes"
	"unicode/utf8"
)

// chunkFields are the parts of a chunk the accounting needs.
type chunkFields struct {
	text         []byte // output text of all choices (JSON-escaped on the fast path)
	toolCalls    bool
	finishReason string
	hasUsage     bool
	promptTokens int
	completion   int
}

// maxDepth bounds the nesting the fast scanner follows before it leaves a chunk to
// encoding/json.
const maxDepth = 32

// fastScan does read a chunk without reflection. It handles the common shape of every server
// and returns ok=false for anything else — error chunks, unusual types, keys in other cases,
// non-integer counts, deep nesting or invalid JSON — which then goes through encoding/json, so
// that both paths agree on what they accept. The text it returns stays JSON-escaped: the
// accounting only needs to know whether text is empty, and loops repeat in either form.
func fastScan(b []byte, f *chunkFields) bool {
	s := scan{b: b}
	ok := s.object(0, func(key []byte) bool {
		switch string(key) {
		case "choices":
			return s.choices(f)
		case "usage":
			return s.usage(f)
		case "error":
			return s.null() // any error object goes to the slow path
		case "object":
			v, ok := s.str()
			return ok && !bytes.Equal(v, []byte("error"))
		default:
			return !foldsTo(key, "choices", "usage", "error", "object", "message") && s.skip(1)
		}
	})
	s.ws()
	return ok && s.i == len(s.b)
}

// foldsTo does report whether key equals one of names in another case (encoding/json would
// match it; the fast path leaves such chunks to it).
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if len(key) == len(n) && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

type scan struct {
	b []byte
	i int
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null does consume a null literal.
func (s *scan) null() bool { return s.peek() == 'n' && s.lit("null") }

func (s *scan) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// str does consume a string and return its raw content; escapes are checked, not decoded.
func (s *scan) str() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, true
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return nil, false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return nil, false
					}
				}
				s.i += 6
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		default:
			s.i++
		}
	}
	return nil, false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// strOrNull does consume a string or null.
func (s *scan) strOrNull() ([]byte, bool) {
	if s.peek() == 'n' {
		return nil, s.lit("null")
	}
	return s.str()
}

// integer does consume a JSON number that is an integer (no fraction or exponent).
func (s *scan) integer() (int, bool) {
	s.ws()
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	start := s.i
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if s.i-start >= 15 {
			return 0, false
		}
		n = n*10 + int(s.b[s.i]-'0')
		s.i++
	}
	if s.i == start || (s.b[start] == '0' && s.i-start > 1) {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// number does consume any JSON number.
func (s *scan) number() bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		st := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		return s.i - st
	}
	st := s.i
	if n := digits(); n == 0 || (n > 1 && s.b[st] == '0') {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// object does consume an object, calling field for each key with the scanner at its value;
// field must consume the value.
func (s *scan) object(depth int, field func(key []byte) bool) bool {
	if depth > maxDepth || s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		key, ok := s.str()
		if !ok || bytes.IndexByte(key, '\\') >= 0 || s.peek() != ':' {
			return false
		}
		s.i++
		if !field(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array does consume an array, calling elem with the scanner at each element.
func (s *scan) array(depth int, elem func() bool) bool {
	if depth > maxDepth || s.peek() != '[' {
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// skip does consume any value.
func (s *scan) skip(depth int) bool {
	switch s.peek() {
	case '{':
		return s.object(depth+1, func([]byte) bool { return s.skip(depth + 1) })
	case '[':
		return s.array(depth+1, func() bool { return s.skip(depth + 1) })
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		return s.number()
	}
}

// choices does read the "choices" array (null allowed).
func (s *scan) choices(f *chunkFields) bool {
	if s.peek() == 'n' {
		return s.lit("null")
	}
	return s.array(1, func() bool {
		return s.object(2, func(key []byte) bool {
			switch string(key) {
			case "text":
				v, ok := s.strOrNull()
				f.text = append(f.text, v...)
				return ok
			case "finish_reason":
				v, ok := s.strOrNull()
				if ok && len(v) > 0 {
					if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
						return false // escapes and invalid UTF-8 (encoding/json writes U+FFFD): the slow path decodes them
					}
					f.finishReason = string(v)
				}
				return ok
			case "delta":
				if s.peek() == 'n' {
					return s.lit("null")
				}
				return s.object(3, func(key []byte) bool {
					switch string(key) {
					case "content", "reasoning_content", "reasoning":
						v, ok := s.strOrNull()
						f.text = append(f.text, v...)
						return ok
					case "tool_calls":
						st := s.i
						if !s.skip(3) {
							return false
						}
						v := bytes.TrimSpace(s.b[st:s.i])
						if !bytes.Equal(v, []byte("null")) && !bytes.Equal(v, []byte("[]")) {
							f.toolCalls = true
						}
						return true
					default:
						return !foldsTo(key, "content", "reasoning_content", "reasoning", "tool_calls") && s.skip(3)
					}
				})
			default:
				return !foldsTo(key, "text", "finish_reason", "delta") && s.skip(2)
			}
		})
	})
}

// usage does read the "usage" object (null allowed).
func (s *scan) usage(f *chunkFields) bool {
	if s.peek() == 'n' {
		return s.lit("null")
	}
	f.hasUsage = true
	return s.object(1, func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			n, ok := s.integer()
			f.promptTokens = n
			return ok
		case "completion_tokens":
			n, ok := s.integer()
			f.completion = n
			return ok
		default:
			return !foldsTo(key, "prompt_tokens", "completion_tokens") && s.skip(1)
		}
	})
}
