package safetensors

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the seed files in testdata")

// seedFiles are small hand-built files stored in testdata as fuzz seeds:
// valid_* must open, bad_* must not.
func seedFiles() map[string][]byte {
	return map[string][]byte{
		"valid_f32_2x2.safetensors": build(`{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}      `,
			le32(1, -2, 0.5, 1e30)),
		"valid_mixed.safetensors": validFile(),
		"valid_empty.safetensors": build(`{}      `),
		"valid_subbyte.safetensors": build(`{"__metadata__":{"format":"pt"},`+
			`"e":{"dtype":"F8_E8M0","shape":[2],"data_offsets":[0,2]},`+
			`"f4":{"dtype":"F4","shape":[2,2],"data_offsets":[2,4]},`+
			`"f6":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[4,7]},`+
			`"n":{"dtype":"F8_E4M3FNUZ","shape":[1],"data_offsets":[7,8]},`+
			`"c":{"dtype":"C64","shape":[1],"data_offsets":[8,16]}}`,
			[]byte{0x7f, 0x80, 0x21, 0x43, 1, 2, 3, 0x40}, le32(1, -1)),
		"bad_overlap.safetensors": build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`,
			make([]byte, 12)),
		"bad_hole.safetensors": build(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}}`,
			make([]byte, 5)),
		"bad_duplicate.safetensors": build(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`,
			[]byte{1, 2}),
		"bad_truncated.safetensors":     build(`{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}}`, make([]byte, 9)),
		"bad_size.safetensors":          build(`{"a":{"dtype":"BF16","shape":[3],"data_offsets":[0,4]}}`, make([]byte, 4)),
		"bad_metadata.safetensors":      build(`{"__metadata__":{"n":1},"a":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}`, []byte{1}),
		"bad_dtype.safetensors":         build(`{"a":{"dtype":"F8_E4M3FN","shape":[1],"data_offsets":[0,1]}}`, []byte{1}),
		"bad_header_length.safetensors": append([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0}, "{}"...),
	}
}

func TestSeedFiles(t *testing.T) {
	for name, want := range seedFiles() {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join("testdata", name)
			if *update {
				require.NoError(t, os.WriteFile(p, want, 0o644))
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err, "run go test -update to create the seed files")
			assert.Equal(t, want, got)
			f, err := Open(p)
			if strings.HasPrefix(name, "valid_") {
				require.NoError(t, err)
				require.NoError(t, f.Close())
				return
			}
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, p, fe.Path)
		})
	}
}

func FuzzOpen(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.safetensors"))
	require.NoError(f, err)
	require.NotEmpty(f, files)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, c := range badCases() {
		f.Add(c.file)
	}
	var buf bytes.Buffer
	require.NoError(f, Encode(&buf, []Tensor{
		{Name: "a", DType: F16, Shape: []int{2}, Data: le16(0x3c00, 0x7e00)},
		{Name: "b", DType: F8E5M2, Shape: []int{1, 1}, Data: []byte{0x3c}},
		{Name: "c", DType: I64, Shape: []int{}, Data: make([]byte, 8)},
	}, map[string]string{"k": "v"}))
	f.Add(buf.Bytes())

	f.Fuzz(func(t *testing.T, in []byte) {
		const name = "fuzz.safetensors"
		file, err := OpenReader(bytes.NewReader(in), int64(len(in)), name)
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, name, fe.Path)
			require.Contains(t, err.Error(), name)
			return
		}
		// The tensors tile the data buffer up to the end of the file, and
		// every tensor can be read.
		end := file.DataOffset()
		var tensors []Tensor
		for _, ti := range file.Tensors() {
			require.Equal(t, end, ti.Offset, ti.Name)
			end += ti.Size
			b, err := file.Bytes(ti.Name)
			require.NoError(t, err)
			require.Equal(t, in[ti.Offset:ti.Offset+ti.Size], b)
			require.Equal(t, ti.NumElements()*int64(ti.DType.BitSize()), 8*ti.Size)
			if canFloat32(ti.DType) {
				v, err := file.Float32s(ti.Name)
				require.NoError(t, err)
				require.Len(t, v, int(ti.NumElements()))
			}
			tensors = append(tensors, Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: b})
		}
		require.Equal(t, int64(len(in)), end)

		// Whatever was accepted can be written back and reads the same.
		var out bytes.Buffer
		require.NoError(t, Encode(&out, tensors, file.Metadata()))
		again, err := OpenReader(bytes.NewReader(out.Bytes()), int64(out.Len()), "again")
		require.NoError(t, err)
		require.Equal(t, file.Metadata(), again.Metadata())
		require.Len(t, again.Tensors(), len(tensors))
		for _, want := range tensors {
			got, ok := again.Tensor(want.Name)
			require.True(t, ok)
			require.Equal(t, want.DType, got.DType)
			require.Equal(t, want.Shape, got.Shape)
			b, err := again.Bytes(want.Name)
			require.NoError(t, err)
			require.Equal(t, want.Data, b)
		}
	})
}
