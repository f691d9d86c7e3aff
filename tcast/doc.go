// Package tcast casts float32 tensors to scaled low-precision datatypes and
// moves them between their dequantized, coded and bit-packed forms.
//
// A [DataType] is an element number format (package dtype) plus an optional
// scale spec (package scale): which format holds the block scales, the zero
// points and a second-level tensor scale, and over which tiles one scale is
// shared. [Lookup] finds a datatype by name — every predefined datatype of
// TensorCast (mxfp4, mxint8, nvf4, mx9, int8_fc, uint4_ff32, ...), our own
// (nvfp4, int4_g128, uint8_channel, fp8e4_block128, ...), or any
// "<element>_<scale spec>" code such as "e2m1_e8m0_t32" — and [New] builds one
// from parts. Codebook datatypes (mxfi4, nf4, icb44fi2_e32s8, ...; see
// package codebook) store table indices plus a per-subtile meta part naming
// the table; [NewCodebook] builds them.
//
// [Cast] quantizes a row-major tensor along any axis and returns a [Tensor]
// in one of three forms ([Form]): Virtual (the dequantized values), Actual
// (one code per element, scale, zero point and meta field) or Compressed (the
// same codes bit-packed, LSB first). [Compress] and [Expand] convert between
// Actual and Compressed, [Validate] checks a tensor built by hand or read
// from a file, and [Decompress] dequantizes any form back to float32 —
// bit for bit the values of the virtual cast.
//
// A scale spec may end in n<N>m<M>, N:M structured sparsity along the scaled
// axis (e2m1_e8m0_t32n2m4 is MXFP4 with 2:4): Cast prunes first (by
// magnitude, or as Options.Pruning or Options.Keep say), takes each block's
// scale from its kept values, counts a tile in kept values (T of them span
// T·M/N elements), and keeps the mask in the tensor; the Compressed form
// holds only the kept codes. docs/SPARSITY.md §6 of the repository has the
// rules.
//
// The arithmetic (rounding, saturation, the scale-selection modes, the
// zero, NaN and Inf block policies, NVFP4's two-level scale and the order of
// its multiplications, zero points) is specified in docs/NUMERICS.md of the
// repository; the names and their TensorCast meanings in docs/TENSORCAST.md;
// the byte layout a checkpoint stores in docs/FORMAT.md.
package tcast
