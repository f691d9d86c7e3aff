package layout_test

import (
	"errors"
	"fmt"
	"log"
	"maps"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The __metadata__ entries a layout adds for a weight, declared before
// anything is cast: the tcast layout records its format version and the
// weight's description; compressed-tensors the datatype's name and the
// NVFP4 tensor scale (a placeholder until the weight is cast). All are
// keys this module writes, which a conversion drops from its input.
func ExampleLayout_specs() {
	const weight = "model.layers.0.mlp.down_proj.weight"
	cases := []struct{ layout, dtype string }{{"tcast", "mxfp4"}, {"compressed-tensors", "nvfp4"}}
	for _, c := range cases {
		l, err := layout.Get(c.layout)
		if err != nil {
			log.Fatal(err)
		}
		_, meta, err := l.Specs(weight, []int{2, 32}, tcast.MustLookup(c.dtype), 1)
		if err != nil {
			log.Fatal(err)
		}
		for _, k := range slices.Sorted(maps.Keys(meta)) {
			fmt.Println(k, layout.IsMetaKey(k))
		}
		switch c.layout {
		case "tcast":
			info := meta[layout.KeyWeightPrefix+weight]
			fmt.Println(meta[layout.KeyFormat] == layout.FormatVersion,
				strings.HasPrefix(info, `{"datatype":"float4_e2m1fn_float8_e8m0fnu_t32"`))
		default:
			module := strings.TrimSuffix(weight, ".weight")
			fmt.Println(meta[layout.KeyCTDataTypePrefix+module], meta[layout.KeyCTGlobalScalePrefix+module])
		}
	}
	// Output:
	// tcast.format true
	// tcast.weight.model.layers.0.mlp.down_proj.weight true
	// true true
	// tcast.ct.datatype.model.layers.0.mlp.down_proj true
	// tcast.ct.global_scale.model.layers.0.mlp.down_proj true
	// nvfp4 0x00000000
}

// The sparse formats compressed-tensors writes, by name.
func ExampleParseSparseFormat() {
	fmt.Println(layout.SparseFormats())
	f, err := layout.ParseSparseFormat("sparse-24-bitmask")
	fmt.Println(f == layout.Sparse24Bitmask, err)
	_, err = layout.ParseSparseFormat("sparse-zip")
	var se *layout.SparsityError
	fmt.Println(errors.Is(err, layout.ErrSparsity), errors.As(err, &se), se.Option, se.Value)
	// Output:
	// [dense sparse-bitmask sparse-24-bitmask]
	// true <nil>
	// true true Pruning.Format sparse-zip
}

// A layout name Get does not know, a tcast format version this build does
// not read, and an N:M sparse datatype for a layout that stores none.
func Example_errors() {
	_, err := layout.Get("tcastt")
	var ue *layout.UnknownError
	fmt.Println(errors.As(err, &ue), ue.Name)

	err = layout.CheckFormatVersion(map[string]string{layout.KeyFormat: "3"})
	var ve *layout.VersionError
	fmt.Println(errors.Is(err, layout.ErrFormatVersion), errors.As(err, &ve), ve.Version)

	gptOSS, _ := layout.Get("gpt-oss")
	err = layout.Accepts(gptOSS, tcast.MustLookup("e2m1_e8m0_t32n2m4"))
	var sd *layout.SparseDataTypeError
	fmt.Println(errors.Is(err, layout.ErrSparseDataType), errors.As(err, &sd), sd.Dense)
	// Output:
	// true tcastt
	// true true 3
	// true true mxfp4e2
}
