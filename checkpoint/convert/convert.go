// Package convert casts the weights of a checkpoint to a datatype and writes
// them in a loader layout (package layout): safetensors layouts (tcast,
// compressed-tensors, gpt-oss, modelopt, fp8-block) and GGUF alike.
//
// The input is any checkpoint package load opens, quantized ones included
// (their weights are dequantized exactly, then cast). Tensors are read from
// the memory-mapped input, cast in parallel and written in parallel, each
// piece by the worker that made it, at its place in the output, which the
// layout fixes before any data is written; they are finished in input
// order, so peak memory stays within (workers + 1) × the largest tensor. A
// weight the layout streams (layout.Streamer: the tcast layout for the
// datatypes the one-pass kernels cast, and the gguf layout) from a plain
// BF16, F16 or F32 source goes through the pipeline of pipeline.go: one
// pass over the data a cache-sized chunk at a time (widen, cast, dequantize
// and measure), shared by all workers, with only the pieces in flight in
// memory. The output (one
// file, or a directory of weights, shards, index and config files) is built
// under a temporary name beside its destination and published with one
// rename: it appears whole or not at all, also when it replaces an earlier
// output, and never mixes old and new files. No input file is ever written:
// an output that is an input, holds one, or would replace a config file of
// the input is refused.
package convert

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tensorcast-go/tensorcast/internal/shape"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/internal/ordered"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Options control Convert. The zero value, with a DataType, casts the default
// choice of weights along their last axis in the tcast layout with floor
// scales on all cores, and refuses to replace an existing output.
type Options struct {
	// DataType is the datatype to cast to; see layout.DataType for the
	// names a layout takes. It is required, except for a Layout configured
	// with pruning (layout.Pruner): nil then prunes without quantizing, each
	// weight keeping its source's float format (bfloat16, float16, float32;
	// float32 for any other source).
	DataType *tcast.DataType
	// Layout is the output layout; nil means the tcast layout.
	Layout layout.Layout
	// Include and Exclude override the default choice of tensors to cast:
	// a name matching Include is cast (it is an error if it cannot be), a
	// name matching Exclude is kept. Exclude wins.
	Include, Exclude *regexp.Regexp
	// Axis is the scaled axis, as tcast.Options.Axis: 0 (the zero value) and
	// -1 mean the last axis, tcast.FirstAxis the first.
	Axis int
	// Mode chooses power-of-two scales.
	Mode scale.Mode
	// Workers is the number of tensors cast at once; 0 means all cores.
	Workers int
	// Force replaces an existing output (as a whole).
	Force bool
	// ShardSize, when positive, splits safetensors output into shards of at
	// most this many bytes of tensor data (a larger tensor gets a shard of
	// its own) with a model.safetensors.index.json, in the output directory.
	ShardSize int64
	// Rename, when set, gives the output name of each logical tensor (GGUF
	// names hold at most 63 bytes); names it returns unchanged keep theirs.
	// The renames are recorded (layout.KeyRenamed) so that Verify pairs the
	// tensors.
	Rename func(name string) string
	// Progress, when set, is called after each tensor is written, from one
	// goroutine.
	Progress func(Progress)
	// Pruning, when set, gives the pruning options of each tensor cast to
	// an N:M sparse datatype, or pruned for a Layout configured with
	// pruning (scores or Wanda's activation norms, see
	// tcast.Options.Pruning), by its name and the shape it is cast in; nil
	// prunes by magnitude. It may be called from several goroutines.
	Pruning func(name string, shape []int) (sparsity.Options, error)
	// GGUFGeneric writes GGUF output under the input's tensor names without
	// llama.cpp's model metadata, with general.architecture "tcast", also
	// when config.json names an architecture package ggufmodel knows. By
	// default such a checkpoint becomes the model file llama.cpp loads: GGUF
	// tensor names, hyper-parameters and tokenizer (see ggufmodel).
	GGUFGeneric bool
	// GGUFPre names the llama.cpp pre-tokenizer of a byte-level BPE
	// tokenizer that ggufmodel does not recognise from tokenizer.json.
	GGUFPre string
	// GGUFMix, when not the zero Mix, gives GGUF output llama-quantize's
	// per-tensor types for that mix (package ggufmix): each tensor's ggml
	// type and the reason for it come from the mix's rules (by the
	// tensor's output name and shape, the model's layer and head counts),
	// a row length the type's block does not divide falls back to a type
	// that fits, and general.file_type is the mix's. DataType is then
	// optional: when both are set (a name that is a mix and a type, such
	// as q8_0 or q4_k, an alias of Q4_K_M), the mix applies to a llama.cpp
	// model file (a known architecture, or a GGUF input with one) and
	// DataType to generic GGUF output.
	GGUFMix ggufmix.Mix
	// GGUFPure gives every weight the mix quantizes the mix's base type
	// (with the row-length fallback), as llama-quantize --pure.
	GGUFPure bool
	// TypeFor overrides the type of GGUF output tensors by name (-type-for
	// RE=TYPE; the first match wins). With a mix they apply to the tensors
	// the mix quantizes, before the row-length fallback; without one, to
	// the weights cast, whose rows the type's block must divide.
	TypeFor []ggufmix.Override
	// DataTypeName is the name DataType was asked for (tcast convert's
	// -dtype), for messages: one that differs from DataType.Name() (mxfp4
	// for mxfp4e2) is given as the user wrote it, with the datatype's name
	// after it ("mxfp4 (mxfp4e2)"). Optional.
	DataTypeName string
	// Imatrix, when set, gives each weight cast to a GGUF type whose
	// quantizer searches (gguf.Searches: the K-quants, IQ4_NL, IQ4_XS, Q4_0,
	// Q4_1, Q5_0, Q5_1) its importance vector, found by its output name; a weight the matrix
	// has no entry for is quantized without one, and the report says so
	// (TensorResult.Importance). The output gets llama-quantize's
	// quantize.imatrix.* keys. Other layouts take it with a datatype that
	// searches (a codebook datatype of several tables, see ImatrixApplies),
	// whose subtiles then choose their tables by importance-weighted error
	// along the weight's rows; a weight's entry is found by the GGUF name
	// of its source tensor when config.json names an architecture package
	// ggufmodel knows, else by its own name.
	Imatrix *imatrix.Imatrix
	// Rotate, when not the zero Rotation, rotates each cast weight's values
	// along the scaled axis before the cast, in blocks of Rotate.Block (0:
	// the datatype's block along that axis, or rotate.DefaultBlock for a
	// datatype scaled per tensor or channel): TensorCast's incoherence
	// processing. The layout records it (layout.KeyRotated) and package
	// load undoes it, so that readers of the output (tcast decompress,
	// verify, load.Checkpoint.Float32) get the weights in their own
	// orientation. Only layouts that record it (layout.RecordsRotation:
	// tcast) take it. The report's SQNR is measured against the weights
	// before rotation, and TensorResult.SQNRUnrotated gives the SQNR of the
	// same cast without it (one more cast of each weight), which the layout
	// records too (layout.RotationInfo.SQNRUnrotated) for tcast report.
	Rotate rotate.Rotation
	// ScaleSearch casts every weight with tcast.Options.ScaleSearch: each
	// block of a datatype whose scales come by rule (MX, NVFP4, integer
	// groups, FP8; tcast.DataType.SearchesScales) tries a few candidate
	// scales around the rule's and keeps the one of least squared error,
	// weighted by the weight's importance vector when Imatrix is given
	// (docs/NUMERICS.md §11). Only the stored scale values change, so every
	// loader reads the output as it reads a plain cast; the output's
	// metadata records it (layout.KeyScaleSearch). Check refuses it with a
	// datatype it would not change and with GGUF output, whose quantizers
	// are llama.cpp's.
	ScaleSearch bool
	// AllowNonFinite casts weights whose source holds NaN or ±Inf values
	// per the block policy of docs/NUMERICS.md (a block holding one
	// becomes NaN as a whole in most datatypes), with a warning that names
	// them. By default (false) Convert refuses such a checkpoint with a
	// *NonFiniteError, before its output appears. Kept tensors are copied
	// as they are, NaN and Inf included, and never refused.
	AllowNonFinite bool
}

