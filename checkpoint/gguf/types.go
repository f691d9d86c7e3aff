package gguf

import (
	"math/bits"
	"strconv"
)

// Type is a ggml tensor type id, as stored in a GGUF tensor info
// (enum ggml_type in ggml's include/ggml.h).
type Type uint32

// The ggml tensor types. Ids 4, 5, 31–33 and 36–38 belonged to types that
// ggml has removed; files using them are rejected like any unknown id.
const (
	TypeF32     Type = 0
	TypeF16     Type = 1
	TypeQ4_0    Type = 2
	TypeQ4_1    Type = 3
	TypeQ5_0    Type = 6
	TypeQ5_1    Type = 7
	TypeQ8_0    Type = 8
	TypeQ8_1    Type = 9
	TypeQ2_K    Type = 10
	TypeQ3_K    Type = 11
	TypeQ4_K    Type = 12
	TypeQ5_K    Type = 13
	TypeQ6_K    Type = 14
	TypeQ8_K    Type = 15
	TypeIQ2_XXS Type = 16
	TypeIQ2_XS  Type = 17
	TypeIQ3_XXS Type = 18
	TypeIQ1_S   Type = 19
	TypeIQ4_NL  Type = 20
	TypeIQ3_S   Type = 21
	TypeIQ2_S   Type = 22
	TypeIQ4_XS  Type = 23
	TypeI8      Type = 24
	TypeI16     Type = 25
	TypeI32     Type = 26
	TypeI64     Type = 27
	TypeF64     Type = 28
	TypeIQ1_M   Type = 29
	TypeBF16    Type = 30
	TypeTQ1_0   Type = 34
	TypeTQ2_0   Type = 35
	TypeMXFP4   Type = 39
	TypeNVFP4   Type = 40
	TypeQ1_0    Type = 41
	TypeQ2_0    Type = 42
)

// typeInfo is the storage geometry of one Type.
type typeInfo struct {
	name       string
	blockSize  int // elements per block
	blockBytes int // bytes per block
}

// typeTable lists every known type with its block geometry, from ggml's
// ggml-common.h block structs (the same numbers as gguf-py's
// GGML_QUANT_SIZES).
var typeTable = map[Type]typeInfo{
	TypeF32:     {"F32", 1, 4},
	TypeF16:     {"F16", 1, 2},
	TypeQ4_0:    {"Q4_0", 32, 18},
	TypeQ4_1:    {"Q4_1", 32, 20},
	TypeQ5_0:    {"Q5_0", 32, 22},
	TypeQ5_1:    {"Q5_1", 32, 24},
	TypeQ8_0:    {"Q8_0", 32, 34},
	TypeQ8_1:    {"Q8_1", 32, 36},
	TypeQ2_K:    {"Q2_K", 256, 84},
	TypeQ3_K:    {"Q3_K", 256, 110},
	TypeQ4_K:    {"Q4_K", 256, 144},
	TypeQ5_K:    {"Q5_K", 256, 176},
	TypeQ6_K:    {"Q6_K", 256, 210},
	TypeQ8_K:    {"Q8_K", 256, 292},
	TypeIQ2_XXS: {"IQ2_XXS", 256, 66},
	TypeIQ2_XS:  {"IQ2_XS", 256, 74},
	TypeIQ3_XXS: {"IQ3_XXS", 256, 98},
	TypeIQ1_S:   {"IQ1_S", 256, 50},
	TypeIQ4_NL:  {"IQ4_NL", 32, 18},
	TypeIQ3_S:   {"IQ3_S", 256, 110},
	TypeIQ2_S:   {"IQ2_S", 256, 82},
	TypeIQ4_XS:  {"IQ4_XS", 256, 136},
	TypeI8:      {"I8", 1, 1},
	TypeI16:     {"I16", 1, 2},
	TypeI32:     {"I32", 1, 4},
	TypeI64:     {"I64", 1, 8},
	TypeF64:     {"F64", 1, 8},
	TypeIQ1_M:   {"IQ1_M", 256, 56},
	TypeBF16:    {"BF16", 1, 2},
	TypeTQ1_0:   {"TQ1_0", 256, 54},
	TypeTQ2_0:   {"TQ2_0", 256, 66},
	TypeMXFP4:   {"MXFP4", 32, 17},
	TypeNVFP4:   {"NVFP4", 64, 36},
	TypeQ1_0:    {"Q1_0", 128, 18},
	TypeQ2_0:    {"Q2_0", 64, 18},
}

// String returns ggml's name of the type ("F32", "Q8_0", "MXFP4", ...), or
// "Type(N)" for an unknown id.
func (t Type) String() string {
	if ti, ok := typeTable[t]; ok {
		return ti.name
	}
	return "Type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Known reports whether t is a type this package knows the geometry of.
// Files with other type ids are rejected on read and on write.
func (t Type) Known() bool {
	_, ok := typeTable[t]
	return ok
}

// BlockSize returns the number of elements in one block: 1 for the plain
// element types (F32, F16, BF16, F64, I8..I64), 32 for Q8_0, Q4_0 and
// MXFP4, 64 for NVFP4, 256 for the K-quants, and 0 for an unknown type.
// A tensor's innermost dimension ne[0] must be a multiple of it.
func (t Type) BlockSize() int { return typeTable[t].blockSize }

// BlockBytes returns the size in bytes of one block (of one element for
// the plain element types), or 0 for an unknown type.
func (t Type) BlockBytes() int { return typeTable[t].blockBytes }

// BitsPerValue is what an element of type t costs in a tensor, block
// scales included: 8·BlockBytes/BlockSize (0 for an unknown type).
func (t Type) BitsPerValue() float64 {
	if t.BlockSize() == 0 {
		return 0
	}
	return float64(8*t.BlockBytes()) / float64(t.BlockSize())
}

// Quantized reports whether t stores elements in blocks of more than one
// element. GGUF files holding such tensors must carry
// general.quantization_version.
func (t Type) Quantized() bool { return typeTable[t].blockSize > 1 }

// Searches reports whether Quantize's quantizer of type t searches for its
// scales, and so weights its error by an importance vector: the K-quants,
// IQ4_NL, IQ4_XS, Q4_1, Q5_0, Q5_1, and Q4_0 when an importance vector is
// given (without one, Q4_0 is ggml's rule). Q8_0, MXFP4 and the plain types
// have no search an importance vector could weight.
func Searches(t Type) bool { return codecs[t].Weighted }

// LookupType returns the type ggml names name ("Q4_K", as Type.String gives
// it), and false for a name of no type.
func LookupType(name string) (Type, bool) {
	for t, ti := range typeTable {
		if ti.name == name && name != "" {
			return t, true
		}
	}
	return 0, false
}

// Size returns the number of bytes that n elements of type t occupy. ok is
// false if t is unknown, n is negative or not a multiple of the block
// size, or the size overflows an int64.
func (t Type) Size(n int64) (size int64, ok bool) {
	ti, known := typeTable[t]
	if !known || n < 0 || n%int64(ti.blockSize) != 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(n/int64(ti.blockSize)), uint64(ti.blockBytes))
	if hi != 0 || lo > 1<<63-1 {
		return 0, false
	}
	return int64(lo), true
}
