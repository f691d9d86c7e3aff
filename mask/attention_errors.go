package mask

import (
	"errors"
	"fmt"
)

// ErrAttentionInput is matched by every *InputError: an attention-mask form
// or transformation argument that is malformed (cu_seqlens that decrease, a
// length beyond the sequence, a segment ID below −1, offsets of the wrong
// count, ...).
var ErrAttentionInput = errors.New("mask: bad attention mask input")

// InputError reports a malformed argument of an attention-mask builder or
// transformation, naming the argument, the offending index and its value.
type InputError struct {
	// Op is the builder or transformation: "from cu_seqlens", "causal", ...
	Op string
	// Arg names the argument: "cu_seqlens_q", "lengths", "offsets", ...
	Arg string
	// Index is the offending element of Arg, or -1 when the argument as a
	// whole is wrong (its length, its rank).
	Index int
	// Value is the offending element (or the argument's length or size when
	// Index is -1).
	Value int64
	// Reason says what is wrong.
	Reason string
}

func (e *InputError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("mask: %s: %s: %s", e.Op, e.Arg, e.Reason)
	}
	return fmt.Sprintf("mask: %s: %s[%d] = %d: %s", e.Op, e.Arg, e.Index, e.Value, e.Reason)
}

// Is reports whether target is ErrAttentionInput.
func (e *InputError) Is(target error) bool { return target == ErrAttentionInput }

// ErrNotRepresentable is matched by every *ConversionError: the attention
// mask has no exact representation in the requested form (a pairwise mask
// that is not block-diagonal has no segment IDs, two sequences in a row have
// no padding mask, a sequence split in two has no cu_seqlens, ...).
var ErrNotRepresentable = errors.New("mask: attention mask not representable in that form")

// ConversionError reports a conversion between attention-mask forms that is
// undefined for the value at hand, with the first place that shows it.
type ConversionError struct {
	// From is the form the value was built from, To the requested one.
	From, To Form
	// Batch is the batch row where the conversion fails, or -1.
	Batch int
	// Index is the query or key index (as Reason says) in that row, or -1.
	Index int
	// Reason says why the value has no such form.
	Reason string
}

func (e *ConversionError) Error() string {
	s := fmt.Sprintf("mask: attention %s → %s", e.From, e.To)
	if e.Batch >= 0 {
		s += fmt.Sprintf(": batch %d", e.Batch)
	}
	if e.Index >= 0 {
		s += fmt.Sprintf(", index %d", e.Index)
	}
	return s + ": " + e.Reason
}

// Is reports whether target is ErrNotRepresentable.
func (e *ConversionError) Is(target error) bool { return target == ErrNotRepresentable }
