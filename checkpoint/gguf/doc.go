// Package gguf reads and writes GGUF v3 files, the checkpoint format of
// ggml and llama.cpp, and converts between float32 and the ggml block
// formats: Q8_0, Q4_0, MXFP4, NVFP4, Q4_1, Q5_0, Q5_1, IQ4_NL, the
// K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and Q8_K, IQ4_XS, the ternary
// TQ1_0 and TQ2_0, and Q1_0 and Q2_0.
//
// # Reading
//
// Open (or Read, for any io.ReaderAt) parses the header: the metadata
// key/value pairs of all 13 value types, arrays included, in file order,
// and the tensor infos. Open maps the file read-only where the platform
// allows it. Tensor data is read on demand: TensorBytes returns a copy of
// the raw blocks, TensorData and TensorRange views of the mapping (copies
// of a file that is not mapped), and Float32s dequantizes F32, F16, BF16, F64, the integer
// types, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, the K-quants, IQ4_XS,
// TQ1_0, TQ2_0, Q1_0, Q2_0, MXFP4 and NVFP4 to float32 in row-major order.
//
// Decoding is defensive. Every count, string length, array length and
// tensor byte range is checked against the file size before anything is
// allocated for it; dimension products and byte sizes are checked for
// overflow; tensors must be aligned, inside the file and disjoint; names
// are at most 63 bytes (ggml's limit), tensors have at most 4 dimensions,
// the innermost dimension of a block type is a multiple of its block size,
// and unknown type ids, duplicate keys and duplicate tensor names are
// rejected. Versions other than 3 and big-endian files are rejected. Every
// problem in the input is a *FormatError naming the file, the tensor or
// key, and the byte offset. Nothing in the input can make the reader
// panic.
//
// # Dimension order
//
// GGUF stores dimensions in ggml ne order, innermost (contiguous) first:
// TensorInfo.Dims is that order, and TensorInfo.Shape the reverse, the
// row-major order of PyTorch and safetensors. A linear layer's weight of
// torch shape [out, in] has Dims [in, out]. Writer.AddTensor takes the
// row-major shape and reverses it.
//
// # Writing
//
// Writer lays a file out as ggml does: metadata, tensor infos, padding to
// general.alignment (default 32), and each tensor's data padded to the
// alignment. It requires general.architecture (except in a file whose
// general.type is not "model", such as an importance matrix) and adds
// general.quantization_version = 2 when a tensor is quantized.
// Writer.WriteFile is atomic: a temporary file in the target directory is
// synced and renamed over the target. Writer.Create does the same for
// tensors declared with DeclareTensor and written through a Stream, in
// declaration order (Stream.Write) or in pieces at their place, in any
// order and from several goroutines (Stream.WriteAt).
//
// # Block formats
//
// Quantize and Dequantize convert between float32 and the blocks of any
// type, through the codec table of the kernels package (one entry per
// block format); Searches says which quantizers weigh an importance
// vector, CanFloat32 which types decode.
//
//   - Q8_0 and, without an importance vector, Q4_0 are ggml's reference
//     quantizers (quantize_row_q8_0_ref, quantize_row_q4_0_ref) bit for bit
//     on finite input. Q8_0: d = amax/127, q = roundf(x/d) (ties away from
//     zero), clamped to ±127. Q4_0: d = max/−8 (max the element of largest
//     magnitude, with its sign), q = min(15, trunc(x/d + 8.5)), value
//     (q−8)·d. d is stored as float16 (nearest even, overflow to Inf), so a
//     value decodes as q·f16(d); a NaN element gets the code of 0.
//   - TQ1_0, TQ2_0, Q1_0 and Q2_0 (one float16 scale per block, codes
//     −1..1, −1..1, ±1 and −1..2) are ggml's reference quantizers bit for
//     bit, and ignore an importance vector as ggml's do. TQ1_0 and TQ2_0:
//     d = amax, q = round(x/d); Q1_0: d = mean |x|, the sign bit; Q2_0:
//     d = amax, q = clamp(round(x/d), −1, 2).
//   - MXFP4 is the toolkit's MXFP4 cast (tcast.Cast to mxfp4 with its
//     defaults: floor scales, round to nearest even, saturation;
//     docs/NUMERICS.md §4), written straight into ggml's blocks. ggml's own
//     quantize_row_mxfp4 rounds ties toward the smaller magnitude instead.
//     Decoding gives e2m1(q)·2^(e−127) exactly, which is ggml's value
//     except that code 8 is −0 (ggml: +0) and scale byte 0xFF is NaN.
//   - NVFP4 decodes as e2m1(q)·scale, the UE4M3 scale byte read as ggml's
//     ggml_ue4m3_to_fp32 (times 2, since ggml halves it to match its
//     doubled E2M1 table): 0x00 and 0x7F give 0. Code 8 is −0 (ggml: +0).
//     There is no NVFP4 quantizer; the per-tensor FP32 scale of NVFP4 has
//     no place in the block (llama.cpp stores it as a tensor of its own).
//   - The decoders of Q4_1, Q5_0, Q5_1, IQ4_NL, the K-quants and IQ4_XS
//     give exactly the floats of ggml's dequantize_row_* functions. Their
//     quantizers, and Q4_0's with an importance vector, choose scales and
//     mins by minimising the squared error, optionally weighted per column
//     by an importance vector such as llama.cpp's imatrix; their
//     signal-to-noise ratio is at least that of ggml's quantizers on the
//     same input (testdata/gen_ggml.py makes the golden files that check
//     both against ggml itself).
//
// GGUF's 4-bit layouts differ from the toolkit's default adjacent-pair
// packing (docs/NUMERICS.md §10): in Q4_0 and MXFP4 blocks of 32 elements,
// byte j holds element j in its low nibble and element j+16 in its high
// nibble; in each 16-element NVFP4 sub-block, byte j holds elements j and
// j+8. SplitBlocks splits Q8_0, Q4_0, MXFP4 and NVFP4 blocks into one code
// per element and the scale bytes as stored, and JoinBlocks lays codes and
// scales computed elsewhere (by the toolkit's casts, say) out as the same
// blocks. UnpackBlocks and PackBlocks do the same for Q4_1, Q5_0, Q5_1,
// IQ4_NL, the K-quants and IQ4_XS, with a float32 scale (and min) per
// sub-block.
//
// Programmer errors, such as slices of mismatched lengths passed to the
// block codecs, panic; problems in files are errors.
package gguf
