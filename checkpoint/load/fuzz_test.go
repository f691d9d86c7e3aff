package load

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// fuzzFixture is one checkpoint of testdata/: its tensors, metadata and
// config files.
type fuzzFixture struct {
	tensors []safetensors.Tensor
	meta    map[string]string
	keys    []string          // meta's keys, sorted
	configs map[string][]byte // config.json, hf_quant_config.json when present
}

func loadFuzzFixture(f *testing.F, dir string) fuzzFixture {
	sf, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		f.Fatal(err)
	}
	defer sf.Close()
	x := fuzzFixture{meta: sf.Metadata(), configs: map[string][]byte{}}
	for _, ti := range sf.Tensors() {
		b, err := sf.Bytes(ti.Name)
		if err != nil {
			f.Fatal(err)
		}
		x.tensors = append(x.tensors, safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: slices.Clone(b)})
	}
	for k := range x.meta {
		x.keys = append(x.keys, k)
	}
	slices.Sort(x.keys)
	for _, n := range []string{"config.json", "hf_quant_config.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err == nil {
			x.configs[n] = b
		}
	}
	return x
}

// FuzzOpenMetadata opens the safetensors checkpoints of testdata/ (one per
// layout: tcast, compressed-tensors, modelopt, gpt-oss, fp8-block, and a
// plain source) with one metadata value replaced (the tcast.format version,
// a tcast.weight.* record, tcast.weights, tcast.rotated, the
// compressed-tensors datatype and global scale records, ...), one key
// added, and config.json and hf_quant_config.json replaced (nil: none).
// Open refuses them with an error, or every quantized weight's shape is
// about what its stored bytes hold (at its datatype's bits per value), and
// every logical tensor it lists reads as one float32 per element of its
// shape or is refused with an error; never a panic.
func FuzzOpenMetadata(f *testing.F) {
	names := []string{"tcast", "compressed-tensors", "modelopt", "gpt-oss", "fp8-block", "source"}
	var fixtures []fuzzFixture
	for i, n := range names {
		x := loadFuzzFixture(f, filepath.Join("testdata", n))
		fixtures = append(fixtures, x)
		for j, k := range x.keys {
			f.Add(uint8(i), uint8(j), x.meta[k], "", "", x.configs["config.json"], x.configs["hf_quant_config.json"])
		}
	}
	// The tcast fixture's first weight record claiming 2^30 times its rows.
	for j, k := range fixtures[0].keys {
		if strings.HasPrefix(k, layout.KeyWeightPrefix) {
			f.Add(uint8(0), uint8(j), strings.Replace(fixtures[0].meta[k], `"shape":[32,`, `"shape":[34359738368,`, 1), "", "", []byte(nil), []byte(nil))
			break
		}
	}
	f.Add(uint8(0), uint8(0), "pt", layout.KeyFormat, "2", []byte(nil), []byte(nil))
	f.Add(uint8(0), uint8(0), "pt", layout.KeyRotated, `{"model.layers.0.mlp.down_proj.weight":{"rotation":"hadamard:32","axis":1}}`, []byte(nil), []byte(nil))
	f.Add(uint8(0), uint8(0), "pt", layout.KeyTransposed, `["model.layers.0.mlp.down_proj.weight"]`, []byte(nil), []byte(nil))
	f.Add(uint8(5), uint8(0), "pt", "", "", []byte(`{"quantization_config":{"quant_method":"compressed-tensors"}}`), []byte(nil))
	f.Add(uint8(1), uint8(0), "pt", "", "", []byte(`{"quantization_config":{"quant_method":"fp8","weight_block_size":[0,-1]}}`), []byte(nil))
	f.Add(uint8(2), uint8(0), "pt", "", "", []byte(nil), []byte(`{"quantization":{"quant_algo":"NVFP4","group_size":-16}}`))

	dir := f.TempDir() // one per fuzzing process; calls in a process are sequential
	f.Fuzz(func(t *testing.T, which, pick uint8, value, key, keyValue string, config, hfQuant []byte) {
		x := fixtures[int(which)%len(fixtures)]
		meta := map[string]string{}
		for k, v := range x.meta {
			meta[k] = v
		}
		if len(x.keys) > 0 {
			meta[x.keys[int(pick)%len(x.keys)]] = value
		}
		if key != "" {
			meta[key] = keyValue
		}
		var buf bytes.Buffer
		if err := safetensors.Encode(&buf, x.tensors, meta); err != nil {
			return // a key or value safetensors cannot store
		}
		for _, n := range []string{"model.safetensors", "config.json", "hf_quant_config.json"} {
			os.Remove(filepath.Join(dir, n))
		}
		write := func(name string, b []byte) {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("model.safetensors", buf.Bytes())
		if config != nil {
			write("config.json", config)
		}
		if hfQuant != nil {
			write("hf_quant_config.json", hfQuant)
		}
		c, err := Open(dir)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		defer c.Close()
		for _, info := range c.Tensors() {
			if info.DataType != nil {
				// A quantized weight's shape is about what its stored bytes
				// hold (a converter plans its output with it): within a
				// factor of 2, since a layout that takes the shape from its
				// packed tensor's header (ModelOpt, gpt-oss) lists a weight
				// whose scales are missing, which reading it then refuses.
				n := 1.0
				for _, d := range info.Shape {
					n *= float64(d)
				}
				if claimed := n * info.DataType.BitsPerValue() / 8; claimed > 2*float64(info.Size)+1024 {
					t.Fatalf("%s: shape %v of %s claims %.0f bytes, %d stored", info.Name, info.Shape, info.DataType.Name(), claimed, info.Size)
				}
			}
			if !info.Float {
				continue
			}
			v, shape, err := c.Float32(info.Name)
			if err != nil {
				continue
			}
			n := 1
			for _, d := range shape {
				n *= d
			}
			if n != len(v) {
				t.Fatalf("%s: %d values for shape %v", info.Name, len(v), shape)
			}
			if !slices.Equal(shape, info.Shape) {
				t.Fatalf("%s: Float32 gives shape %v, Info %v", info.Name, shape, info.Shape)
			}
		}
	})
}
