package filetype

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// safetensorsFile is a file whose header is hdr, as the format lays it
// out (an 8-byte little-endian length, then the JSON).
func safetensorsFile(hdr string) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, uint64(len(hdr))), hdr...)
}

// TestDetect: each kind of file from its first bytes (and a JSON
// document's keys), each kind of directory from what it holds.
func TestDetect(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
		want Type
	}{
		{"model.safetensors", safetensorsFile(`{"w":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}`), Safetensors},
		{"empty header.safetensors", safetensorsFile(`{}`), Safetensors},
		{"m.gguf", []byte("GGUF\x03\x00\x00\x00rest"), GGUF},
		{"a.npy", []byte("\x93NUMPY\x01\x00v\x00{'descr'"), NPY},
		{"a.npz", []byte("PK\x03\x04\x14\x00"), Zip},
		{"empty.zip", []byte("PK\x05\x06" + strings.Repeat("\x00", 18)), Zip},
		{"old.bin", []byte("\x80\x02\x8a\x0alz\xfc\x9cF\xf9 j\xa8P\x19."), Pickle},
		{"model.safetensors.index.json", []byte(`{"metadata": {"total_size": 4}, "weight_map": {"w": "a.safetensors"}}`), Index},
		{"config.json", []byte(`{"architectures": ["LlamaForCausalLM"], "hidden_size": 8}`), Config},
		{"config2.json", []byte(`  {"hidden_size": 8, "model_type": "llama"}`), Config},
		{"tokenizer.json", []byte(`{"version": "1.0", "model": {"type": "BPE"}}`), JSON},
		{"list.json", []byte(`[1, 2]`), JSON},
		{"cut.json", []byte(`{"metadata": {"total_size"`), JSON},
		{"text.txt", []byte("this is not a checkpoint at all\n"), Unknown},
		{"short", []byte("ab"), Unknown},
		{"empty", nil, Unknown},
		{"small length, no brace", append(binary.LittleEndian.AppendUint64(nil, 2), "xx"...), Unknown},
		{"cut short.safetensors", append(binary.LittleEndian.AppendUint64(nil, 100), "{}"...), Safetensors},
		{"length past the limit", append(binary.LittleEndian.AppendUint64(nil, 100_000_001), "{}"...), Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			require.NoError(t, os.WriteFile(p, tc.data, 0o644))
			assert.Equal(t, tc.want, Detect(p), tc.want.String())
		})
	}
	assert.Equal(t, Unknown, Detect(filepath.Join(dir, "missing")))

	mk := func(name string, files ...string) string {
		d := filepath.Join(dir, name)
		require.NoError(t, os.Mkdir(d, 0o755))
		for _, f := range files {
			require.NoError(t, os.WriteFile(filepath.Join(d, f), nil, 0o644))
		}
		return d
	}
	assert.Equal(t, CastDir, Detect(mk("cast", "info.json", "codes.npy")))
	assert.Equal(t, Checkpoint, Detect(mk("ck", "config.json", "model.safetensors")))
	assert.Equal(t, Checkpoint, Detect(mk("ckg", "m.gguf")))
	assert.Equal(t, Checkpoint, Detect(mk("cki", "model.safetensors.index.json")))
	assert.Equal(t, Dir, Detect(mk("other", "notes.txt")))
}

// TestHeaderFits: the first 8 bytes as a safetensors header length.
func TestHeaderFits(t *testing.T) {
	b := binary.LittleEndian.AppendUint64(nil, 10)
	assert.True(t, HeaderFits(b, 18))
	assert.False(t, HeaderFits(b, 17))
	assert.False(t, HeaderFits(b[:7], 18))
	assert.False(t, HeaderFits(b, 4))
}

// TestString: every kind has a name.
func TestString(t *testing.T) {
	for k := Unknown; k <= Dir; k++ {
		assert.NotEmpty(t, names[k], "kind %d", k)
	}
	assert.Equal(t, "unknown", Type(200).String())
	assert.Equal(t, "npy", NPY.String())
}
