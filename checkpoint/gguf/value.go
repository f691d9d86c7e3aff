package gguf

import (
	"fmt"
	"strconv"
	"strings"
)

// ValueType is the type id of a GGUF metadata value (enum gguf_type).
type ValueType uint32

// The GGUF metadata value types, with their ids.
const (
	ValueUint8   ValueType = 0
	ValueInt8    ValueType = 1
	ValueUint16  ValueType = 2
	ValueInt16   ValueType = 3
	ValueUint32  ValueType = 4
	ValueInt32   ValueType = 5
	ValueFloat32 ValueType = 6
	ValueBool    ValueType = 7
	ValueString  ValueType = 8
	ValueArray   ValueType = 9
	ValueUint64  ValueType = 10
	ValueInt64   ValueType = 11
	ValueFloat64 ValueType = 12
)

// maxArrayDepth bounds the nesting of arrays of arrays, on read and on
// write. ggml itself rejects nested arrays; @huggingface/gguf allows a
// depth of 4.
const maxArrayDepth = 4

var valueTypeNames = [...]string{
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64",
}

// String returns the lower-case name of the type ("uint32", "string", ...),
// or "ValueType(N)" for an unknown id.
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return "ValueType(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// valid reports whether t is one of the 13 GGUF value types.
func (t ValueType) valid() bool { return t <= ValueFloat64 }

// minSize returns the smallest number of bytes an encoded value of type t
// can occupy (a string is at least its 8-byte length, an array its 4-byte
// element type and 8-byte count).
func (t ValueType) minSize() int64 {
	switch t {
	case ValueUint8, ValueInt8, ValueBool:
		return 1
	case ValueUint16, ValueInt16:
		return 2
	case ValueUint32, ValueInt32, ValueFloat32:
		return 4
	case ValueArray:
		return 12
	default: // uint64, int64, float64, string
		return 8
	}
}

// Value is one typed GGUF metadata value: a scalar, a string, or an array
// of values of one element type (possibly arrays themselves). Values are
// made with the constructors (Uint32, String, Array, ...) or read from a
// file; the zero Value is invalid and cannot be written.
type Value struct {
	typ  ValueType
	elem ValueType
	// v holds the Go value: uint8, int8, uint16, int16, uint32, int32,
	// float32, bool, string, uint64, int64 or float64 for a scalar, a
	// slice of one of those for an array of scalars, or []Value for an
	// array of arrays.
	v any
}

// Uint8 returns a uint8 Value.
func Uint8(x uint8) Value { return Value{typ: ValueUint8, v: x} }

// Int8 returns an int8 Value.
func Int8(x int8) Value { return Value{typ: ValueInt8, v: x} }

// Uint16 returns a uint16 Value.
func Uint16(x uint16) Value { return Value{typ: ValueUint16, v: x} }

// Int16 returns an int16 Value.
func Int16(x int16) Value { return Value{typ: ValueInt16, v: x} }

// Uint32 returns a uint32 Value.
func Uint32(x uint32) Value { return Value{typ: ValueUint32, v: x} }

// Int32 returns an int32 Value.
func Int32(x int32) Value { return Value{typ: ValueInt32, v: x} }

// Float32 returns a float32 Value.
func Float32(x float32) Value { return Value{typ: ValueFloat32, v: x} }

// Bool returns a bool Value.
func Bool(x bool) Value { return Value{typ: ValueBool, v: x} }

// String returns a string Value. GGUF strings are byte strings; keys and
// values are conventionally UTF-8.
func String(x string) Value { return Value{typ: ValueString, v: x} }

// Uint64 returns a uint64 Value.
func Uint64(x uint64) Value { return Value{typ: ValueUint64, v: x} }

// Int64 returns an int64 Value.
func Int64(x int64) Value { return Value{typ: ValueInt64, v: x} }

// Float64 returns a float64 Value.
func Float64(x float64) Value { return Value{typ: ValueFloat64, v: x} }

// Scalar is the set of Go types that map to a GGUF scalar value type and
// can be the elements of an array made by Array.
type Scalar interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | bool | string | uint64 | int64 | float64
}

// Array returns an array Value whose element type follows from T (for
// example []string gives an array of strings). The slice is retained, not
// copied.
func Array[T Scalar](xs []T) Value {
	var elem ValueType
	switch any(xs).(type) {
	case []uint8:
		elem = ValueUint8
	case []int8:
		elem = ValueInt8
	case []uint16:
		elem = ValueUint16
	case []int16:
		elem = ValueInt16
	case []uint32:
		elem = ValueUint32
	case []int32:
		elem = ValueInt32
	case []float32:
		elem = ValueFloat32
	case []bool:
		elem = ValueBool
	case []string:
		elem = ValueString
	case []uint64:
		elem = ValueUint64
	case []int64:
		elem = ValueInt64
	case []float64:
		elem = ValueFloat64
	}
	if xs == nil {
		xs = []T{}
	}
	return Value{typ: ValueArray, elem: elem, v: xs}
}

// ArrayOfArrays returns an array Value whose elements are themselves
// arrays (each with its own element type). It panics if an element is not
// an array Value. The slice is retained, not copied.
func ArrayOfArrays(xs []Value) Value {
	for i, x := range xs {
		if x.typ != ValueArray || x.v == nil {
			panic(fmt.Sprintf("gguf: ArrayOfArrays: element %d is a %v, not an array", i, x.Type()))
		}
	}
	if xs == nil {
		xs = []Value{}
	}
	return Value{typ: ValueArray, elem: ValueArray, v: xs}
}

