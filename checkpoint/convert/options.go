package convert

import (
	"regexp"
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
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
	// its own) with a model.safetensors.index.json, in the output directory;
	// and GGUF output into llama.cpp's splits (model-00001-of-0000N.gguf,
	// ..., as gguf-split --split-max-size makes them), in the output
	// directory, which llama.cpp loads by the first.
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
	// GGUF holds the options of GGUF output (a gguf Layout); the zero
	// value makes a llama.cpp model file of a checkpoint whose
	// architecture package ggufmodel knows, with the datatype's type for
	// every weight cast.
	GGUF GGUFOptions
	// Imatrix, when set, gives each weight cast to a GGUF type whose
	// quantizer searches (gguf.Searches: the K-quants, IQ4_NL, IQ4_XS, Q4_0,
	// Q4_1, Q5_0, Q5_1) its importance vector, found by its output name; a weight the matrix
	// has no entry for is quantized without one, and the report says so
	// (TensorResult.Importance). The output gets llama-quantize's
	// quantize.imatrix.* keys. Other layouts take it with a datatype that
	// searches (a codebook datatype of several tables; see ErrImatrixUnused),
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
	// *tcast.NonFiniteError, before its output appears. Kept tensors are copied
	// as they are, NaN and Inf included, and never refused.
	AllowNonFinite bool
	// DryRun plans the conversion and returns its Result without reading
	// a weight's values or writing anything (out may be ""): every
	// tensor's type, reason and size in the output (TensorResult.BytesOut)
	// and their total, as llama-quantize --dry-run; SQNR and errors are
	// not measured. Result.DryRun is set.
	DryRun bool
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

// GGUFOptions are the options of Convert that apply to GGUF output only.
// The zero value writes a llama.cpp model file when the input's
// architecture is known (package ggufmodel), else generic GGUF, with
// Options.DataType's type for every weight cast.
type GGUFOptions struct {
	// Generic writes GGUF output under the input's tensor names without
	// llama.cpp's model metadata, with general.architecture "tcast", also
	// when config.json names an architecture package ggufmodel knows. By
	// default such a checkpoint becomes the model file llama.cpp loads: GGUF
	// tensor names, hyper-parameters and tokenizer (see ggufmodel).
	Generic bool
	// Pre names the llama.cpp pre-tokenizer of a byte-level BPE
	// tokenizer that ggufmodel does not recognise from tokenizer.json.
	Pre string
	// Mix, when not the zero Mix, gives GGUF output llama-quantize's
	// per-tensor types for that mix (package ggufmix): each tensor's ggml
	// type and the reason for it come from the mix's rules (by the
	// tensor's output name and shape, the model's layer and head counts),
	// a row length the type's block does not divide falls back to a type
	// that fits, and general.file_type is the mix's. DataType is then
	// optional: when both are set (a name that is a mix and a type, such
	// as q8_0 or q4_k, an alias of Q4_K_M), the mix applies to a llama.cpp
	// model file (a known architecture, or a GGUF input with one) and
	// DataType to generic GGUF output.
	Mix ggufmix.Mix
	// Pure gives every weight the mix quantizes the mix's base type
	// (with the row-length fallback), as llama-quantize --pure.
	Pure bool
	// TypeFor overrides the type of GGUF output tensors by name (the first
	// match wins). With a mix they apply to the tensors
	// the mix quantizes, before the row-length fallback; without one, to
	// the weights cast, whose rows the type's block must divide.
	TypeFor []ggufmix.Override
	// OutputType and TokenEmbeddingType, when not nil, set the type of the
	// output head and of the token embedding in a mix, and KeepOutput
	// leaves the output head as it is: ggufmix.Options' fields of those
	// names (llama-quantize --output-tensor-type, --token-embedding-type,
	// --leave-output-tensor).
	OutputType, TokenEmbeddingType *gguf.Type
	KeepOutput                     bool
	// AllowRequantize lets a mix quantize a tensor of a GGUF input that
	// is quantized already to another type (its error adds to the
	// input's, and the report's note says so). By default Convert refuses,
	// as llama-quantize does without --allow-requantize. A tensor whose
	// type stays the same is copied as it is either way.
	AllowRequantize bool
	// PruneLayers drops these blocks (blk.N.*) from a llama.cpp model file
	// read from GGUF, numbers the blocks after them down to close the gaps
	// and sets <arch>.block_count, as llama-quantize --prune-layers; the
	// importance matrix is still looked up under the input's names.
	PruneLayers []int
	// KeepSplit writes a GGUF input that is split (gguf.OpenModel) in the
	// same splits, each tensor in its input's split, in the output
	// directory (llama-quantize --keep-split); ShardSize splits any GGUF
	// output by size instead.
	KeepSplit bool
	// TargetBPW, when positive, chooses the type of every tensor the mix
	// quantizes and no option sets (ggufmix.Decision.Tunable) so that the
	// file holds at most TargetBPW bits per weight of the whole model (its
	// size in bits over its element count, llama.cpp's BPW) with the least
	// total error: ggufmix.Fit over the ggufmix.TargetTypes, each tensor's
	// error estimated on sampled rows, weighed by its importance vector
	// when Imatrix is given. TargetSize does the same for a file size in
	// bytes (the splits' total with ShardSize or KeepSplit); at most one
	// may be set, and only with a Mix. The mix rules
	// still decide which tensors are quantized, and the options that set
	// types (TypeFor, OutputType, TokenEmbeddingType) are kept as set. A
	// dry run reads the sampled rows too.
	TargetBPW  float64
	TargetSize int64
	// KV sets metadata keys of the output after every other key is
	// decided: a key the output has is replaced in place, any other is
	// added (llama-quantize --override-kv; see ParseKV).
	KV []gguf.KV
}
