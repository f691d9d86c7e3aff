// Package imatrix reads and writes importance matrices as llama.cpp's
// llama-imatrix tool writes them, in its GGUF format and in the older .dat
// format, and gives each weight tensor's per-column importance: the mean
// square of the activations that multiplied that column, which the
// quantizers of this toolkit take to weight their squared error.
//
// # Formats
//
// A GGUF imatrix is a GGUF v3 file with general.type = "imatrix" and three
// metadata keys: imatrix.datasets (an array of strings, the calibration
// files), imatrix.chunk_count (uint32, the number of chunks the matrix was
// computed on) and imatrix.chunk_size (uint32, tokens per chunk). For each
// weight W (named as in a GGUF model, "blk.0.attn_q.weight") it holds two
// F32 tensors: W.in_sum2 of ggml dimensions [cols, matrices], the sums of
// squared activations per input column of each matrix (one matrix for a
// dense weight, one per expert for a 3-D mixture-of-experts weight), and
// W.counts of dimensions [1, matrices], how many activation rows each sum
// adds up. An optional W.in_sum (plain sums, same size as W.in_sum2) is
// checked and otherwise ignored; other tensors are ignored, as llama.cpp
// ignores them. The importance of column i of matrix j is
// in_sum2[j][i] / counts[j]; a matrix with a zero count (an expert no
// calibration token reached) gets importance 1 for every column, as
// llama-quantize does.
//
// A .dat imatrix is little-endian: an int32 entry count, then per entry an
// int32 name length, the name, an int32 ncall, an int32 value count nval
// and nval float32 values; optionally followed by an int32 chunk count and
// an int32 length and the dataset name. Its values are already means
// scaled by ncall, so the importance is value / ncall (the value itself
// when ncall is 0). The format keeps no per-expert split: an expert
// weight's entry is one vector of cols × experts values, split by the
// caller's column count.
//
// # Strictness
//
// Read and Parse reject anything llama.cpp would fail on and more: every
// count and length is checked against the bytes left before anything is
// allocated for it; names are 1 to 63 bytes without NUL (ggml's limit);
// duplicate names, negative counts, non-finite or negative sums of squares,
// sizes that do not divide, missing or mistyped metadata keys, and
// trailing bytes after a .dat trailer are errors. Every problem is a
// *FormatError naming the file, the entry or key, and the byte offset.
// Nothing in the input can make the reader panic.
//
// # Lookup
//
// Importance(name, cols, experts) returns one vector of cols values per
// expert (one for a dense weight). A name the file lacks gives a
// *LookupError (errors.Is ErrNoEntry) listing the closest names it has; a
// size that does not match gives a *SizeError.
//
// # Writing
//
// Write and WriteFile store Stats (per weight: Σx² per column and matrix,
// the activation counts, optionally Σx) in either format, laid out byte
// for byte as llama-imatrix saves them (the GGUF golden in testdata was
// written by ggml's own writer and is reproduced exactly; llama.cpp's own
// loader reads what Write writes, see TestLlamaCppLoadsOurs). Imatrix.Stats
// turns a parsed file back into Stats, to convert between the formats.
// ReadNPZ reads Stats from a NumPy .npz archive named like the GGUF
// tensors, the hand-off format of the calibration script
// cmd/tcast/testdata/llama_imatrix.py that stands in for llama-imatrix
// (docs/GGUF.md §2.6).
package imatrix