// ErrNonFinite is matched by the error of Convert for weights to cast
// whose source holds NaN or ±Inf values (Options.AllowNonFinite unset);
// errors.As gives the *NonFiniteError that names them. It is
// tcast.ErrNonFinite, which tcast cast's refusal matches too.
var ErrNonFinite = tcast.ErrNonFinite

// NonFiniteTensor is one weight of a NonFiniteError: its name as the report
// and Options.Exclude know it (the output name: the input's, unless renamed
// by Options.Rename or for a llama.cpp model file) and the counts of its
// NaN, +Inf and −Inf values.
type NonFiniteTensor = tcast.NonFiniteTensor

// NonFiniteError reports the weights to cast whose source holds NaN or ±Inf
// values, in input order (tcast.NonFiniteError). It matches ErrNonFinite,
// and its message says what to do: -allow-nonfinite
// (Options.AllowNonFinite) or -exclude.
type NonFiniteError = tcast.NonFiniteError

// plural returns one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OptionError reports options of Convert that do not go together, named
// by the tcast convert flag that sets them: the message is the flag, then
// the reason, which says what to do ("-imatrix applies to GGUF output:
// add -layout gguf").
type OptionError struct {
	// Flag is the flag of the option ("-type-for").
	Flag string
	// Subject is what the flag is refused for when the sentence is about
	// it (a datatype), or "": the message is then "FLAG: SUBJECT REASON"
	// ("-scale-search: bfloat16 has no scale ...").
	Subject string
	// Reason continues the sentence after the flag (or the subject).
	Reason string
	// Err is a sentinel the error also matches (ErrImatrixUnused), or nil.
	Err error
}

func (e *OptionError) Error() string {
	if e.Subject != "" {
		return e.Flag + ": " + e.Subject + " " + e.Reason
	}
	return e.Flag + " " + e.Reason
}

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// Check reports options that do not go together and need no input to
// tell, as an *OptionError: the GGUF options (GGUFMix, GGUFPure, TypeFor,
// Imatrix) without a GGUF layout, except Imatrix with a datatype that
// searches (ImatrixApplies). Convert calls it before it reads anything;
// Imatrix is only tested for nil, so a caller may check before it reads the
// matrix. Layout nil is the tcast layout.
func (o *Options) Check() error {
	if err := o.checkRotate(); err != nil {
		return err
	}
	if err := o.checkScaleSearch(); err != nil {
		return err
	}
	if o.Layout != nil && o.Layout.Container() == layout.GGUF {
		return nil
	}
	if o.Imatrix != nil {
		if err := imatrixApplies(o.Layout, o.DataType, o.dataTypeLabel(), o.ScaleSearch); err != nil {
			return err
		}
	}
	if !o.GGUFMix.IsZero() {
		return &OptionError{Flag: "-dtype", Reason: o.GGUFMix.String() + " names a GGUF mix: add -layout gguf"}
	}
	for _, f := range []struct {
		flag string
		set  bool
	}{{"-type-for", len(o.TypeFor) > 0}, {"-gguf-pure", o.GGUFPure}} {
		if f.set {
			return &OptionError{Flag: f.flag, Reason: "applies to GGUF output: add -layout gguf"}
		}
	}
	return nil
}

// ErrRotateUnrecorded is matched by the error of Convert for -rotate with a
// layout that cannot record the rotation (layout.RecordsRotation).
var ErrRotateUnrecorded = errors.New("the layout cannot record a rotation")

// checkRotate refuses Rotate where the output could not say that its
// weights are rotated, or with options that do not go with it.
func (o *Options) checkRotate() error {
	if o.Rotate.IsZero() {
		return nil
	}
	name := "tcast"
	if o.Layout != nil {
		name = o.Layout.Name()
		if !layout.RecordsRotation(o.Layout) {
			return &OptionError{Flag: "-rotate", Err: ErrRotateUnrecorded,
				Reason: "rotates the weights before the cast, which only the tcast layout records (so that tcast decompress, verify and load rotate them back); the " + name + " layout's loaders would take the rotated values for the weights: drop -rotate, or write -layout tcast"}
		}
	}
	if o.Imatrix != nil {
		return &OptionError{Flag: "-rotate", Reason: "does not go with -imatrix: an importance matrix weights the columns of the unrotated weight, which a rotation mixes; drop one of them"}
	}
	if o.DataType == nil {
		return &OptionError{Flag: "-rotate", Reason: "rotates weights before a cast: name the datatype with -dtype"}
	}
	if o.Pruning != nil {
		return &OptionError{Flag: "-rotate", Reason: "does not go with pruning scores (-sparsity-criterion wanda): they score the unrotated weight's columns, which a rotation mixes; drop one of them"}
	}
	return nil
}

// ErrScaleSearchUnused is matched by the error of Convert for ScaleSearch
// where it would change nothing: a datatype without scales chosen by rule
// (tcast.DataType.SearchesScales), no datatype, or GGUF output.
var ErrScaleSearchUnused = errors.New("-scale-search would change nothing")

