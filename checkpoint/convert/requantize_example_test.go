package convert_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
)

// Requantizing a llama.cpp model file is one call, with llama-quantize's
// mix and options (here --allow-requantize, for a Q8_0 input, and
// --output-tensor-type); a dry run first says what each tensor would get.
// The input is read a piece at a time and the output written in place, so
// memory stays bounded whatever the model's size.
func ExampleConvert_requantize() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	lay, err := layout.Get("gguf")
	if err != nil {
		log.Fatal(err)
	}
	mix, err := ggufmix.Lookup("Q4_K_M")
	if err != nil {
		log.Fatal(err)
	}
	q8 := gguf.TypeQ8_0
	opts := convert.Options{Layout: lay, GGUF: convert.GGUFOptions{Mix: mix, AllowRequantize: true, OutputType: &q8}}
	opts.DryRun = true
	plan, err := convert.Convert("../load/testdata/gguf/model.gguf", "", opts)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range plan.Tensors {
		typ := t.DataType
		if typ == "" {
			typ = "kept " + t.Stored
		}
		fmt.Printf("%s: %s, %d bytes\n", t.Name, typ, t.BytesOut)
		if t.Reason != "" {
			fmt.Println("  " + t.Reason)
		}
	}
	opts.DryRun = false
	res, err := convert.Convert("../load/testdata/gguf/model.gguf", filepath.Join(dir, "q4km.gguf"), opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Mix, res.Cast(), "requantized")
	// Output:
	// model.layers.0.input_layernorm.weight: kept F32, 128 bytes
	// model.layers.0.mlp.down_proj.weight: kept Q8_0, 4352 bytes
	//   Q4_K_M: ffn_down in layer 0 of 1, in the last eighth (use_more_bits): Q6_K; row length 128 is not a multiple of Q6_K's block of 256: falls back to Q8_0
	// model.layers.0.mlp.up_proj.weight: q5_0, 2816 bytes
	//   Q4_K_M base type; row length 32 is not a multiple of Q4_K's block of 256: falls back to Q5_0
	// Q4_K_M 1 requantized
}
