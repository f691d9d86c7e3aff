package imatrix

import (
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// The keys llama-quantize adds to a model quantized with an importance
// matrix, all under KeyQuantizePrefix.
const (
	// KeyQuantizePrefix begins every key of a model's importance matrix:
	// a requantized model drops its input's and gets its own.
	KeyQuantizePrefix = "quantize.imatrix."
	// keyQuantizeFile names the importance matrix file.
	keyQuantizeFile = "quantize.imatrix.file"
	// keyQuantizeDataset names the first calibration dataset.
	keyQuantizeDataset = "quantize.imatrix.dataset"
	// keyQuantizeEntries is the number of importance entries (uint32).
	keyQuantizeEntries = "quantize.imatrix.entries_count"
	// keyQuantizeChunks is the number of chunks the matrix covers (uint32).
	keyQuantizeChunks = "quantize.imatrix.chunks_count"

	// maxKVString is the longest string llama-quantize stores in these
	// keys (its override values hold 127 bytes).
	maxKVString = 127
)

// Metadata returns the keys llama-quantize writes into a model quantized
// with this matrix: the file's base name (llama-quantize stores the path
// as given; the base name keeps local directories out of published
// files), the first dataset (when there is one), the entry count and the
// chunk count (when known). Strings are cut to 127 bytes, as
// llama-quantize cuts them.
func (m *Imatrix) Metadata() []gguf.KV {
	cut := func(s string) string {
		if len(s) > maxKVString {
			return s[:maxKVString]
		}
		return s
	}
	kvs := []gguf.KV{{Key: keyQuantizeFile, Value: gguf.String(cut(filepath.Base(m.Path)))}}
	if len(m.Datasets) > 0 {
		kvs = append(kvs, gguf.KV{Key: keyQuantizeDataset, Value: gguf.String(cut(m.Datasets[0]))})
	}
	kvs = append(kvs, gguf.KV{Key: keyQuantizeEntries, Value: gguf.Uint32(uint32(len(m.Entries)))})
	if m.ChunkCount > 0 {
		kvs = append(kvs, gguf.KV{Key: keyQuantizeChunks, Value: gguf.Uint32(uint32(m.ChunkCount))})
	}
	return kvs
}
