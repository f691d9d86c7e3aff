package castdir

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// readOr returns the bytes of path, or nil when it does not exist.
func readOr(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// FuzzOpen writes arbitrary info.json, packed.npy and part file bytes into a
// directory and checks that Open, Tensor and Float32 return an error or
// values, never panic, and that Float32 gives one value per element.
func FuzzOpen(f *testing.F) {
	for _, c := range goldenCases {
		g := filepath.Join("testdata", "golden", c.name)
		codes := readOr(filepath.Join(g, "scale_codes.npy"))
		if codes == nil {
			codes = readOr(filepath.Join(g, "tensor_scale_codes.npy"))
		}
		part := readOr(filepath.Join(g, "scale.npy"))
		f.Add(readOr(filepath.Join(g, InfoFile)), readOr(filepath.Join(g, PackedFile)), part, codes)
	}
	var one bytes.Buffer
	if err := npy.Write(&one, npy.Uint8, []int{1}, []byte{0x81}); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"datatype":{"code":"int8"},"shape":[],"axis":0,"form":"compressed","parts":[{"name":"data","shape":[1],"storage":"packed8","format":"int8","bits":8,"file":"packed.npy"}]}`),
		one.Bytes(), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, info, packed, part, codes []byte) {
		dir := t.TempDir()
		write := func(name string, b []byte) {
			if b != nil {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		write(InfoFile, info)
		write(PackedFile, packed)
		for _, name := range []string{"scale.npy", "zero.npy", "meta.npy", "mask.npy", "tensor_scale.npy"} {
			write(name, part)
		}
		for _, name := range []string{"scale_codes.npy", "zero_codes.npy", "tensor_scale_codes.npy"} {
			write(name, codes)
		}
		d, err := Open(dir)
		if err != nil {
			return
		}
		d.Files()
		if _, err := d.Tensor(); err != nil {
			return
		}
		v, shape, err := d.Float32()
		if err != nil {
			return
		}
		n, err := checkedProduct(shape)
		if err != nil || n != len(v) {
			t.Fatalf("%d values for shape %v", len(v), shape)
		}
	})
}
