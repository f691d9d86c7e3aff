package verify_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Checkpoints compares a conversion with its source: each weight's
// datatype, bits per value and SQNR.
func ExampleCheckpoints() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src := "../load/testdata/source"
	conv := filepath.Join(dir, "mxfp4")
	if _, err := convert.Convert(src, conv, convert.Options{DataType: tcast.MustLookup("mxfp4")}); err != nil {
		log.Fatal(err)
	}
	rep, err := verify.Checkpoints(src, conv, verify.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rep.Tensors {
		if r.Converted {
			fmt.Printf("%s: %s, %.3g bits per value, SQNR %.1f dB\n", r.Name, r.DataType, r.Bits, *r.SQNR)
		}
	}
	// Output:
	// model.layers.0.mlp.down_proj.weight: mxfp4e2, 4.25 bits per value, SQNR 17.3 dB
	// model.layers.0.mlp.up_proj.weight: mxfp4e2, 4.25 bits per value, SQNR 17.0 dB
}
