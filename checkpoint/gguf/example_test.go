package gguf_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"math"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

func Example() {
	// A [2, 32] weight quantized to Q8_0, plus a [4] F32 bias.
	weight := make([]float32, 2*32)
	for i := range weight {
		weight[i] = float32(i%32-16) / 8
	}
	q8 := make([]byte, len(weight)/32*34)
	if err := gguf.Quantize(gguf.TypeQ8_0, q8, weight, nil); err != nil {
		log.Fatal(err)
	}

	var w gguf.Writer
	if err := w.AddKV("general.architecture", gguf.String("toy")); err != nil {
		log.Fatal(err)
	}
	if err := w.AddKV("toy.block_count", gguf.Uint32(1)); err != nil {
		log.Fatal(err)
	}
	if err := w.AddTensor("blk.0.w.weight", gguf.TypeQ8_0, []int{2, 32}, q8); err != nil {
		log.Fatal(err)
	}
	bias := []byte{0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0x80, 0xBF} // 1, 2, 0, -1
	if err := w.AddTensor("blk.0.w.bias", gguf.TypeF32, []int{4}, bias); err != nil {
		log.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "toy.gguf")
	if err != nil {
		log.Fatal(err)
	}
	for _, kv := range f.KV {
		fmt.Println(kv.Key, kv.Value)
	}
	for _, t := range f.Tensors {
		fmt.Println(t.Name, t.Type, "dims", t.Dims, "shape", t.Shape(), "offset", t.Offset, "bytes", t.Size)
	}
	vals, err := f.Float32s("blk.0.w.weight")
	if err != nil {
		log.Fatal(err)
	}
	// Q8_0 keeps d = f16(2/127) ≈ 0.015747, so −2 comes back as −127·d.
	fmt.Printf("%.4f %.4f\n", vals[0], vals[63])
	// Output:
	// general.architecture string("toy")
	// toy.block_count uint32(1)
	// general.quantization_version uint32(2)
	// blk.0.w.weight Q8_0 dims [32 2] shape [2 32] offset 0 bytes 68
	// blk.0.w.bias F32 dims [4] shape [4] offset 96 bytes 16
	// -1.9999 1.8739
}

func ExampleRead_errors() {
	// The kinds of problem a file can have are matched with errors.Is.
	for _, file := range []string{
		"GGML\x03\x00\x00\x00",                 // another kind of file
		"GGUF\x02\x00\x00\x00\x00\x00\x00\x00", // version 2
		"GGUF\x03\x00\x00\x00\x01",             // cut short
	} {
		_, err := gguf.Read(strings.NewReader(file), int64(len(file)), "m.gguf")
		var fe *gguf.FormatError
		errors.As(err, &fe)
		fmt.Println(errors.Is(err, gguf.ErrNotFormat), errors.Is(err, gguf.ErrUnsupported),
			errors.Is(err, gguf.ErrTruncated), fe.Offset)
	}
	// Output:
	// true false false 0
	// false true false 4
	// false false true 8
}

// ExampleWeigh quantizes a row to Q4_K with an importance vector and
// measures the error as the quantizer weighed it, beside the plain SQNR.
func ExampleWeigh() {
	const n = 256
	x, imp := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.37)) * float32(1+i%7)
		imp[i] = float32(1 + i%4) // the columns' importance, from an imatrix
	}
	blocks := make([]byte, 144)
	if err := gguf.Quantize(gguf.TypeQ4_K, blocks, x, imp); err != nil {
		log.Fatal(err)
	}
	y := make([]float32, n)
	if err := gguf.Dequantize(gguf.TypeQ4_K, y, blocks); err != nil {
		log.Fatal(err)
	}
	w := make([]float32, n)
	if err := gguf.Weigh(gguf.TypeQ4_K, w, x, imp); err != nil {
		log.Fatal(err)
	}
	var s, e, ws, we float64
	for i := range x {
		d := float64(y[i] - x[i])
		s, e = s+float64(x[i]*x[i]), e+d*d
		ws, we = ws+float64(w[i]*x[i]*x[i]), we+float64(w[i])*d*d
	}
	fmt.Printf("SQNR %.1f dB, weighted %.1f dB\n", 10*math.Log10(s/e), 10*math.Log10(ws/we))
	// Output:
	// SQNR 23.1 dB, weighted 24.4 dB
}

// Quantize turns one tensor into any GGUF type's blocks, with or without
// an importance vector (one weight per column), as llama-quantize would
// for that tensor; Dequantize reads them back as ggml does.
func ExampleQuantize() {
	const rows, cols = 4, 256
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(math.Sin(float64(i) * 0.37))
	}
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = 1 + float32(i%8) // columns that matter more
	}
	for _, t := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ6_K, gguf.TypeIQ4_XS} {
		size, _ := t.Size(int64(len(w)))
		blocks := make([]byte, size)
		if err := gguf.Quantize(t, blocks, w, imp); err != nil {
			log.Fatal(err)
		}
		back := make([]float32, len(w))
		if err := gguf.Dequantize(t, back, blocks); err != nil {
			log.Fatal(err)
		}
		var sig, noise float64
		for i := range w {
			sig += float64(w[i]) * float64(w[i])
			noise += float64(w[i]-back[i]) * float64(w[i]-back[i])
		}
		fmt.Printf("%v: %d bytes, SQNR %.0f dB\n", t, size, 10*math.Log10(sig/noise))
	}
	// Output:
	// Q4_K: 576 bytes, SQNR 27 dB
	// Q6_K: 840 bytes, SQNR 39 dB
	// IQ4_XS: 544 bytes, SQNR 24 dB
}