// checkScaleSearch refuses ScaleSearch where no weight would be cast with
// a searched scale.
func (o *Options) checkScaleSearch() error {
	if !o.ScaleSearch {
		return nil
	}
	var why, subject string
	switch {
	case o.Layout != nil && o.Layout.Container() == layout.GGUF:
		why = "does not apply to -layout gguf, whose types are quantized by llama.cpp's own quantizers (the K-quants and IQ types search already, weighted by -imatrix): drop -scale-search, or write another layout"
	case o.DataType == nil:
		why = "searches the scales of a cast: name the datatype with -dtype"
	case !o.DataType.SearchesScales():
		subject = o.dataTypeLabel()
		why = "has no scale chosen by rule to search (it has no scale, a zero point, subtile offsets or a codebook): drop -scale-search, or choose an MX, NVFP4, symmetric integer-group or FP8 datatype (mxfp4, nvfp4, int4_g128, fp8e4_block128, ...)"
	default:
		return nil
	}
	return &OptionError{Flag: "-scale-search", Err: ErrScaleSearchUnused, Subject: subject, Reason: why}
}

// dataTypeLabel names DataType for messages as the user asked for it:
// "mxfp4 (mxfp4e2)" when DataTypeName is another name of it, else its name
// ("" for none).
func (o *Options) dataTypeLabel() string {
	if o.DataType == nil {
		return ""
	}
	if n := o.DataTypeName; n != "" && !strings.EqualFold(n, o.DataType.Name()) {
		return n + " (" + o.DataType.Name() + ")"
	}
	return o.DataType.Name()
}

// Rewrite returns a Rename function that applies each rule in turn: a
// regular expression and its replacement, as regexp.ReplaceAllString.
func Rewrite(rules []RenameRule) func(string) string {
	return func(name string) string {
		for _, r := range rules {
			name = r.Pattern.ReplaceAllString(name, r.Replace)
		}
		return name
	}
}

// RenameRule is one rule of Rewrite.
type RenameRule struct {
	Pattern *regexp.Regexp
	Replace string
}

// Progress reports how far a conversion has come.
type Progress struct {
	Tensors, TotalTensors int
	Bytes, TotalBytes     int64 // input bytes done and in all
	Elapsed               time.Duration
}

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
	// Reason says why a GGUF mix (or a -type-for rule) gave the tensor its
	// type.
	Reason string `json:"type_reason,omitempty"`
	// Importance says what became of the tensor's importance vector when an
	// importance matrix was given (ImportanceUsed, ImportanceMissing, ...).
	Importance string `json:"importance,omitempty"`
	// WeightedSQNR is the SQNR in dB with each element's signal and error
	// weighted by its column's importance, the quantity the quantizer
	// optimised, when the importance was used (nil otherwise or when the
	// cast is exact).
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

func (r *TensorResult) setErrors(e Errors) {
	r.SQNR, r.MaxAbsErr, r.Lost = e.SQNR, e.MaxAbs, e.Lost
	r.SourceNaN, r.SourcePosInf, r.SourceNegInf = e.NaN, e.PosInf, e.NegInf
}

