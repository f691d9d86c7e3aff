package convert_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Convert casts a checkpoint's weights to MXFP4 in the compressed-tensors
// layout that vLLM loads; verify.Checkpoints compares the result with the
// source.
func ExampleConvert() {
	out, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)
	ct, err := layout.Get("compressed-tensors")
	if err != nil {
		log.Fatal(err)
	}
	dst := filepath.Join(out, "mxfp4")
	res, err := convert.Convert("../load/testdata/source", dst, convert.Options{
		DataType: tcast.MustLookup("mxfp4"),
		Layout:   ct,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range res.Tensors {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %v %q %s", t.Name, t.Shape, t.DataType, t.Note)))
	}
	rep, err := verify.Checkpoints("../load/testdata/source", dst, verify.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rep.Tensors {
		if r.Converted {
			fmt.Printf("%s: SQNR %.1f dB\n", r.Name, *r.SQNR)
		}
	}
	// Output:
	// model.layers.0.input_layernorm.weight [32] "" kept: fewer than 2 dimensions
	// model.layers.0.mlp.down_proj.weight [32 128] "mxfp4e2"
	// model.layers.0.mlp.up_proj.weight [128 32] "mxfp4e2"
	// model.layers.0.mlp.down_proj.weight: SQNR 17.3 dB
	// model.layers.0.mlp.up_proj.weight: SQNR 17.0 dB
}
