package tcast

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNonFinite is matched by the error of a cast or a conversion refused
// because its source holds NaN or ±Inf values (a caller that allows them
// casts them per the block policy of docs/NUMERICS.md instead); errors.As
// gives the *NonFiniteError that names them. Package convert refuses
// checkpoints with it and package castdir single arrays.
var ErrNonFinite = errors.New("weights to cast hold NaN or Inf values")

// NonFiniteTensor is one tensor of a NonFiniteError: its name (empty for
// the single array of a file) and the counts of its NaN, +Inf and −Inf
// values (Errors.NaN, PosInf, NegInf).
type NonFiniteTensor struct {
	Name                string
	NaN, PosInf, NegInf int
}

// NonFiniteError reports the tensors to cast whose source holds NaN or ±Inf
// values, in input order. It matches ErrNonFinite; its message names them
// with their counts and says that no output was written.
type NonFiniteError struct {
	// Input is the file cast or converted (the message starts with it
	// unless it is empty).
	Input string
	// Tensors are the weights, each with its counts: one with an empty
	// name for a file that holds a single array (a .npy file).
	Tensors []NonFiniteTensor
}

func (e *NonFiniteError) Error() string {
	var b strings.Builder
	n := len(e.Tensors)
	if e.Input != "" {
		b.WriteString(e.Input + ": ")
	}
	if n == 1 && e.Tensors[0].Name == "" { // a single array
		t := e.Tensors[0]
		fmt.Fprintf(&b, "holds %d NaN, %d +Inf, %d -Inf values, which make every block holding one NaN in most datatypes; no output was written", t.NaN, t.PosInf, t.NegInf)
		return b.String()
	}
	fmt.Fprintf(&b, "%d %s to cast %s NaN or Inf values, which make every block holding one NaN in most datatypes:", n, plural(n, "weight", "weights"), plural(n, "holds", "hold"))
	for _, t := range e.Tensors {
		fmt.Fprintf(&b, "\n  %s: %d NaN, %d +Inf, %d -Inf", t.Name, t.NaN, t.PosInf, t.NegInf)
	}
	b.WriteString("\nno output was written")
	return b.String()
}

// Unwrap returns ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return ErrNonFinite }

// plural returns one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
