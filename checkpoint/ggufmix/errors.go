package ggufmix

import (
	"errors"
	"strconv"
	"strings"
)

// UnknownMixError reports a mix name Lookup does not know.
type UnknownMixError struct {
	// Name is the name asked for.
	Name string
	// Closest lists up to three known mix names nearest to Name.
	Closest []string
}

// Error returns a message such as
// `unknown mix "Q4_KM" (closest: "Q4_K_M", "Q4_0", "Q4_1")`.
func (e *UnknownMixError) Error() string {
	return "unknown mix " + quote(e.Name) + closest(e.Closest)
}

// OverrideError reports an override (REGEXP=TYPE) that cannot be used.
type OverrideError struct {
	// Value is the override as given ("ffn_down=q7_k").
	Value string
	// Reason describes the problem.
	Reason string
	// Closest lists the nearest known type names for an unknown type.
	Closest []string
	// Generic, when set, is the datatype name of the type asked for
	// ("q8_k"), one that only generic GGUF output (no llama.cpp model)
	// takes.
	Generic string
	// Err is the regular expression's compile error, if that was the
	// problem.
	Err error
}

// Error returns a message such as
// `override "ffn_down=q7_k": unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`.
func (e *OverrideError) Error() string {
	return "override " + quote(e.Value) + ": " + e.Detail()
}

// Detail returns the message without the value, for a caller that names
// it already (the flag package's "invalid value ... for flag"):
// `unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`.
func (e *OverrideError) Detail() string {
	var b strings.Builder
	b.WriteString(e.Reason)
	b.WriteString(closest(e.Closest))
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the regular expression's error, if any.
func (e *OverrideError) Unwrap() error { return e.Err }

// TensorError reports a tensor the rules cannot place: a layer index
// outside the model's layer count, or a model description without the
// layer count a rule needs.
type TensorError struct {
	// Name is the tensor name.
	Name string
	// Reason describes the problem.
	Reason string
	// Err is ErrNoFallback for a type whose block does not divide the
	// rows and that has no replacement, else nil.
	Err error
}

// ErrNoFallback is matched by the *TensorError of a tensor whose rows the
// type's block does not divide, for a type with no replacement (Q1_0);
// an Override of another type for that tensor resolves it.
var ErrNoFallback = errors.New("no fallback type")

// Unwrap returns Err.
func (e *TensorError) Unwrap() error { return e.Err }

// Error returns a message such as
// `tensor "blk.40.ffn_down.weight": layer 40 outside the model's 32 layers`.
func (e *TensorError) Error() string {
	return "tensor " + quote(e.Name) + ": " + e.Reason
}

func quote(s string) string { return strconv.Quote(s) }

func closest(cs []string) string {
	if len(cs) == 0 {
		return ""
	}
	q := make([]string, len(cs))
	for i, c := range cs {
		q[i] = quote(c)
	}
	return " (closest: " + strings.Join(q, ", ") + ")"
}
