package convert

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/internal/names"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// DataTypeOrMix resolves a datatype name for layout l, the way Options want
// it: a datatype of the layout (DataType), and, when l writes GGUF, also a
// llama-quantize mix (GGUF.Mix): "q4_k" is both the Q4_K datatype and the
// Q4_K_M mix (llama-quantize's alias), "Q4_K_M" only a mix, "mxfp4" only a
// datatype. At least one of the two is set when err is nil.
//
// A name that is neither gives, for GGUF output, an *UnknownDataTypeError
// whose closest names are drawn from the datatypes and the mixes alike (so
// "q4km" suggests Q4_K_M); for other layouts, the layout's error
// (a *layout.DataTypeError or tcast's lookup error).
func DataTypeOrMix(l layout.Layout, name string) (*tcast.DataType, ggufmix.Mix, error) {
	dt, err := layout.DataType(l, name)
	if l.Container() != layout.GGUF {
		return dt, ggufmix.Mix{}, err
	}
	mix, mixErr := ggufmix.Lookup(name)
	if err == nil || mixErr == nil {
		return dt, mix, nil
	}
	var de *layout.DataTypeError
	if !errors.As(err, &de) || de.Err == nil {
		// A datatype tcast knows that the layout cannot hold (nvfp4).
		return nil, ggufmix.Mix{}, &UnknownDataTypeError{Layout: l.Name(), Name: name, Known: true, Mixes: ggufMixNames(), Err: err}
	}
	mixes := ggufMixNames()
	candidates := slices.Clone(mixes)
	for _, d := range de.Accepted {
		// Names are case-insensitive: a type that is also a mix (q8_0,
		// tq1_0) is offered once.
		if !slices.ContainsFunc(mixes, func(m string) bool { return strings.EqualFold(m, d) }) {
			candidates = append(candidates, d)
		}
	}
	return nil, ggufmix.Mix{}, &UnknownDataTypeError{Layout: l.Name(), Name: name, DataTypes: de.Accepted, Mixes: mixes,
		Closest: names.ClosestSpelling(name, candidates, 3), Err: err}
}

// ggufMixNames lists llama-quantize's mix names the ggufmix package knows.
func ggufMixNames() []string {
	var out []string
	for _, m := range ggufmix.Mixes() {
		out = append(out, m.String())
	}
	return out
}

// UnknownDataTypeError reports a name DataTypeOrMix takes for GGUF output
// that is neither a datatype of the layout nor a llama-quantize mix.
type UnknownDataTypeError struct {
	Layout string // the layout's name ("gguf")
	Name   string // the name asked for
	// Known is set when Name is a datatype tcast knows but the layout
	// cannot hold (Err says so).
	Known     bool
	DataTypes []string // the datatypes the layout takes
	Mixes     []string // the mixes it takes
	Closest   []string // datatypes and mixes close to Name
	Err       error    // the layout's error for the datatype
}

func (e *UnknownDataTypeError) Error() string {
	if e.Known {
		return fmt.Sprintf("%v; or a GGUF mix: %s", e.Err, strings.Join(e.Mixes, ", "))
	}
	msg := fmt.Sprintf("layout %s: unknown datatype or GGUF mix %q", e.Layout, e.Name)
	if len(e.Closest) > 0 {
		msg += fmt.Sprintf(" (closest: %s)", strings.Join(e.Closest, ", "))
	}
	return msg + fmt.Sprintf("; it takes the datatypes %s, and the mixes %s", strings.Join(e.DataTypes, ", "), strings.Join(e.Mixes, ", "))
}

// Unwrap returns the layout's error for the datatype.
func (e *UnknownDataTypeError) Unwrap() error { return e.Err }
