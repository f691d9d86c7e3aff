package gguf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// KVSyntaxError reports a metadata override ParseKV cannot read.
type KVSyntaxError struct {
	Value  string // the text given
	Reason string
}

func (e *KVSyntaxError) Error() string {
	return fmt.Sprintf("gguf: metadata override %q: %s", e.Value, e.Reason)
}

// maxOverrideString is the longest string value llama-quantize's
// --override-kv holds (127 bytes; its key holds 127 too).
const maxOverrideString = 127

// ParseKV reads a metadata key and value as llama-quantize's --override-kv
// takes them: KEY=TYPE:VALUE with TYPE int, float, bool or str. As
// llama-quantize stores them, an int becomes a uint32 of its absolute
// value, a float a float32, a bool true or false, a str a string of at
// most 127 bytes. Anything else is a *KVSyntaxError naming the value; a
// number that does not fit is one too (llama-quantize would wrap it).
func ParseKV(s string) (KV, error) {
	key, rest, ok := strings.Cut(s, "=")
	bad := func(why string) (KV, error) { return KV{}, &KVSyntaxError{Value: s, Reason: why} }
	switch {
	case !ok:
		return bad("want KEY=TYPE:VALUE (TYPE int, float, bool or str)")
	case key == "":
		return bad("empty key")
	case len(key) > maxOverrideString:
		return bad(fmt.Sprintf("key of %d bytes; llama.cpp holds at most %d", len(key), maxOverrideString))
	}
	typ, val, ok := strings.Cut(rest, ":")
	if !ok {
		return bad("want TYPE:VALUE after '=' (TYPE int, float, bool or str)")
	}
	switch typ {
	case "int":
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < -math.MaxUint32 || n > math.MaxUint32 {
			return bad(fmt.Sprintf("%q is not an integer of at most 32 bits", val))
		}
		if n < 0 {
			n = -n
		}
		return KV{Key: key, Value: Uint32(uint32(n))}, nil
	case "float":
		f, err := strconv.ParseFloat(val, 32)
		if err != nil {
			return bad(fmt.Sprintf("%q is not a float32", val))
		}
		return KV{Key: key, Value: Float32(float32(f))}, nil
	case "bool":
		if val != "true" && val != "false" {
			return bad(fmt.Sprintf("%q is not true or false", val))
		}
		return KV{Key: key, Value: Bool(val == "true")}, nil
	case "str":
		if len(val) > maxOverrideString {
			return bad(fmt.Sprintf("string of %d bytes; llama.cpp holds at most %d", len(val), maxOverrideString))
		}
		return KV{Key: key, Value: String(val)}, nil
	}
	return bad(fmt.Sprintf("type %q is not int, float, bool or str", typ))
}

// SetKV returns kvs with each of sets applied in turn: a key kvs has
// gets the new value in its place, any other is appended.
func SetKV(kvs []KV, sets ...KV) []KV {
	out := append([]KV(nil), kvs...)
	for _, s := range sets {
		i := indexKV(out, s.Key)
		if i < 0 {
			out = append(out, s)
			continue
		}
		out[i] = s
	}
	return out
}

// indexKV returns the index of key in kvs, or −1.
func indexKV(kvs []KV, key string) int {
	for i, kv := range kvs {
		if kv.Key == key {
			return i
		}
	}
	return -1
}
