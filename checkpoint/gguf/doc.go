// Package gguf reads and writes GGUF v3 files, the checkpoint format of
// ggml and llama.cpp, and converts between float32 and the ggml block
// formats: Q8_0, Q4_0, MXFP4, NVFP4, Q4_1, Q5_0, Q5_1, IQ4_NL, the
// K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and Q8_K, and IQ4_XS.
//
// # Reading
//
// Open (or Read, for any io.ReaderAt) parses the header: the metadata
// key/value pairs of all 13 value types, arrays included, in file order,
// and the tensor infos. Tensor data is read on demand: TensorBytes returns
// the raw blocks and Float32s dequantizes F32, F16, BF16, F64, the integer
// types, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, the K-quants, IQ4_XS, MXFP4
// and NVFP4 to float32 in row-major order.
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
// # Block layouts
//
// GGUF's 4-bit layouts differ from the toolkit's default adjacent-pair
// packing (docs/NUMERICS.md §10): in Q4_0 and MXFP4 blocks of 32 elements,
// byte j holds element j in its low nibble and element j+16 in its high
// nibble; in each 16-element NVFP4 sub-block, byte j holds elements j and
// j+8. PackMXFP4 and PackNVFP4 take E2M1 codes and scale bytes computed by
// the toolkit's casts and lay them out as ggml blocks; UnpackMXFP4 and
// UnpackNVFP4 invert them. QuantizeQ8_0 and QuantizeQ4_0 reproduce ggml's
// reference quantizers bit for bit; PackQ8_0 and PackQ4_0 lay out codes and
// float16 scales chosen elsewhere as the same blocks, and UnpackQ8_0 and
// UnpackQ4_0 split blocks back into codes and scales.
//
// The decoders of Q4_1, Q5_0, Q5_1, IQ4_NL, the K-quants and IQ4_XS
// (DequantizeQ4_K, ..., and Dequantize for any type) give exactly the
// floats of ggml's dequantize_row_* functions. Their quantizers
// (QuantizeQ4_K, ..., and Quantize) choose scales and mins by minimising
// the squared error, optionally weighted per column by an importance
// vector such as llama.cpp's imatrix; their signal-to-noise ratio is at
// least that of ggml's quantizers on the same input (testdata/gen_ggml.py
// makes the golden files that check both against ggml itself).
// UnpackBlocks and PackBlocks convert such blocks to and from one code per
// element with a float32 scale (and min) per sub-block.
//
// Programmer errors, such as slices of mismatched lengths passed to the
// block codecs, panic; problems in files are errors.
package gguf
