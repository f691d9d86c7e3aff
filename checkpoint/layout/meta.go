package layout

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The __metadata__ keys this module writes. Every one starts with KeyPrefix,
// and IsMetaKey is the one test of whether a key is ours: converting a
// checkpoint drops every such key of its input (they describe the input's
// tensors, not the output's), and decompressing drops them too.
const (
	// KeyPrefix starts every key we write.
	KeyPrefix = "tcast."
	// KeyFormat holds the version of the tcast layout (FormatVersion).
	KeyFormat = "tcast.format"
	// KeyLayout names the layout a converted checkpoint was written in.
	KeyLayout = "tcast.layout"
	// KeyDataType names the datatype the weights were cast to.
	KeyDataType = "tcast.datatype"
	// KeyWeights is a JSON object: each converted weight's name → the stored
	// tensors holding it.
	KeyWeights = "tcast.weights"
	// KeyTransposed is a JSON list of the weights stored with their last two
	// axes swapped (see Transposer).
	KeyTransposed = "tcast.transposed"
	// KeyRenamed is a JSON object: each output tensor renamed by the
	// conversion (convert.Options.Rename) → its name in the source.
	KeyRenamed = "tcast.renamed"
	// KeyTransforms is a JSON object: each output tensor of a llama.cpp
	// model GGUF whose values were changed on the way (its query and key
	// rows permuted, 1 added to Gemma's norms) → the change, as
	// ggufmodel.Transform encodes it.
	KeyTransforms = "tcast.transforms"
	// KeyDropped is a JSON object: each input tensor a llama.cpp model GGUF
	// leaves out (a tied output head, rotary frequencies) → why.
	KeyDropped = "tcast.dropped"
	// KeyRotated is a JSON object: each weight whose values were rotated
	// before the cast (convert.Options.Rotate) → its RotationInfo (the
	// rotation, its axis, and the SQNR the cast gives without it). Only the
	// tcast layout records it (RecordsRotation); package load undoes the
	// rotation when it dequantizes. EncodeRotated, DeclareRotated and
	// ReadRotated write and read it.
	KeyRotated = "tcast.rotated"
	// KeyScaleSearch, with the value ScaleSearchOn, says that the weights'
	// scales were chosen by the scale search (convert.Options.ScaleSearch,
	// docs/NUMERICS.md §11) rather than by the datatype's rule. It is
	// informative only: the stored scales decode as any others.
	KeyScaleSearch = "tcast.scale_search"
	// KeySynth describes a checkpoint tcast synth wrote (its parameters).
	KeySynth = "tcast.synth"
	// KeyWeightPrefix + W is the JSON description (WeightInfo) of weight W
	// in the tcast layout.
	KeyWeightPrefix = "tcast.weight."
	// KeyCTDataTypePrefix + P names the datatype of compressed-tensors
	// module P.
	KeyCTDataTypePrefix = "tcast.ct.datatype."
	// KeyCTGlobalScalePrefix + P holds the exact NVFP4 tensor scale bits of
	// compressed-tensors module P ("0x%08x").
	KeyCTGlobalScalePrefix = "tcast.ct.global_scale."
)

// ScaleSearchOn is the value of KeyScaleSearch.
const ScaleSearchOn = "on"

// GGUFKeys returns our keys a GGUF output may carry, in the order they
// are written (after the file's typed general.* and model keys): the
// datatype, layout, weights and transposed of every conversion, and the
// renames, transforms and dropped tensors of a llama.cpp model file.
func GGUFKeys() []string {
	return []string{KeyDataType, KeyLayout, KeyWeights, KeyTransposed, KeyRenamed, KeyTransforms, KeyDropped}
}

// Keys of format version 1, read but no longer written.
const (
	legacyWeightPrefix      = "tcast:"
	legacyCTDataType        = "tcast.datatype."
	legacyCTGlobalScalePref = "tcast.global_scale."
)

// IsMetaKey reports whether a __metadata__ key is one this module writes
// (including the keys of earlier format versions).
func IsMetaKey(k string) bool {
	return strings.HasPrefix(k, KeyPrefix) || strings.HasPrefix(k, legacyWeightPrefix)
}

// WithoutMetaKeys returns a copy of meta without our keys: what a conversion
// or a decompression carries over from its input.
func WithoutMetaKeys(meta map[string]string) map[string]string {
	out := make(map[string]string, len(meta))
	for k, v := range meta {
		if !IsMetaKey(k) {
			out[k] = v
		}
	}
	return out
}

// metaValue returns meta[key], or the value under the legacy key.
func metaValue(meta map[string]string, key, legacy string) (string, bool) {
	if v, ok := meta[key]; ok {
		return v, true
	}
	if legacy == "" {
		return "", false
	}
	v, ok := meta[legacy]
	return v, ok
}

// knownVersions are the values of KeyFormat this build reads.
var knownVersions = []string{"1", FormatVersion}

// ErrFormatVersion is matched (errors.Is) by the error of CheckFormatVersion.
var ErrFormatVersion = errors.New("unknown tcast format version")

// VersionError reports a checkpoint whose KeyFormat names a version of the
// tcast layout this build does not know, such as one written by a later
// release: its metadata cannot be trusted to mean what this build reads.
type VersionError struct {
	// Version is the value of __metadata__[KeyFormat].
	Version string
}

// Error returns a message such as
// `__metadata__ "tcast.format" is "3": this build reads versions 1 and 2; use a newer tcast`.
func (e *VersionError) Error() string {
	v := e.Version
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return fmt.Sprintf("__metadata__ %s is %s: this build reads versions %s and %s of the tcast layout; read the file with the newer tcast that wrote it",
		strconv.Quote(KeyFormat), strconv.Quote(v), knownVersions[0], knownVersions[1])
}

// Is reports whether target is ErrFormatVersion.
func (e *VersionError) Is(target error) bool { return target == ErrFormatVersion }

// CheckFormatVersion returns a *VersionError if meta has a KeyFormat whose
// value is not a version this build reads (1 or FormatVersion), and nil
// otherwise (a file without the key is not ours, or predates it).
func CheckFormatVersion(meta map[string]string) error {
	v, ok := meta[KeyFormat]
	if !ok {
		return nil
	}
	for _, k := range knownVersions {
		if v == k {
			return nil
		}
	}
	return &VersionError{Version: v}
}
