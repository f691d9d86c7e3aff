// Package castdir reads and writes cast directories: one tensor cast to a
// datatype, stored as NumPy .npy files plus a JSON description, as `tcast cast`
// writes them and `tcast decompress` and `tcast inspect` read them.
//
// [Write] stores a tensor in the Actual form (one code per element, see
// tcast.Actual) together with the values it was cast from; [Open] reads the
// description back, and [Dir.Tensor] and [Dir.Float32] rebuild the tensor from
// the packed data and the part files alone. docs/CASTDIR.md restates the format
// for readers in other languages.
//
// # Files
//
// Every .npy file is written in NumPy's format 1.0 (2.0 for long headers), C
// order, little endian. Files marked "(read)" are the ones [Dir.Tensor] and
// [Dir.Float32] use; the others are for people and for tests.
//
//   - codes.npy: one code per element in the input's shape, the narrowest
//     unsigned integer dtype that holds the element format's codes (uint8,
//     uint16 or uint32). Float codes are sign-magnitude with the sign in the
//     top bit; integer codes are two's complement in the format's width.
//   - dequant.npy: float32 in the input's shape, the dequantized values. It
//     equals what [Dir.Float32] returns, bit for bit.
//   - packed.npy (read): a 1-D uint8 array, the compressed element data: codes
//     of up to 8 bits as an LSB-first bit stream (element 8k+i of a 1-bit
//     format is bit i of byte k; 4-bit codes put element 2k in bits 3:0 and
//     element 2k+1 in bits 7:4; 6-bit codes are 4 codes in 3 bytes), wider
//     codes as little-endian 2- or 4-byte words.
//   - scale.npy (read): the block scales in the scale shape (one entry per
//     block along each axis). For a scale format of up to 8 bits, its codes as
//     uint8 (E8M0 exponents, UE4M3 or FP8 codes); for a wider one, the decoded
//     scales as float32, with the exact codes in scale_codes.npy.
//   - zero.npy (read): the zero points, in the scale shape. Signed integer
//     zero points of up to 8 bits are stored as int8, sign-extended from their
//     width, so they read back as the integers they are; other zero point
//     formats are stored like scale formats.
//   - tensor_scale.npy (read): the second-level tensor scale (NVFP4), shape
//     [1]: as scale.npy, float32 values plus tensor_scale_codes.npy for
//     formats wider than 8 bits.
//   - meta.npy (read): the subtile exponent offsets of MX6/MX9-style
//     datatypes, uint8, one per subtile (the element shape with the scaled
//     axis divided by the subtile size, rounded up).
//   - mask.npy (read): bool in the input's shape, the keep mask the tensor was
//     cast with (true = kept; dropped elements are stored as zero and left out
//     of the scales).
//   - <part>_codes.npy (read): for a scale, zero point or tensor scale format
//     wider than 8 bits, the exact codes as uint16 or uint32; the float32 file
//     beside it must hold their decoded values.
//   - info.json (read): the description below.
//
// # info.json
//
// A JSON object with these fields (the reader needs datatype.code, shape,
// axis, form and parts; scale_mode defaults to floor; the rest records how
// the tensor was cast):
//
//   - format: the element format's definition and constants (name, kind,
//     bits, exponent_bits, mantissa_bits, bias, special, signed, emax, emin,
//     max_finite, max_code, min_normal, min_subnormal, midmax, eps, has_inf,
//     has_negative_zero, nan_codes, nan, note), as dtype.Info has them; for
//     a codebook datatype its codebook instead (CodebookInfo: name, kind
//     "codebook", bits and index, the format of the codes, meta_bits,
//     compute, max_abs, tables).
//   - datatype: name, code, aliases, note, scaled and bits_per_value of the
//     datatype. code is what tcast.Lookup accepts; the name is kept when it
//     means the same datatype. A number format that is no tcast datatype
//     (integer and exponent formats cast without a scale) has its format name
//     as both name and code.
//   - input, input_dtype, keep: the input file, its NumPy dtype and the keep
//     mask file ("keep" is omitted without a mask).
//   - shape: the input's shape ([] for a 0-d array).
//   - codes_dtype: the dtype of codes.npy.
//   - axis: the scaled axis, 0 ≤ axis < max(len(shape), 1).
//   - scale_mode: the power-of-two scale selection (floor, ceil, even, ...).
//   - rounding (even, away, zero, stochastic), overflow (sat, ieee), seed
//     (stochastic rounding only) and full_range: the element options.
//   - bits_per_value: the exact storage cost, every part's bits over the
//     number of elements.
//   - form: always "compressed": the parts below are described as
//     tcast.Compressed holds them.
//   - parts: one object per part: name (data, scale, zero, tensor_scale, meta
//     or mask), shape (logical: one entry per element, block or subtile),
//     storage (packedK for a K-bit stream, uint16 or uint32 otherwise), format
//     (the number format's name; absent for meta and mask), bits (entry
//     width), bytes (compressed size), file and file_dtype (the .npy file
//     holding it and its dtype), and codes_file and codes_dtype for parts
//     stored as float32 values.
//   - stats: count, nan_inputs, clipped (finite inputs beyond ±max finite,
//     unscaled formats only), max_abs_error and sqnr_db (over finite inputs
//     with finite outputs; null when it is not a number) of the dequantized
//     values against the input.
package castdir