// Type returns the value type; the zero Value reports ValueUint8.
func (v Value) Type() ValueType { return v.typ }

// Elem returns the element type of an array Value, and 0 (ValueUint8) for
// other values.
func (v Value) Elem() ValueType { return v.elem }

// Valid reports whether v was made by a constructor or read from a file
// (the zero Value is not valid).
func (v Value) Valid() bool { return v.v != nil }

// Len returns the number of elements of an array Value, and 0 for other
// values.
func (v Value) Len() int {
	switch x := v.v.(type) {
	case []uint8:
		return len(x)
	case []int8:
		return len(x)
	case []uint16:
		return len(x)
	case []int16:
		return len(x)
	case []uint32:
		return len(x)
	case []int32:
		return len(x)
	case []float32:
		return len(x)
	case []bool:
		return len(x)
	case []string:
		return len(x)
	case []uint64:
		return len(x)
	case []int64:
		return len(x)
	case []float64:
		return len(x)
	case []Value:
		return len(x)
	}
	return 0
}

// Any returns the Go value: uint8, int8, uint16, int16, uint32, int32,
// float32, bool, string, uint64, int64 or float64 for a scalar; a slice of
// one of those for an array of scalars ([]string for an array of strings);
// []Value for an array of arrays; nil for the zero Value. Slices are
// shared with v, not copied.
func (v Value) Any() any { return v.v }

// Str returns the string held by a string Value.
func (v Value) Str() (string, bool) {
	s, ok := v.v.(string)
	return s, ok
}

// Uint returns the value of an unsigned integer scalar (uint8, uint16,
// uint32 or uint64) widened to uint64.
func (v Value) Uint() (uint64, bool) {
	switch x := v.v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	}
	return 0, false
}

// Int returns the value of a signed integer scalar (int8, int16, int32 or
// int64) widened to int64.
func (v Value) Int() (int64, bool) {
	switch x := v.v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// Float returns the value of a float32 or float64 scalar as a float64.
func (v Value) Float() (float64, bool) {
	switch x := v.v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// String formats the value for display, e.g. `uint32(32)`,
// `string("llama")`, `[3]int32{1 2 3}`. Arrays longer than 8 elements are
// abbreviated.
func (v Value) String() string {
	if v.v == nil {
		return "<invalid>"
	}
	if v.typ != ValueArray {
		if s, ok := v.v.(string); ok {
			return "string(" + strconv.Quote(s) + ")"
		}
		return fmt.Sprintf("%v(%v)", v.typ, v.v)
	}
	n := v.Len()
	s := fmt.Sprintf("[%d]%v{", n, v.elem)
	for i := range min(n, 8) {
		if i > 0 {
			s += " "
		}
		s += v.elemString(i)
	}
	if n > 8 {
		s += " ..."
	}
	return s + "}"
}

// Summary formats the value for a report: a string as it is, a scalar as
// its number or bool (`32`, `1e-05`, `true`), an array as its length and
// element type followed by as many of its first elements as fit in about
// 60 characters (`[3]int32{1 2 3}`, `[392]string{"!" "\"" "#" ...}`, or
// `[392]string` when not even the first element fits).
func (v Value) Summary() string {
	if v.v == nil {
		return "<invalid>"
	}
	if v.typ != ValueArray {
		if s, ok := v.v.(string); ok {
			return s
		}
		if f, ok := v.Float(); ok {
			bits := 64
			if v.typ == ValueFloat32 {
				bits = 32
			}
			return strconv.FormatFloat(f, 'g', -1, bits)
		}
		return fmt.Sprint(v.v)
	}
	const width = 60
	n := v.Len()
	head := fmt.Sprintf("[%d]%v", n, v.elem)
	var elems []string
	size := len(head) + 2
	for i := range n {
		e := v.elemString(i)
		if size+len(e)+1 > width {
			break
		}
		elems = append(elems, e)
		size += len(e) + 1
	}
	switch {
	case n == 0:
		return head + "{}"
	case len(elems) == 0:
		return head
	case len(elems) < n:
		elems = append(elems, "...")
	}
	return head + "{" + strings.Join(elems, " ") + "}"
}

// elemString formats element i of an array Value.
func (v Value) elemString(i int) string {
	switch x := v.v.(type) {
	case []string:
		return strconv.Quote(x[i])
	case []Value:
		return x[i].String()
	case []uint8:
		return strconv.FormatUint(uint64(x[i]), 10)
	case []int8:
		return strconv.FormatInt(int64(x[i]), 10)
	}
	return fmt.Sprint(indexAny(v.v, i))
}

// indexAny returns element i of a scalar slice held in an array Value.
func indexAny(s any, i int) any {
	switch x := s.(type) {
	case []uint16:
		return x[i]
	case []int16:
		return x[i]
	case []uint32:
		return x[i]
	case []int32:
		return x[i]
	case []float32:
		return x[i]
	case []bool:
		return x[i]
	case []uint64:
		return x[i]
	case []int64:
		return x[i]
	case []float64:
		return x[i]
	}
	return nil
}

// KV is one metadata key/value pair.
type KV struct {
	Key   string
	Value Value
}
