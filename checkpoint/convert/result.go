package convert

import "github.com/tensorcast-go/tensorcast/tcast"

// TensorResult is one tensor's line of the conversion report.
type TensorResult struct {
	Name     string  `json:"name"`
	Shape    []int   `json:"shape"`
	Source   string  `json:"source_dtype"`
	DataType string  `json:"datatype,omitempty"` // empty when kept
	Bits     float64 `json:"bits_per_value"`
	// SQNR in dB and max abs error of the cast against the source; SQNR is
	// nil (left out of JSON) when the cast is exact. When finite values
	// were lost (Lost > 0) the error is not finite: SQNR −Inf and
	// MaxAbsErr +Inf, written as null in JSON (MarshalJSON).
	SQNR      *float64 `json:"sqnr_db,omitempty"`
	MaxAbsErr float64  `json:"max_abs_error"`
	BytesIn   int64    `json:"bytes_in"`
	BytesOut  int64    `json:"bytes_out"`
	// Lost counts finite source values that came back NaN or infinite.
	Lost int `json:"nonfinite_outputs,omitempty"`
	// SourceNaN, SourcePosInf and SourceNegInf count the NaN, +Inf and −Inf
	// values of a cast weight's source (counted as the error is measured;
	// zero for kept tensors, which are not read as values).
	SourceNaN    int `json:"source_nan,omitempty"`
	SourcePosInf int `json:"source_pos_inf,omitempty"`
	SourceNegInf int `json:"source_neg_inf,omitempty"`
	// Note says why a tensor was kept or dropped, or that a cast of a
	// quantized source is exact.
	Note string `json:"note,omitempty"`
	// Stored is the dtype the output stores a kept tensor as (a
	// safetensors dtype, or a ggml type in GGUF output): Source, or F32
	// where the source is dequantized or transformed, or the layout keeps
	// it as F32 (a GGUF mix's norms and other 1-D tensors). Empty for cast
	// tensors.
	Stored string `json:"stored_dtype,omitempty"`
	// Dropped reports an input tensor a llama.cpp model file leaves out
	// (Note says why); it has no output.
	Dropped bool `json:"dropped,omitempty"`
	// Reason says why a GGUF mix (or a GGUF.TypeFor rule) gave the tensor its
	// type.
	Reason string `json:"type_reason,omitempty"`
	// Importance says what became of the tensor's importance vector when an
	// importance matrix was given (ImportanceUsed, ImportanceMissing, ...).
	Importance ImportanceStatus `json:"importance,omitempty"`
	// WeightedSQNR is the SQNR in dB with each element's signal and error
	// weighted by its column's importance and, for a GGUF type whose
	// quantizer searches, as that quantizer weighs it (gguf.Weigh): the
	// quantity the quantizer optimised, when the importance was used (nil
	// otherwise or when the cast is exact).
	WeightedSQNR *float64 `json:"weighted_sqnr_db,omitempty"`
	// Rotation is the rotation applied before the cast (Options.Rotate,
	// with its block: "hadamard:32"), "" for none. SQNR, MaxAbsErr and Lost
	// then compare the weight as loaders give it back (rotated back) with
	// the source.
	Rotation string `json:"rotation,omitempty"`
	// SQNRUnrotated is the SQNR in dB of the same cast without the
	// rotation, for rotated weights (nil otherwise or when that cast is
	// exact).
	SQNRUnrotated *float64 `json:"sqnr_unrotated_db,omitempty"`
}

func (r *TensorResult) setErrors(e tcast.Errors) {
	r.SQNR, r.MaxAbsErr, r.Lost = e.SQNR, e.MaxAbs, e.Lost
	r.SourceNaN, r.SourcePosInf, r.SourceNegInf = e.NaN, e.PosInf, e.NegInf
}

// nonFinite returns the weights cast whose source holds NaN or ±Inf, in
// the report's order.
func nonFinite(rs []TensorResult) []tcast.NonFiniteTensor {
	var ts []tcast.NonFiniteTensor
	for _, r := range rs {
		if r.DataType != "" && r.SourceNaN+r.SourcePosInf+r.SourceNegInf > 0 {
			ts = append(ts, tcast.NonFiniteTensor{Name: r.Name, NaN: r.SourceNaN, PosInf: r.SourcePosInf, NegInf: r.SourceNegInf})
		}
	}
	return ts
}

// Result is the report of a conversion.
type Result struct {
	Input    string `json:"input"`
	Output   string `json:"output"`
	Layout   string `json:"layout"`
	DataType string `json:"datatype"`
	// Mix is the GGUF mix that chose the tensors' types, "" for none.
	Mix string `json:"gguf_mix,omitempty"`
	// Imatrix is the importance matrix file given, "" for none.
	Imatrix string `json:"imatrix,omitempty"`
	// ScaleSearch says that the scales were searched (Options.ScaleSearch).
	ScaleSearch bool           `json:"scale_search,omitempty"`
	Tensors     []TensorResult `json:"tensors"`
	BytesIn     int64          `json:"bytes_in"`
	BytesOut    int64          `json:"bytes_out"`
	Seconds     float64        `json:"seconds"`
	// Summary is Summarize's, as Convert returns it.
	Summary *Summary `json:"summary,omitempty"`
	// Generic, for generic GGUF output (general.architecture "tcast", the
	// input's tensor names, no llama.cpp model metadata), says why the
	// output is not a llama.cpp model file ("Options.GGUF.Generic asks for it",
	// config.json's model_type is not one package ggufmodel knows, ...);
	// "" for any other output.
	Generic string `json:"gguf_generic,omitempty"`
	// Warnings are things the conversion did that its caller may not have
	// meant (Warning), each written as its sentence in JSON.
	Warnings []Warning `json:"warnings,omitempty"`
	// DryRun reports a Result of Options.DryRun: nothing was written, and
	// the sizes are those the output would have; no error is measured.
	DryRun bool `json:"dry_run,omitempty"`
}

// Cast returns the number of tensors that were cast.
func (r *Result) Cast() int {
	n := 0
	for _, t := range r.Tensors {
		if t.DataType != "" {
			n++
		}
	}
	return n
}

// Ratio returns bytes in over bytes out.
func (r *Result) Ratio() float64 {
	if r.BytesOut == 0 {
		return 0
	}
	return float64(r.BytesIn) / float64(r.BytesOut)
}

// GBps returns input gigabytes per second.
func (r *Result) GBps() float64 {
	if r.Seconds == 0 {
		return 0
	}
	return float64(r.BytesIn) / r.Seconds / 1e9
}
