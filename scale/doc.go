// Package scale describes how a tensor is scaled: the scale spec grammar (which
// number formats hold the scale, the zero point and a second-level tensor scale, and
// over which tiles one scale is shared) and the selection of scale values.
//
// # Scale specs
//
// A scale spec is a string such as "e8m0_t32" (OCP MX: one E8M0 scale per 32
// elements) or "multi_ue4m3_float32_t16" (NVFP4: an unsigned E4M3 scale per 16
// elements times one float32 scale per tensor). [Parse] turns it into a [Spec] with
// explicit roles; [Spec.String] gives the canonical spelling back. The grammar is
// TensorCast's (triton branch, docs/TENSORCAST.md §2) with its bugs fixed and the
// subtile exponent offsets of its v2 grammar added:
//
//	spec   = ["multi_"] nspec ["_" nspec ["_" nspec]] ["_" tile ["_" tile]]
//	nspec  = a number format name accepted by dtype.Parse
//	tile   = "t" [T] ["s" S] ["o" O] ["n" N "m" M]
//
// Parse lower-cases the spec and trims surrounding white space; white space inside
// it is an error. Segments are separated by single underscores; an empty segment
// (doubled, leading or trailing "_") is an error.
//
// # Number specs
//
// Number specs are dtype names, which may themselves contain underscores
// ("float8_e4m3fn", "float8_e8m0fnu"). Parse splits the spec on "_" and, from left
// to right, joins tokens into the longest prefix that dtype.Parse accepts. A token
// that starts with "t" followed by a digit, by "s", "o" or "n" and a digit, or by
// nothing ("t", "t32", "t0", "ts4", "t16s4o1n2m4") starts the tile segments. Number
// specs are written back with their canonical dtype names (dtype.Format.Name), so
// "e4m3fn_t32" prints as "float8_e4m3fn_t32". An unknown name is an error that
// names the segment and carries dtype's closest known names.
//
// There are one to three number specs. Their roles:
//
//	S            Scale
//	S_Z          Scale, Zero (asymmetric: zero point)
//	T_S_Z        TensorScale, Scale, Zero (TensorCast's order for three specs)
//	multi_S_T    Scale, TensorScale
//	multi_S_Z_T  Scale, Zero, TensorScale
//
// With the "multi_" prefix the last number spec is always the second-level
// per-tensor scale, so "multi_ue4m3_float32_t16" is NVFP4's E4M3 block scale with
// an fp32 tensor scale, as TensorCast's documentation intends. TensorCast's code
// reads "multi_A_B" the other way round (A the tensor scale); that bug is not
// copied here (docs/TENSORCAST.md §6, item 6). Without "multi_", two specs are always Scale and Zero, and three
// are TensorScale, Scale, Zero as in TensorCast. [Spec.String] uses the "multi_"
// form whenever TensorScale is set.
//
// # Tile segments
//
// No tile segment means one scale for the whole tensor. One tile segment is a 1-D
// tile along the scaled axis (which axis that is, is the caller's choice, usually
// the last). Two tile segments are a 2-D tile: the first on the dimension before the
// scaled axis, the second on the scaled axis. In a tile segment:
//
//   - T is the tile size: 0 (the whole dimension: channel scaling) or a power of two
//     in 2..1024. A bare "t" means 0 (TensorCast's documentation promises this; its
//     code crashes on it). [Spec.String] writes channel tiles as "t0".
//   - s<S> splits the tile into subtiles of S elements. S is a power of two >= 2
//     that divides T (any power of two >= 2 when T is 0). TensorCast's divisibility
//     check is wrong and accepts s3 (docs/TENSORCAST.md §6, item 7); here s3 is an error. S equal to T is
//     accepted and kept as written.
//   - o<O> gives every subtile an exponent offset of O bits, O = 1 or 2 (TensorCast
//     v2, MSFP-style MX9/MX6/MX4). It needs s<S> and an exponent scale (e8m0).
//   - n<N>m<M> is N:M structured sparsity inside the tile: N values are kept out of
//     every M. M is 2, 4, 8 or 16, 1 <= N < M, and M divides S (when given) and T
//     (when not 0). It is allowed on the last tile segment only.
//
// The parts come in the order shown. There are at most two tile segments, and two
// channel tiles ("t0_t0", the whole tensor) are an error: write no tile instead.
// TensorCast's tile range is 4..256; this package takes v2's 2..1024.
//
// # Checks
//
//   - A number spec after a tile segment, more than three number specs, a tile
//     segment with no number spec before it, and "multi_" with fewer than two
//     number specs are errors.
//   - A TensorScale needs at least one tile segment (scaling a tensor twice by one
//     scale each is one scale) and must be a float format.
//   - With a zero point the Scale must be a float format (not an exponent or integer
//     format), and the Zero must be a float or an integer format, signed or
//     unsigned (not an exponent format). TensorCast refuses unsigned zero points;
//     they are accepted here so that uint8 data can carry the uint8 zero points
//     0..255 it needs ("float32_uint8_t0"), as compressed-tensors stores them.
//     Note that "int8" is the plain integer here (dtype's reading), where
//     TensorCast reads it as fixed point e1m6b1fnuz.
//   - Subtile offsets (o<O>) need an exponent Scale.
//
// Parse checks only the formats' kinds. The values of an integer zero point are the
// business of scale selection, which must keep them within the zero format's range
// (TensorCast does not check it; docs/TENSORCAST.md §6, item 9).
//
// Every error is a *[ParseError] naming the spec, the offending segment and what
// was expected, for example
//
//	scale: bad spec "e8m0_t3": segment "t3": tile size 3 is not 0 or a power of two in 2..1024
package scale