// nonFinite returns the weights cast whose source holds NaN or ±Inf, in
// the report's order.
func nonFinite(rs []TensorResult) []NonFiniteTensor {
	var ts []NonFiniteTensor
	for _, r := range rs {
		if r.DataType != "" && r.SourceNaN+r.SourcePosInf+r.SourceNegInf > 0 {
			ts = append(ts, NonFiniteTensor{Name: r.Name, NaN: r.SourceNaN, PosInf: r.SourcePosInf, NegInf: r.SourceNegInf})
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
	// output is not a llama.cpp model file ("-gguf-generic asks for it",
	// config.json's model_type is not one package ggufmodel knows, ...);
	// "" for any other output.
	Generic string `json:"gguf_generic,omitempty"`
	// Warnings are things the conversion did that the user may not have
	// meant, each a sentence that says what to do: generic GGUF output
	// nobody asked for, an importance matrix with entries for no tensor,
	// a -type-for, -include or -exclude pattern that matches no tensor,
	// quantized weights cast again. The tcast CLI prints them on stderr.
	Warnings []string `json:"warnings,omitempty"`
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

// ErrNothingCast is matched by the error of Convert when no tensor could be
// cast; the error says why each kind of tensor was kept.
var ErrNothingCast = errors.New("no tensor was cast")

// ErrUnsafeOutput is matched by the error of Convert and Decompress for an
// output that would write over or inside their input.
var ErrUnsafeOutput = atomicfile.ErrInput

// keepByDefault names the tensors people expect a conversion to leave alone:
// biases, norms, embeddings and the output head.
var keepByDefault = regexp.MustCompile(`(?i)(bias|norm|embed|lm_head|wte|wpe|\.ln_|_ln\b|layernorm|batchnorm|\.bn|running_|gamma|beta)`)

// decision is what the plan does with one logical tensor.
type decision struct {
	info   load.Info       // Name is the output name
	source string          // the tensor's name in the input
	dt     *tcast.DataType // the datatype cast to
	cast   bool
	shape  []int // the shape cast (transposed for a Transposer layout)
	swap   bool
	specs  []layout.Spec
	meta   map[string]string
	result TensorResult
	index  int     // in the plan's tensors, which the report keeps
	st     *stream // set when the pipeline streams the weight
	conv   int     // in the plan's converted, when cast
	zeros  int64   // of the written values, once cast
	// For a GGUF model file (package ggufmodel): the change of the values on
	// their way, whether a kept tensor is stored as F32, and the bytes of a
	// tensor computed rather than read (source "").
	xform ggufmodel.Transform
	f32   bool
	data  []byte
	// For GGUF output: the mix's choice for the tensor (nil without a mix)
	// and the importance vector its quantizer takes (nil for none), one per
	// impRows rows.
	mix     *ggufmix.Decision
	imp     []float32
	impRows int
	// rot is the rotation of the weight's values before the cast (with its
	// block), along axis index rotAxis of shape; zero for none.
	rot     rotate.Rotation
	rotAxis int
}

// plan decides every tensor and declares the output.
type plan struct {
	in        *load.Checkpoint
	opts      *Options
	lay       layout.Layout
	tensors   []*decision
	specs     []layout.Spec
	meta      map[string]string
	weights   map[string][]string
	swapped   []string
	converted []layout.Converted
	kept      []string
	files     map[string][]byte
	out       *writer // the output, once created
	prune     layout.Pruning
	pruned    bool // the layout prunes (prune is set)
	// model describes the llama.cpp model file the GGUF output is, nil for
	// generic GGUF and safetensors output; ggufKV is the typed metadata the
	// GGUF file starts with (the model's, a GGUF input's, or the generic
	// keys, which generic reports); meta then holds only our tcast.* keys.
	model   *ggufmodel.Model
	ggufKV  []gguf.KV
	generic bool
	dropped []dropped // input tensors the model file leaves out
	// mixed reports that Options.GGUFMix chooses the types (mixApplies).
	mixed bool
	// genericWhy says why the GGUF output is generic (Result.Generic).
	genericWhy string
	// warnings are the Result's, as the plan finds them.
	warnings []string
	// impNames maps Hugging Face names to the GGUF names an importance
	// matrix holds, for output that is not GGUF (nil: names as they are).
	impNames *ggufmodel.Model
	// rotated records the rotated weights (layout.KeyRotated).
	rotated map[string]layout.RotationInfo
}

// warn adds a warning to the conversion's Result.
func (p *plan) warn(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

// storedBits is what a cast weight of the given shape costs per value in the
// output: every byte of every tensor the layout stores for it (values, scales,
// masks, meta, shapes), so that a sparse weight counts its kept values only.
func storedBits(bytes int64, shapeOf []int) float64 {
	n, _, ok := shape.Elements(shapeOf)
	if !ok || n == 0 {
		return 0
	}
	return float64(8*bytes) / float64(n)
}

// sourceBits is what a kept tensor costs per value in the output: its own
// dtype's width, or 32 for a quantized tensor (kept dequantized to F32).
func sourceBits(info *load.Info) float64 {
	if info.DType != 0 {
		return float64(info.DType.BitSize())
	}
	return 32
}

// requantized starts the note of a weight whose quantized source is cast
// again.
const requantized = "requantized from"

// warnRequantized warns when the report holds weights whose quantized
// source was quantized again (not exactly), naming their source types.
func (p *plan) warnRequantized(rs []TensorResult) {
	n := 0
	var types []string
	for _, r := range rs {
		if r.DataType != "" && strings.HasPrefix(r.Note, requantized) {
			n++
			if !slices.Contains(types, r.Source) {
				types = append(types, r.Source)
			}
		}
	}
	if n > 0 {
		p.warn("%d weights of the input were already quantized (%s) and were quantized again to %s: the errors add up, and the report's SQNR is measured against the dequantized input, not the original weights; convert the unquantized checkpoint when there is one",
			n, strings.Join(types, ", "), p.dataTypeName())
	}
}

// decide reports whether tensor info is cast and, if not, why. An error is a
// tensor Include asked for that cannot be cast.
func (p *plan) decide(d *decision) error {
	info, opts := &d.info, p.opts
	included := opts.Include != nil && opts.Include.MatchString(info.Name)
	keep := func(why string) error {
		if included && !(opts.Exclude != nil && opts.Exclude.MatchString(info.Name)) {
			return fmt.Errorf("tensor %s matches -include but cannot be cast: %s", info.Name, why)
		}
		d.result.Note = "kept: " + why
		return nil
	}
	rank := len(info.Shape)
	var dt *tcast.DataType
	switch {
	case !info.Float:
		return keep("not a float tensor")
	case opts.Exclude != nil && opts.Exclude.MatchString(info.Name):
		return keep("excluded")
	case rank == 0:
		return keep("a scalar")
	case p.mixed:
		var err error
		if dt, err = p.decideMix(d, keep); dt == nil {
			return err
		}
	case included:
	case rank < 2:
		return keep("fewer than 2 dimensions")
	case keepByDefault.MatchString(info.Name):
		return keep("bias, norm, embedding or output head")
	}
	axis, ok := tcast.AxisIndex(opts.Axis, rank)
	if !ok {
		return keep(fmt.Sprintf("-axis %d is out of range for rank %d", opts.Axis, rank))
	}
	if dt == nil {
		dt = p.dataTypeOf(info)
		if len(opts.TypeFor) > 0 && p.lay.Container() == layout.GGUF {
			var err error
			if dt, err = p.overrideType(d, dt); err != nil {
				return err
			}
		}
	}
	d.dt = dt
	d.shape, d.swap = info.Shape, false
	if t, ok := p.lay.(layout.Transposer); ok && rank >= 2 && t.Transposed(info.Name, rank) {
		d.shape, d.swap = layout.SwapLast2(info.Shape), true
	}
	if tile := lastTile(dt); tile > 0 && d.shape[axis] < tile && !included {
		return keep(fmt.Sprintf("axis %d holds %d, less than one block of %d", axis, d.shape[axis], tile))
	}
	if err := p.lay.Check(dt, axis, rank); err != nil {
		return keep(err.Error())
	}
	desc, err := tcast.Describe(d.shape, dt, tcast.Compressed, &tcast.Options{Axis: opts.Axis, Mode: opts.Mode})
	if err != nil {
		return keep(err.Error())
	}
	// Pruning is asked for its own sake: a pruned weight is cast whatever
	// it costs; and GGUF's plain element types (f32, f16, bf16) are what the
	// file is asked to hold, whatever the source's width.
	plain := p.lay.Container() == layout.GGUF && dt.Spec() == nil
	if bits, src := desc.BitsPerValue(), sourceBits(info); bits >= src && !included && !p.pruned && !plain && !p.mixed {
		return keep(fmt.Sprintf("%s costs %.3g bits per value on this shape, no fewer than the source's %.3g", dt.Name(), bits, src))
	}
	specs, meta, err := p.lay.Specs(info.Name, d.shape, dt, axis)
	if err != nil {
		return keep(err.Error())
	}
	if err := p.decideRotation(d, axis); err != nil {
		return err
	}
	d.cast, d.specs, d.meta = true, specs, meta
	if info.Quantized() {
		// The keep rule compares with 32 bits, what a kept quantized tensor
		// costs (dequantized to F32): the weight is quantized again, which
		// the note says (run replaces it with "exact: ..." when it is).
		d.result.Note = fmt.Sprintf("%s %s (%.3g bits per value): its error adds to the source's", requantized, info.Type, storedBits(info.Size, info.Shape))
	}
	return p.importance(d)
}

// dataTypeOf returns the datatype tensor info is cast to: Options.DataType,
// or, for pruning without one, the unscaled float datatype of the source's
// dtype (float32 for any dtype but BF16 and F16).
func (p *plan) dataTypeOf(info *load.Info) *tcast.DataType {
	if p.opts.DataType != nil {
		return p.opts.DataType
	}
	switch info.DType {
	case safetensors.BF16:
		return tcast.MustLookup("bfloat16")
	case safetensors.F16:
		return tcast.MustLookup("float16")
	}
	return tcast.MustLookup("float32")
}

// dataTypeName names the datatype of the conversion: Options.DataType's, or
// for pruning without one the datatypes the weights were cast to (from
// their sources), comma-separated.
func (p *plan) dataTypeName() string {
	if p.mixed {
		return p.opts.GGUFMix.String()
	}
	if p.opts.DataType != nil {
		return p.opts.DataType.Name()
	}
	var names []string
	for _, d := range p.tensors {
		if d.cast && !slices.Contains(names, d.dt.Name()) {
			names = append(names, d.dt.Name())
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// lastTile returns the tile size along the scaled axis, 0 for tensor or
// channel scaling.
func lastTile(dt *tcast.DataType) int {
	if s := dt.Spec(); s != nil && len(s.Tiles) > 0 {
		return s.Tiles[len(s.Tiles)-1].Size
	}
	return 0
}

// keptSpec declares a tensor copied (or dequantized to F32) to the output.
func (p *plan) keptSpec(d *decision) (layout.Spec, error) {
	info := &d.info
	sp := layout.Spec{Name: info.Name, Shape: slices.Clone(info.Shape), DType: info.DType}
	if info.DType == 0 || d.f32 || !d.xform.IsZero() {
		if !info.Float {
			return sp, fmt.Errorf("tensor %s (%s) can neither be copied nor dequantized", info.Name, info.Type)
		}
		sp.DType = safetensors.F32
	}
	if p.lay.Container() == layout.GGUF {
		t, ok := layout.GGUFType(sp.DType)
		if !ok {
			return sp, fmt.Errorf("tensor %s: no GGUF type holds %s", info.Name, sp.DType)
		}
		sp.GGML = t
	}
	return sp, nil
}

// newPlan opens nothing: it decides every tensor of in and declares the output.
func newPlan(in *load.Checkpoint, opts *Options) (*plan, error) {
	p := &plan{in: in, opts: opts, lay: opts.Layout, weights: map[string][]string{},
		meta: layout.WithoutMetaKeys(in.Metadata())}
	p.prune, p.pruned = layout.PruningOf(opts.Layout)
	if in.GGUF() != nil {
		p.meta = map[string]string{} // GGUF key/values are not safetensors metadata
	}
	if p.lay.Container() == layout.GGUF {
		if err := p.ggufMetadata(in, opts); err != nil {
			return nil, err
		}
	}
	p.mixed = p.mixApplies()
	if err := p.checkModelType(); err != nil {
		return nil, err
	}
	if p.mixed && opts.Include != nil {
		return nil, fmt.Errorf("-include does not apply to the %s mix, whose rules choose the tensors to quantize: name types with -type-for RE=TYPE", opts.GGUFMix)
	}
	if opts.GGUFPure && !p.mixed {
		return nil, &OptionError{Flag: "-gguf-pure", Reason: "applies to a GGUF mix: this output is generic GGUF, where the datatype already goes to every cast weight; drop -gguf-pure"}
	}
	if opts.Imatrix != nil && p.model == nil {
		p.imatrixNames()
	}
	seen := map[string]string{}
	why := map[string]int{}
	renamed := map[string]string{}
	var ds []*decision
	for _, info := range in.Tensors() {
		d := &decision{info: info, source: info.Name}
		if p.model != nil {
			mp, err := p.model.Tensor(info.Name)
			if err != nil {
				return nil, err
			}
			if mp.Name == "" {
				p.dropped = append(p.dropped, dropped{info: info, why: mp.Dropped})
				continue
			}
			d.info.Name, d.xform, d.f32 = mp.Name, mp.Transform, mp.Float32
		}
		if opts.Rename != nil {
			if n := opts.Rename(d.info.Name); n != d.info.Name {
				if n == "" {
					return nil, fmt.Errorf("-rename maps tensor %s to an empty name", info.Name)
				}
				d.info.Name = n
			}
		}
		if d.info.Name != info.Name {
			renamed[d.info.Name] = info.Name
		}
		ds = append(ds, d)
	}
	if p.mixed {
		if err := p.planMix(ds); err != nil {
			return nil, err
		}
	}
	for _, d := range ds {
		if err := p.add(d, seen, why); err != nil {
			return nil, err
		}
	}
	if err := p.addExtras(seen); err != nil {
		return nil, err
	}
	p.checkPatterns()
	if len(renamed) > 0 {
		p.meta[layout.KeyRenamed] = jsonString(renamed)
	}
	if len(p.converted) == 0 {
		if p.mixed {
			return nil, fmt.Errorf("%w\n(the %s mix quantizes what llama-quantize does: tensors of 2 or more dimensions named ...weight, not norms; a single GGUF type, -dtype q8_0, q4_k, ..., casts other weights whose rows hold its blocks)",
				nothingCast(why), opts.GGUFMix)
		}
		return nil, nothingCast(why)
	}
	if err := p.checkImatrix(); err != nil {
		return nil, err
	}
	var err error
	if p.files, err = p.lay.Files(opts.DataType, p.converted, p.kept, in.Config()); err != nil {
		return nil, err
	}
	p.meta[layout.KeyDataType] = p.dataTypeName()
	p.meta[layout.KeyLayout] = p.lay.Name()
	p.meta[layout.KeyWeights] = jsonString(p.weights)
	if len(p.swapped) > 0 {
		p.meta[layout.KeyTransposed] = jsonString(p.swapped)
	}
	if len(p.rotated) > 0 {
		// The SQNRs without rotation are patched in once known.
		p.meta[layout.KeyRotated] = layout.DeclareRotated(p.rotated)
	}
	if opts.ScaleSearch {
		p.meta[layout.KeyScaleSearch] = layout.ScaleSearchOn
	}
	if err := p.finishModel(); err != nil {
		return nil, err
	}
	return p, nil
}

// add decides one tensor and declares its output.
func (p *plan) add(d *decision, seen map[string]string, why map[string]int) error {
	info := d.info
	d.result = TensorResult{Name: info.Name, Shape: info.Shape, Source: info.Type, BytesIn: info.Size}
	if err := p.decide(d); err != nil {
		return err
	}
	var specs []layout.Spec
	if d.cast {
		specs = d.specs
		for k, v := range d.meta {
			p.meta[k] = withSlack(v)
		}
		for _, sp := range specs {
			p.weights[info.Name] = append(p.weights[info.Name], sp.Name)
		}
		d.conv = len(p.converted)
		p.converted = append(p.converted, layout.Converted{Name: info.Name, Shape: info.Shape})
		if d.swap {
			p.swapped = append(p.swapped, info.Name)
		}
		d.result.DataType = d.dt.Name()
	} else {
		sp, err := p.keptSpec(d)
		if err != nil {
			return err
		}
		specs = []layout.Spec{sp}
		d.specs = specs
		p.kept = append(p.kept, info.Name)
		d.result.Bits = float64(sp.DType.BitSize())
		d.result.Stored = sp.DType.String()
		if p.lay.Container() == layout.GGUF {
			d.result.Stored = sp.GGML.String()
		}
		why[d.result.Note]++
	}
	for _, sp := range specs {
		if p.lay.Container() == layout.GGUF && len(sp.Name) > gguf.MaxNameLen {
			return fmt.Errorf("tensor %s: GGUF names hold at most %d bytes, this one has %d; shorten names with -rename RE=REPL", sp.Name, gguf.MaxNameLen, len(sp.Name))
		}
		if other, dup := seen[sp.Name]; dup {
			if p.opts.Rename != nil {
				return fmt.Errorf("-rename maps tensors %s and %s to the same output tensor %q; make the rules keep names apart", other, d.source, sp.Name)
			}
			return fmt.Errorf("output tensor %q of %s collides with one of %s", sp.Name, d.source, other)
		}
		seen[sp.Name] = d.source
		p.specs = append(p.specs, sp)
	}
	d.index = len(p.tensors)
	p.tensors = append(p.tensors, d)
	return nil
}

// nothingCast is the error for a plan that casts nothing: the reasons, most
// frequent first.
func nothingCast(why map[string]int) error {
	type reason struct {
		why string
		n   int
	}
	var rs []reason
	for w, n := range why {
		rs = append(rs, reason{strings.TrimPrefix(w, "kept: "), n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].why < rs[j].why })
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n  %d × %s", r.n, r.why)
	}
	return fmt.Errorf("%w; every tensor was kept:%s\nchoose another -layout, -dtype or -axis, or name tensors to cast with -include", ErrNothingCast, b.String())
}

// Destination returns where a conversion to out in layout l writes, and
// whether that is a directory: out itself when it names a file of the
// layout's container (.safetensors, .gguf), else the directory out.
func Destination(out string, l layout.Layout) (string, bool, error) {
	ext := strings.ToLower(filepath.Ext(out))
	want := ".safetensors"
	if l.Container() == layout.GGUF {
		want = ".gguf"
	}
	switch {
	case strings.HasSuffix(out, string(os.PathSeparator)):
		return filepath.Clean(out), true, nil
	case ext == want:
		return out, false, nil
	case ext == ".gguf":
		return "", false, fmt.Errorf("-o %s names a GGUF file, but the %s layout writes safetensors: add -layout gguf, or give a directory or a .safetensors file", out, l.Name())
	case ext == ".safetensors":
		return "", false, fmt.Errorf("-o %s names a safetensors file, but the gguf layout writes GGUF: give a .gguf file or a directory", out)
	case fileExts[ext]:
		return "", false, fmt.Errorf("-o %s: a checkpoint is not written as %s; give a directory or a %s file", out, ext, want)
	}
	return out, true, nil
}

// fileExts are extensions of files that are no checkpoint output: an -o
// ending in one is a mistake, not a directory name.
var fileExts = map[string]bool{".npy": true, ".npz": true, ".json": true, ".bin": true, ".pt": true, ".pth": true, ".gguf": true}

// fileName is the weight file inside a directory output.
func fileName(l layout.Layout) string {
	if l.Container() == layout.GGUF {
		return "model.gguf"
	}
	return "model.safetensors"
}

// Convert converts the checkpoint at inPath and writes it to out (see
// Destination) in opts.Layout.
func Convert(inPath, out string, opts Options) (*Result, error) {
	start := time.Now()
	if opts.Layout == nil {
		opts.Layout, _ = layout.Get("tcast")
	}
	if err := opts.Check(); err != nil {
		return nil, err
	}
	_, pruned := layout.PruningOf(opts.Layout)
	if opts.DataType == nil && !pruned && opts.GGUFMix.IsZero() {
		return nil, errors.New("no datatype to cast to")
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	lay := opts.Layout
	if opts.DataType != nil {
		if err := layout.Accepts(lay, opts.DataType); err != nil {
			return nil, err
		}
	}
	probe := opts.DataType
	if !opts.GGUFMix.IsZero() {
		if probe == nil {
			var err error
			if probe, err = layout.DataType(lay, strings.ToLower(opts.GGUFMix.Base().String())); err != nil {
				return nil, err
			}
		}
	}
	if c, ok := lay.(layout.Caster); ok && probe != nil {
		// The layout's own quantizer refuses options it cannot honour
		// (GGUF's Q8_0 has no scale modes): say so before reading anything.
		// One row of 256, a whole block of every layout's types.
		if _, err := c.Cast(make([]float32, 256), []int{1, 256}, probe, &tcast.Options{Form: tcast.Actual, Mode: opts.Mode}); err != nil {
			return nil, err
		}
	}
	dest, isDir, err := Destination(out, lay)
	if err != nil {
		return nil, err
	}
	if opts.ShardSize > 0 && (!isDir || lay.Container() != layout.Safetensors) {
		return nil, fmt.Errorf("-shard-size splits safetensors output in a directory; -o %s is not one", out)
	}
	in, err := load.Open(inPath)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	p, err := newPlan(in, &opts)
	if err != nil {
		if msg := err.Error(); !strings.HasPrefix(msg, inPath+":") && !strings.HasPrefix(msg, filepath.Join(inPath, "")+string(filepath.Separator)) {
			err = fmt.Errorf("%s: %w", inPath, err) // unless it names a file of the input already
		}
		return nil, err
	}
	if err := checkOutput(dest, in.Files(), inPath); err != nil {
		return nil, err
	}
	if len(p.files) > 0 && !isDir {
		var names []string
		for n := range p.files {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("the %s layout writes %s beside the weights, so -o must name a directory, not the file %s",
			lay.Name(), strings.Join(names, " and "), out)
	}
	p.nameGeneric(strings.TrimSuffix(filepath.Base(dest), ".gguf"))
	stage, err := beginOutput(dest, isDir, opts.Force)
	if err != nil {
		return nil, err
	}
	defer stage.Abort()
	weightPath := stage.Path()
	if isDir {
		weightPath = filepath.Join(stage.Path(), fileName(lay))
	}
	sink, err := newSink(lay.Container(), weightPath, p.specs, p.meta, append(slices.Clip(p.ggufKV), p.tailKV()...), opts.ShardSize)
	if err != nil {
		return nil, err
	}
	defer sink.Abort()

	res := &Result{Input: inPath, Output: dest, Layout: lay.Name(), DataType: p.dataTypeName(), Generic: p.genericWhy}
	if p.mixed {
		res.Mix = opts.GGUFMix.String()
	}
	if opts.Imatrix != nil {
		res.Imatrix = opts.Imatrix.Path
	}
	res.ScaleSearch = opts.ScaleSearch
	for _, d := range p.tensors {
		res.BytesIn += d.info.Size
	}
	patch := map[string]string{} // metadata values that differ from the plan's
	var bytesDone int64
	tensorsDone := 0
	res.Tensors = make([]TensorResult, len(p.tensors)) // in input order, whatever the order work finishes
	for _, d := range p.tensors {
		d.st = p.streamOf(d)
	}
	items := p.items()
	// The window bounds the items between the start of their work and
	// their emit. Every item writes its own bytes to the output (the emit,
	// in order, only finishes each weight), so a weight cast whole holds
	// its memory only while a worker casts it, and peak memory stays within
	// (workers + 1) × the largest tensor; the window keeps the work near
	// the input's order: workers + 1, one more when every cast weight
	// streams, which keeps the workers busy while the head item finishes.
	window := opts.Workers + 1
	if p.allStreamed() {
		window++
	}
	if wrapSink != nil {
		sink = wrapSink(sink)
	}
	// A spare core writes the output while the workers cast.
	p.out = newWriter(sink, opts.Workers < runtime.GOMAXPROCS(0))
	defer p.out.stop() // before the sink's Abort
	scratches := make(chan *scratch, opts.Workers)
	scs := make([]*scratch, opts.Workers)
	for i := range scs {
		scs[i] = &scratch{}
		scratches <- scs[i]
	}
	// named names the input and tensor d in an error of its work, unless
	// the sink's (a writeError), which names the output and tensor.
	named := func(d *decision, err error) error {
		var we writeError
		switch {
		case errors.As(err, &we):
			return we.error
		case err != nil:
			return fmt.Errorf("%s: tensor %s: %w", inPath, d.source, err)
		}
		return nil
	}
	err = ordered.Run(len(items), opts.Workers, window, func(i int) error {
		it := items[i]
		d := it.d
		sc := <-scratches
		defer func() { scratches <- sc }()
		var err error
		switch {
		case d.st != nil:
			err = p.work(it, sc)
		case d.copied():
			err = p.copyPieces(it, sc)
		default:
			err = p.whole(d, sc)
		}
		return named(d, err)
	}, func(i int) error {
		it := items[i]
		if !it.last {
			return nil
		}
		d := it.d
		switch {
		case d.st != nil:
			if err := p.finish(d); err != nil {
				return named(d, err)
			}
		case d.copied():
			d.result.BytesOut = d.info.Size
		}
		if d.cast {
			d.result.Bits = storedBits(d.result.BytesOut, d.shape)
		}
		in.Release(d.source)
		for k, v := range d.meta {
			if declared := p.meta[k]; declared != v {
				pv, err := fit(v, declared)
				if err != nil {
					return fmt.Errorf("tensor %s: metadata %s: %w", d.source, k, err)
				}
				patch[k] = pv
			}
		}
		res.Tensors[d.index] = d.result
		res.BytesOut += d.result.BytesOut
		bytesDone += d.info.Size
		tensorsDone++
		if opts.Progress != nil {
			opts.Progress(Progress{Tensors: tensorsDone, TotalTensors: len(p.tensors), Bytes: bytesDone, TotalBytes: res.BytesIn, Elapsed: time.Since(start)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The writes still queued (the workers are done).
	if err := p.out.finish(scs); err != nil {
		return nil, errors.Unwrap(err)
	}
	if bad := nonFinite(res.Tensors); len(bad) > 0 {
		// Counted as the error was measured: refuse before the output is
		// published (the deferred Abort removes what was written).
		if !opts.AllowNonFinite {
			return nil, &NonFiniteError{Input: inPath, Tensors: bad}
		}
		names := make([]string, len(bad))
		for i, t := range bad {
			names[i] = fmt.Sprintf("%s (%d NaN, %d +Inf, %d -Inf)", t.Name, t.NaN, t.PosInf, t.NegInf)
		}
		p.warn("%d %s cast with NaN or Inf values in the source, per the block policy (a block holding one is NaN in most datatypes): %s; check the source, or keep them with -exclude RE",
			len(bad), plural(len(bad), "weight was", "weights were"), strings.Join(names, ", "))
	}
	if len(p.rotated) > 0 {
		if err := p.recordUnrotated(res, patch); err != nil {
			return nil, err
		}
	}
	if len(patch) > 0 {
		if err := sink.PatchMetadata(patch); err != nil {
			return nil, err
		}
	}
	if err := sink.Close(); err != nil {
		return nil, err
	}
	if p.pruned {
		// The files again, with the zeros of the weights as written
		// (compressed-tensors' global_sparsity).
		for _, d := range p.tensors {
			if d.cast {
				p.converted[d.conv].Zeros, p.converted[d.conv].Measured = d.zeros, true
			}
		}
		if p.files, err = p.lay.Files(opts.DataType, p.converted, p.kept, in.Config()); err != nil {
			return nil, err
		}
	}
	for _, d := range p.dropped {
		res.Tensors = append(res.Tensors, d.result())
	}
	for name, b := range p.files {
		if err := writeNew(filepath.Join(stage.Path(), name), b); err != nil {
			return nil, err
		}
	}
	if err := stage.Commit(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	p.warnRequantized(res.Tensors)
	res.Warnings = p.warnings
	sum := res.Summarize()
	res.Summary = &sum
	return res, nil
}

// writeNew writes a new file inside a staging directory (mode 0666 less the
// umask).
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// run casts one weight whole and fills in its report, or dequantizes a kept
// tensor with no stored dtype (one of a quantized source) to F32; kept
// tensors with one are copied piece by piece (copyPieces).
func (p *plan) run(d *decision) ([]layout.Tensor, error) {
	name := d.info.Name
	if !d.cast {
		v, _, err := p.in.Float32(d.source)
		if err == nil {
			v, err = d.xform.Apply(v, d.info.Shape)
		}
		if err != nil {
			return nil, err
		}
		return []layout.Tensor{{Spec: d.specs[0], Data: float32Bytes(v)}}, nil
	}
	x, _, err := p.in.Float32(d.source)
	if err == nil {
		x, err = d.xform.Apply(x, d.info.Shape)
	}
	if err != nil {
		return nil, err
	}
	if d.swap {
		x, _ = layout.TransposeLast2(x, d.info.Shape)
	}
	if !d.rot.IsZero() {
		return p.runRotated(d, x)
	}
	copts := tcast.Options{Form: tcast.Actual, Axis: p.opts.Axis, Mode: p.opts.Mode, Importance: d.imp, ScaleSearch: p.opts.ScaleSearch}
	if s := d.dt.Spec(); p.opts.Pruning != nil && s != nil && s.IsSparse() {
		if copts.Pruning, err = p.opts.Pruning(d.info.Name, d.shape); err != nil {
			return nil, err
		}
	}
	if p.pruned {
		// The layout stores the pruning: choose the N:M mask along the
		// weight's input (last) axis, then cast the dense datatype with it.
		var po sparsity.Options
		if p.opts.Pruning != nil {
			if po, err = p.opts.Pruning(d.info.Name, d.shape); err != nil {
				return nil, err
			}
		}
		if copts.Keep, err = sparsity.NM(x, d.shape, -1, p.prune.Pattern, po); err != nil {
			return nil, err
		}
	}
	t, v, err := p.cast(d.dt, x, d.shape, &copts)
	if err != nil {
		return nil, err
	}
	e := Compare(x, v)
	if d.info.Quantized() && !exact(e) {
		// A quantized source may be the target's values times power-of-two
		// scales (MXFP4 → NVFP4, FP8 with power-of-two block scales →
		// MXFP8): keep the first scale choice that holds it exactly.
		tried := map[scale.Mode]bool{}
		if s := d.dt.Spec(); s != nil && s.IsExponent() {
			tried[copts.Mode] = true // power-of-two scales already: the same cast
		}
		for _, m := range []scale.Mode{copts.Mode, scale.RCeil, scale.Ceil} {
			if tried[m] {
				continue
			}
			tried[m] = true
			o := copts
			o.Mode, o.PowerOfTwoScales = m, true
			t2, v2, err := p.cast(d.dt, x, d.shape, &o)
			if err != nil {
				break
			}
			if e2 := Compare(x, v2); exact(e2) {
				t, v, e = t2, v2, e2
				break
			}
		}
	}
	d.meta = map[string]string{}
	out, err := p.lay.Encode(name, t, d.meta)
	if err != nil {
		return nil, err
	}
	if err := p.checkEncoded(d, out); err != nil {
		return nil, err
	}
	d.result.setErrors(e)
	if d.imp != nil {
		var ws wsum
		ws.addRows(d, 0, x, v)
		d.result.WeightedSQNR = ws.sqnr()
	}
	if d.info.Quantized() && exact(e) {
		d.result.Note = fmt.Sprintf("exact: %s holds every value of the source's %s", d.dt.Name(), d.info.Type)
	}
	if p.pruned {
		for _, y := range v {
			if y == 0 {
				d.zeros++
			}
		}
		d.result.Note = fmt.Sprintf("pruned %v (%s), density %.4g", p.prune.Pattern, p.prune.Resolved(), sparsity.MaskDensity(copts.Keep))
	}
	return out, nil
}

// checkEncoded checks that a layout wrote the tensors and metadata it
// declared for weight d.
func (p *plan) checkEncoded(d *decision, out []layout.Tensor) error {
	for i, o := range out {
		if i >= len(d.specs) || !specEqual(o.Spec, d.specs[i]) {
			return fmt.Errorf("layout %s wrote %s %v, not the tensor it declared", p.lay.Name(), o.Name, o.Shape)
		}
	}
	for k := range d.meta {
		if _, ok := p.meta[k]; !ok {
			return fmt.Errorf("layout %s wrote metadata %q it did not declare", p.lay.Name(), k)
		}
	}
	return nil
}

// metaSlack is the room a declared JSON metadata value leaves for the value
// Encode writes (a weight's description records the scale mode actually
// used, whose name may be longer than the declared one): trailing
// whitespace, which JSON readers ignore.
const metaSlack = 16

// withSlack returns a declared metadata value with room to grow: JSON values
// get trailing spaces, others (fixed-width codes) stay as they are.
func withSlack(v string) string {
	if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
		return v + strings.Repeat(" ", metaSlack)
	}
	return v
}

// fit returns the final metadata value v at the length of the declared one,
// which the header reserved.
func fit(v, declared string) (string, error) {
	if len(v) == len(declared) {
		return v, nil
	}
	if len(v) < len(declared) && (strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[")) {
		return v + strings.Repeat(" ", len(declared)-len(v)), nil
	}
	return "", fmt.Errorf("the value written (%d bytes) does not fit the %d declared", len(v), len(declared))
}

// cast casts x with the layout's own quantizer when it has one, and returns
// the tensor and its dequantized values.
func (p *plan) cast(dt *tcast.DataType, x []float32, shape []int, o *tcast.Options) (*tcast.Tensor, []float32, error) {
	var t *tcast.Tensor
	var err error
	if c, ok := p.lay.(layout.Caster); ok {
		t, err = c.Cast(x, shape, dt, o)
	} else {
		t, err = tcast.Cast(x, shape, dt, o)
	}
	if err != nil {
		return nil, nil, err
	}
	v, err := tcast.Decompress(t)
	return t, v, err
}

// exact reports whether a cast lost nothing.
func exact(e Errors) bool { return e.SQNR == nil && e.MaxAbs == 0 && e.Lost == 0 }

func specEqual(a, b layout.Spec) bool {
	return a.Name == b.Name && a.DType == b.DType && a.GGML == b.GGML && slices.Equal(a.Shape, b.Shape)
}

// float32Bytes returns v as little-endian float32 bytes.
func float32Bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		b := math.Float32bits(x)
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	return out
}

// Errors compares dequantized values with their source (tcast.Errors).
type Errors = tcast.Errors

// Compare measures got against want as Convert and Verify measure each
// tensor: tcast.Compare's figures, with the sums kept in eight partial sums
// by tcast.ErrorSum's kernel, as the streamed casts measure their chunks, so
// a weight gets the same figures cast whole or streamed (they may differ
// from tcast.Compare's in the last bits).
func Compare(want, got []float32) Errors {
	var s tcast.ErrorSum
	s.Add(want, got)
	return s.Errors()
}
