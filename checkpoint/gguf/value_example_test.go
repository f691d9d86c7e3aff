package gguf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// Metadata of every value type. A file of general.type "imatrix" needs no
// architecture; a quantized tensor makes the Writer add
// general.quantization_version.
func ExampleValue() {
	var w gguf.Writer
	for _, kv := range []gguf.KV{
		{Key: gguf.KeyType, Value: gguf.String("imatrix")},
		{Key: "x.u8", Value: gguf.Uint8(255)},
		{Key: "x.i8", Value: gguf.Int8(-128)},
		{Key: "x.u16", Value: gguf.Uint16(65535)},
		{Key: "x.i16", Value: gguf.Int16(-2)},
		{Key: "x.i32", Value: gguf.Int32(-3)},
		{Key: "x.u64", Value: gguf.Uint64(1 << 40)},
		{Key: "x.i64", Value: gguf.Int64(-1 << 40)},
		{Key: "x.f64", Value: gguf.Float64(0.125)},
		{Key: "x.rows", Value: gguf.ArrayOfArrays([]gguf.Value{
			gguf.Array([]int32{1, 2}), gguf.Array([]string{"a"}),
		})},
	} {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			log.Fatal(err)
		}
	}
	q := make([]byte, gguf.TypeQ8_0.BlockBytes())
	if err := gguf.Quantize(gguf.TypeQ8_0, q, make([]float32, 32), nil); err != nil {
		log.Fatal(err)
	}
	if err := w.AddTensor("w", gguf.TypeQ8_0, []int{32}, q); err != nil {
		log.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		log.Fatal(err)
	}
	f, err := gguf.Read(bytes.NewReader(b.Bytes()), int64(b.Len()), "x.gguf")
	if err != nil {
		log.Fatal(err)
	}
	for _, kv := range f.KV {
		fmt.Println(kv.Key, kv.Value)
	}
	v, _ := f.Get(gguf.KeyQuantizationVersion)
	fmt.Println(v == gguf.Uint32(gguf.QuantizationVersion))
	// Output:
	// general.type string("imatrix")
	// x.u8 uint8(255)
	// x.i8 int8(-128)
	// x.u16 uint16(65535)
	// x.i16 int16(-2)
	// x.i32 int32(-3)
	// x.u64 uint64(1099511627776)
	// x.i64 int64(-1099511627776)
	// x.f64 float64(0.125)
	// x.rows [2]array{[2]int32{1 2} [1]string{"a"}}
	// general.quantization_version uint32(2)
	// true
}

// The codes, scales and mins of K-quant and IQ blocks, and back. An IQ4_NL
// block is a float16 scale d and 32 4-bit indices into IQ4NLValues
// (element j in the low nibble of byte j, element j+16 in its high nibble):
// its values are d·IQ4NLValues[index].
func ExampleUnpackBlocks() {
	block := make([]byte, gguf.TypeIQ4_NL.BlockBytes())
	block[0], block[1] = 0x00, 0x40 // d = 2 as float16
	block[2] = 0x8f                 // element 0: index 15; element 16: index 8
	codes := make([]uint8, 32)
	scales := make([]float32, 1)
	gguf.UnpackBlocks(gguf.TypeIQ4_NL, codes, scales, nil, block)
	fmt.Println(codes[0], codes[16], codes[1], scales)
	fmt.Println(gguf.IQ4NLValues[codes[0]], gguf.IQ4NLValues[codes[16]], gguf.IQ4NLValues[codes[1]])
	v := make([]float32, 32)
	if err := gguf.Dequantize(gguf.TypeIQ4_NL, v, block); err != nil {
		log.Fatal(err)
	}
	fmt.Println(v[0], v[16], v[1])

	back := make([]byte, len(block))
	err := gguf.PackBlocks(gguf.TypeIQ4_NL, back, codes, scales, nil)
	fmt.Println(bytes.Equal(back, block), err)
	codes[5] = 16 // wider than 4 bits
	err = gguf.PackBlocks(gguf.TypeIQ4_NL, back, codes, scales, nil)
	var pe *gguf.PackError
	fmt.Println(errors.As(err, &pe), pe.Type, pe.Block)

	for _, t := range []gguf.Type{gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ5_0, gguf.TypeQ6_K} {
		fmt.Println(t, gguf.CodeBits(t), gguf.SignedCodes(t))
	}
	// Output:
	// 15 8 0 [2]
	// 113 1 -127
	// 226 2 -254
	// true <nil>
	// true IQ4_NL 0
	// Q2_K 2 false
	// Q3_K 3 true
	// Q5_0 5 true
	// Q6_K 6 true
}

// header is a GGUF v3 header declaring nt tensors and nkv metadata keys,
// followed by rest.
func header(nt, nkv uint64, rest ...byte) []byte {
	b := binary.LittleEndian.AppendUint64([]byte("GGUF\x03\x00\x00\x00"), nt)
	b = binary.LittleEndian.AppendUint64(b, nkv)
	return append(b, rest...)
}

// More kinds of problem: a tensor of five dimensions breaks the format,
// more metadata keys than MaxTensors are more than the reader takes
// (refused before any is read), and a directory where a file is read is
// refused before it is opened.
func ExampleOpen_errors() {
	read := func(b []byte) error {
		_, err := gguf.Read(bytes.NewReader(b), int64(len(b)), "m.gguf")
		return err
	}
	info := binary.LittleEndian.AppendUint64(nil, 1) // the name "w", then n_dims 5
	info = binary.LittleEndian.AppendUint32(append(info, 'w'), 5)
	info = append(info, make([]byte, 32)...)
	fmt.Println(errors.Is(read(header(1, 0, info...)), gguf.ErrInvalid))

	// Room after the header for MaxTensors+1 keys of the smallest size.
	many := header(0, gguf.MaxTensors+1, make([]byte, 13*(gguf.MaxTensors+1))...)
	fmt.Println(errors.Is(read(many), gguf.ErrTooLarge))

	_, err := gguf.Open(os.TempDir())
	fmt.Println(errors.Is(err, gguf.ErrNotRegular))
	// Output:
	// true
	// true
	// true
}
