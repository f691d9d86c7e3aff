package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// Encode writes a file to any io.Writer; OpenReader reads one from any
// io.ReaderAt, here the bytes in memory.
func ExampleEncode() {
	var b bytes.Buffer
	err := safetensors.Encode(&b, []safetensors.Tensor{
		// 1.5 as a little-endian float32.
		{Name: "scale", DType: safetensors.F32, Shape: []int{1}, Data: []byte{0, 0, 0xc0, 0x3f}},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	f, err := safetensors.OpenReader(bytes.NewReader(b.Bytes()), int64(b.Len()), "in memory")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	v, _ := f.Float32s("scale")
	fmt.Println(f.Tensors()[0].Name, v)
	// Output:
	// scale [1.5]
}

// The header spellings of the dtypes, exact and case-sensitive as in the
// reference reader.
func ExampleParseDType() {
	for _, s := range []string{"F8_E4M3", "BF16", "f32"} {
		d, err := safetensors.ParseDType(s)
		if err != nil {
			fmt.Println(s, "is refused")
			continue
		}
		fmt.Println(d, d.BitSize(), d.Float())
	}
	fmt.Println(safetensors.DTypes()[:6])
	// Output:
	// F8_E4M3 8 true
	// BF16 16 true
	// f32 is refused
	// [BOOL F4 F6_E2M3 F6_E3M2 U8 I8]
}

// The Hugging Face names of the shards of a sharded checkpoint.
func ExampleShardName() {
	fmt.Println(safetensors.ShardName(1, 3), safetensors.ShardName(3, 3))
	// Output:
	// model-00001-of-00003.safetensors model-00003-of-00003.safetensors
}

// file is a safetensors file of the header hdr and the data.
func file(hdr string, data ...byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	return append(append(b, hdr...), data...)
}

// The limits of the reader, and more kinds of problem: a shape of more
// than MaxRank dimensions breaks the format, more than MaxTensors
// __metadata__ keys are more than the reader takes, and a directory where
// a file is read is refused before it is opened.
func ExampleOpenReader_errors() {
	fmt.Println(safetensors.MaxHeaderSize, safetensors.MaxTensors, safetensors.MaxRank)
	open := func(f []byte) error {
		_, err := safetensors.OpenReader(bytes.NewReader(f), int64(len(f)), "bad.safetensors")
		return err
	}
	shape := "[" + strings.Repeat("1,", safetensors.MaxRank) + "1]"
	deep := file(`{"w":{"dtype":"U8","shape":`+shape+`,"data_offsets":[0,1]}}`, 7)
	fmt.Println(errors.Is(open(deep), safetensors.ErrInvalid))

	var meta strings.Builder
	for i := range safetensors.MaxTensors + 1 {
		fmt.Fprintf(&meta, `"k%d":"",`, i)
	}
	many := file(`{"__metadata__":{` + strings.TrimSuffix(meta.String(), ",") + `}}`)
	fmt.Println(errors.Is(open(many), safetensors.ErrTooLarge))

	_, err := safetensors.Open(os.TempDir())
	fmt.Println(errors.Is(err, safetensors.ErrNotRegular))
	// Output:
	// 100000000 262144 64
	// true
	// true
	// true
}
