package safetensors_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	err = safetensors.WriteFile(path, []safetensors.Tensor{
		{Name: "bias", DType: safetensors.U8, Shape: []int{3}, Data: []byte{1, 2, 3}},
		// 1.0 and -2.0 as little-endian bfloat16.
		{Name: "weight", DType: safetensors.BF16, Shape: []int{1, 2}, Data: []byte{0x80, 0x3f, 0x00, 0xc0}},
	}, map[string]string{"format": "pt"})
	if err != nil {
		log.Fatal(err)
	}

	f, err := safetensors.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(f.Metadata())
	for _, t := range f.Tensors() { // in file order: wider dtypes first
		fmt.Println(t.Name, t.DType, t.Shape, t.Offset, t.Size)
	}
	w, err := f.Float32s("weight")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w)
	// Output:
	// map[format:pt]
	// weight BF16 [1 2] 160 4
	// bias U8 [3] 164 3
	// [1 -2]
}

func ExampleCreate() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "big.safetensors")

	// Declare the tensors first; the header is written at once.
	w, err := safetensors.Create(path, []safetensors.TensorSpec{
		{Name: "table", DType: safetensors.U8, Shape: []int{2, 4}},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	// Stream the data in parts. Nothing exists under path until Close.
	for row := range 2 {
		if err := w.Write("table", []byte{byte(row), 1, 2, 3}); err != nil {
			w.Abort()
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	f, err := safetensors.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	b, err := f.Bytes("table")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b)
	// Output:
	// [0 1 2 3 1 1 2 3]
}

func ExampleOpen_errors() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bad.safetensors")
	// A header claiming 8 bytes of F32 data where the file holds 4.
	hdr := `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	file := append([]byte{byte(len(hdr)), 0, 0, 0, 0, 0, 0, 0}, hdr...)
	file = append(file, 0, 0, 0, 0)
	if err := os.WriteFile(path, file, 0o644); err != nil {
		log.Fatal(err)
	}

	_, err = safetensors.Open(path)
	fmt.Println(filepath.Base(err.(*safetensors.FormatError).Path), err.(*safetensors.FormatError).Tensor)
	fmt.Println(err.(*safetensors.FormatError).Reason)
	fmt.Println(errors.Is(err, safetensors.ErrTruncated))

	// A model's config.json where the index should be is another kind of
	// file; a shard the index lists but the directory lacks is missing.
	index := filepath.Join(dir, safetensors.IndexFileName)
	for _, content := range []string{`{"model_type": "llama"}`, `{"weight_map": {"w": "a.safetensors"}}`} {
		if err := os.WriteFile(index, []byte(content), 0o644); err != nil {
			log.Fatal(err)
		}
		_, err = safetensors.OpenIndex(index)
		fmt.Println(errors.Is(err, safetensors.ErrNotFormat), errors.Is(err, safetensors.ErrMissingFile))
	}
	// Output:
	// bad.safetensors w
	// data_offsets [0, 8] extend past the end of the file (the data buffer is 4 bytes)
	// true
	// true false
	// false true
}

func ExampleOpenIndex() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	tensors := []safetensors.Tensor{
		{Name: "a", DType: safetensors.U8, Shape: []int{4}, Data: []byte{1, 2, 3, 4}},
		{Name: "b", DType: safetensors.U8, Shape: []int{4}, Data: []byte{5, 6, 7, 8}},
	}
	if err := safetensors.WriteSharded(dir, 4, tensors, nil); err != nil {
		log.Fatal(err)
	}
	s, err := safetensors.OpenIndex(filepath.Join(dir, safetensors.IndexFileName))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println(s.Shards(), s.TotalSize())
	b, err := s.Bytes("b")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b)
	// Output:
	// [model-00001-of-00002.safetensors model-00002-of-00002.safetensors] 8
	// [5 6 7 8]
}
