// Package safetensors reads and writes safetensors files and sharded
// safetensors checkpoints.
//
// A safetensors file is a little-endian u64 header length N, N bytes of
// UTF-8 JSON mapping tensor names to {"dtype", "shape", "data_offsets"}
// (plus an optional "__metadata__" map of strings), and a data buffer the
// tensors tile back to back. Every dtype of the current format is known,
// including the sub-byte F4 and F6 types, F8_E8M0, C64 and the FNUZ 8-bit
// floats (see DType).
//
// Reading is defensive and enforces every rule of the reference (Rust)
// reader: N is at most 100,000,000 and fits in the file, checked before
// anything is allocated; the JSON starts with '{' and may be followed by
// whitespace only; no key repeats (the header is walked token by token,
// since encoding/json keeps the last of repeated keys); __metadata__ holds
// strings only; each tensor's byte count equals its element count times its
// bit size over 8, with no overflow and no partial byte; and the tensors,
// sorted by offset, cover the data buffer exactly, with no hole and no
// overlap, up to the end of the file. Every violation is a *FormatError
// naming the file, the tensor and the offset. Fields of a tensor entry
// other than dtype, shape and data_offsets are ignored, as upstream does.
// One deliberate difference: a dimension above math.MaxInt is rejected even
// in a tensor that is empty because of another zero dimension.
//
// Limits beyond the reference's, so that the work spent on a header is
// bounded whatever it declares: a header declares at most MaxTensors
// (262,144) tensors and as many __metadata__ keys, a shape has at most
// MaxRank (64) dimensions, data_offsets exactly two, and an index's
// weight_map names at most MaxTensors tensors. Each is checked while the
// JSON is walked, so a 100 MB header of empty tensors is refused after the
// first MaxTensors entries. See docs/FORMAT.md.
//
// Open memory-maps a file read-only (on Linux and macOS) so Bytes returns
// zero-copy views; OpenReader reads any io.ReaderAt and copies. Writers
// follow the reference writer's layout exactly: tensors sorted by
// descending dtype order and then by name, header JSON padded with spaces
// to a multiple of 8. Create streams tensor data into a temporary file that
// Close syncs and renames into place, so a failed or abandoned write never
// leaves a partial file under the final name. The header fixes every
// tensor's place first, so its data may come appended (Writer.Write) or in
// pieces at their place, in any order and from several goroutines
// (Writer.WriteAt); Close checks that every byte was written once.
//
// Sharded checkpoints (model-00001-of-0000N.safetensors files plus
// model.safetensors.index.json) are read by OpenIndex, which cross-checks
// the index against the shards, and written by WriteSharded.
//
// All data is little-endian and row-major. For sub-byte dtypes the shape
// counts logical elements; note that real loaders store packed FP4 and E8M0
// scales as U8, so write U8 for interoperability and accept F4 and F8_E8M0
// on read.
package safetensors
