package load_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// Open reads a checkpoint in any layout; Float32 dequantizes one weight.
func ExampleOpen() {
	for _, path := range []string{
		"testdata/tcast",
		"testdata/compressed-tensors",
		"testdata/gpt-oss",
		"testdata/modelopt",
		"testdata/fp8-block",
		"testdata/gguf/model.gguf",
	} {
		c, err := load.Open(path)
		if err != nil {
			log.Fatal(err)
		}
		v, shape, err := c.Float32("model.layers.0.mlp.down_proj.weight")
		if err != nil {
			log.Fatal(err)
		}
		info, _ := c.Info("model.layers.0.mlp.down_proj.weight")
		fmt.Printf("%-18s %-14s %v %.4g\n", c.Layout(), info.Type, shape, v[32:35])
		c.Close()
	}
	// Output:
	// tcast              mxfp4e2        [32 128] [-0 4 -2]
	// compressed-tensors nvfp4          [32 128] [-0 4.451 -2.226]
	// gpt-oss            mxfp4e2        [32 128] [-0 4 -2]
	// modelopt           nvfp4          [32 128] [-0 4.451 -2.226]
	// fp8-block          fp8e4_block128 [32 128] [-0.09273 4.451 -2.226]
	// gguf               q8_0           [32 128] [-0.1109 4.694 -2.143]
}

// Inspect summarizes a checkpoint without reading its tensors.
func ExampleInspect() {
	c, err := load.Open("testdata/modelopt")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	rep, err := load.Inspect(c, load.InspectOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range rep.Converted {
		fmt.Println(w.Name, w.DataType, w.Shape, w.Parts)
	}
	fmt.Println(rep.Totals.Parameters, "parameters")
	// Output:
	// model.layers.0.mlp.down_proj.weight nvfp4 [32 128] map[weight:model.layers.0.mlp.down_proj.weight weight_scale:model.layers.0.mlp.down_proj.weight_scale weight_scale_2:model.layers.0.mlp.down_proj.weight_scale_2]
	// model.layers.0.mlp.up_proj.weight nvfp4 [128 32] map[weight:model.layers.0.mlp.up_proj.weight weight_scale:model.layers.0.mlp.up_proj.weight_scale weight_scale_2:model.layers.0.mlp.up_proj.weight_scale_2]
	// 8224 parameters
}

// A checkpoint of plain weights has the layout Plain; asking for a tensor it
// does not hold, for the cast form of an integer tensor, or opening a file
// that is no checkpoint fails with an error errors.Is tells.
func Example_errors() {
	dir, err := os.MkdirTemp("", "load-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	err = safetensors.WriteFile(path, []safetensors.Tensor{
		{Name: "embed.weight", DType: safetensors.F32, Shape: []int{2}, Data: make([]byte, 8)},
		{Name: "position_ids", DType: safetensors.I32, Shape: []int{2}, Data: make([]byte, 8)},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	c, err := load.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.Layout() == load.Plain)

	_, _, err = c.Float32("embed.weights")
	var nf *load.NotFoundError
	fmt.Println(errors.Is(err, load.ErrNotFound), errors.As(err, &nf), nf.Closest)
	_, err = c.Tensor("position_ids")
	fmt.Println(errors.Is(err, load.ErrNotQuantized))
	_, err = load.Open("testdata/source/config.json")
	fmt.Println(errors.Is(err, load.ErrNotCheckpoint))
	// Output:
	// true
	// true true [embed.weight]
	// true
	// true
}
