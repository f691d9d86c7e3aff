package convert_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Every refusal of Convert matches a sentinel with errors.Is; a refused
// option is an *OptionError naming its Options field, an output path that
// does not fit the layout an *OutputError. Nothing is written.
func Example_errors() {
	const plain = "../load/testdata/source"          // a Hugging Face checkpoint
	const llama = "../load/testdata/gguf/model.gguf" // a llama.cpp model file
	tmp, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	lay := func(name string) layout.Layout {
		l, err := layout.Get(name)
		if err != nil {
			log.Fatal(err)
		}
		return l
	}
	dtype := func(l layout.Layout, name string) *tcast.DataType {
		dt, err := layout.DataType(l, name)
		if err != nil {
			log.Fatal(err)
		}
		return dt
	}
	gguf, ct := lay("gguf"), lay("compressed-tensors")
	mxfp4 := tcast.MustLookup("mxfp4")
	q4km, _ := ggufmix.Lookup("q4_k_m")
	hadamard := rotate.Rotation{Kind: rotate.Hadamard}
	// An importance matrix of another model: no entry names a weight here.
	imPath := filepath.Join(tmp, "other.gguf")
	err = imatrix.WriteFile(imPath, &imatrix.Stats{ChunkCount: 1, ChunkSize: 1,
		Entries: []imatrix.Stat{{Name: "blk.0.other.weight", Sum2: []float32{1}, Counts: []int64{1}}}},
		imatrix.FormatGGUF)
	if err != nil {
		log.Fatal(err)
	}
	other, err := imatrix.Read(imPath)
	if err != nil {
		log.Fatal(err)
	}
	// A checkpoint of one 256 × 256 F32 weight of zeros, whose rows hold
	// Q2_K's blocks of 256.
	wide := filepath.Join(tmp, "wide.safetensors")
	err = safetensors.WriteFile(wide, []safetensors.Tensor{{Name: "layers.0.mlp.down_proj.weight",
		DType: safetensors.F32, Shape: []int{256, 256}, Data: make([]byte, 256*256*4)}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	// The input copied into a directory, to write over.
	inside := filepath.Join(tmp, "inside")
	if err := os.CopyFS(inside, os.DirFS(plain)); err != nil {
		log.Fatal(err)
	}

	for _, c := range []struct {
		in, out string
		o       convert.Options
		want    error
	}{
		{plain, "o", convert.Options{}, convert.ErrNoDataType},
		{plain, "o", convert.Options{DataType: mxfp4, GGUF: convert.GGUFOptions{Mix: q4km}},
			convert.ErrGGUFOnly},
		{plain, "o", convert.Options{DataType: mxfp4, Rotate: hadamard, Imatrix: other},
			convert.ErrConflict},
		{plain, "o.gguf", convert.Options{Layout: gguf, DataType: dtype(gguf, "q8_0"), Rotate: hadamard},
			convert.ErrRotateUnrecorded},
		{plain, "o", convert.Options{DataType: tcast.MustLookup("nf4"), ScaleSearch: true},
			convert.ErrScaleSearchUnused},
		{plain, "o", convert.Options{DataType: tcast.MustLookup("nvfp4"), Mode: scale.Ceil},
			convert.ErrModeUnused},
		{plain, "o", convert.Options{DataType: mxfp4, Imatrix: other}, convert.ErrImatrixUnused},
		{plain, "o.gguf", convert.Options{Layout: gguf, DataType: dtype(gguf, "q8_0"),
			GGUF: convert.GGUFOptions{Generic: true, Pure: true}}, convert.ErrMixOnly},
		{plain, "o.gguf", convert.Options{Layout: gguf, GGUF: convert.GGUFOptions{Mix: q4km, TargetBPW: -4}},
			convert.ErrInvalidTarget},
		{llama, "o.gguf", convert.Options{Layout: gguf, DataType: dtype(gguf, "q8_k")},
			convert.ErrNotForLlamaCpp},
		{llama, "o.gguf", convert.Options{Layout: gguf, DataType: dtype(gguf, "q8_0"),
			GGUF: convert.GGUFOptions{Generic: true}}, convert.ErrNotHuggingFace},
		{llama, "o.gguf", convert.Options{Layout: gguf, GGUF: convert.GGUFOptions{Mix: q4km},
			Imatrix: other}, convert.ErrRequantize},
		{llama, "o.gguf", convert.Options{Layout: gguf, GGUF: convert.GGUFOptions{Mix: q4km,
			AllowRequantize: true}, Imatrix: other}, convert.ErrImatrixUnmatched},
		{wide, "o.gguf", convert.Options{Layout: gguf, GGUF: convert.GGUFOptions{Mix: ggufmix.MixQ2_K_S}},
			convert.ErrImatrixRequired},
		{plain, "o.gguf", convert.Options{Layout: gguf, GGUF: convert.GGUFOptions{Mix: ggufmix.MixCOPY,
			Generic: true}}, convert.ErrGGUFInputOnly},
		{plain, "o", convert.Options{DataType: tcast.MustLookup("nvfp4"), Layout: ct,
			Include: regexp.MustCompile("input_layernorm")}, convert.ErrCannotCast},
		{plain, "o", convert.Options{DataType: mxfp4, Exclude: regexp.MustCompile(".")},
			convert.ErrNothingCast},
		{plain, "o.gguf", convert.Options{DataType: mxfp4}, convert.ErrOutput},
		{inside, "", convert.Options{DataType: mxfp4, Force: true}, convert.ErrUnsafeOutput},
	} {
		out := filepath.Join(tmp, c.out)
		if c.out == "" {
			out = c.in
		}
		_, err := convert.Convert(c.in, out, c.o)
		var oe *convert.OptionError
		var ou *convert.OutputError
		switch {
		case errors.As(err, &oe):
			fmt.Println(errors.Is(err, c.want), "Options."+oe.Option)
		case errors.As(err, &ou):
			fmt.Println(errors.Is(err, c.want), ou.Fixes)
		default:
			fmt.Println(errors.Is(err, c.want))
		}
	}
	// Output:
	// true Options.DataType
	// true Options.GGUF.Mix
	// true Options.Rotate
	// true Options.Rotate
	// true Options.ScaleSearch
	// true Options.Mode
	// true Options.Imatrix
	// true Options.GGUF.Pure
	// true Options.GGUF.TargetBPW
	// true Options.DataType
	// true Options.GGUF.Generic
	// true Options.GGUF.AllowRequantize
	// true Options.Imatrix
	// true Options.Imatrix
	// true Options.GGUF.Mix
	// true Options.Include
	// true
	// true [set Options.Layout to gguf]
	// true
}

// For GGUF output a name is a datatype of the layout or a llama-quantize
// mix, or both ("q4_k" is the Q4_K type and the Q4_K_M mix); a name that
// is neither is an *UnknownDataTypeError with the closest of both kinds.
func ExampleDataTypeOrMix() {
	gguf, err := layout.Get("gguf")
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"q4_k", "Q4_K_M", "q4km"} {
		dt, mix, err := convert.DataTypeOrMix(gguf, name)
		var ue *convert.UnknownDataTypeError
		switch {
		case errors.As(err, &ue):
			fmt.Println(name, "is unknown; closest", ue.Closest[0])
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Println(name, dt != nil, mix)
		}
	}
	// Output:
	// q4_k true Q4_K_M
	// Q4_K_M false Q4_K_M
	// q4km is unknown; closest Q4_K_M
}

// An *OptionError says its options in LibraryWords, as Go names them; a
// command passes words of its own, such as its flags, to Message.
func ExampleWords() {
	e := &convert.OptionError{Option: "Rotate", With: "Imatrix",
		Reason: "the matrix weighs the unrotated columns", Fixes: []convert.Fix{{Option: "Rotate"}}}
	fmt.Println(e.Message(convert.LibraryWords))
	flags := map[string]string{"Rotate": "-rotate", "Imatrix": "-imatrix"}
	cli := convert.LibraryWords
	cli.Option = func(field string) string { return flags[field] }
	cli.Fix = func(f convert.Fix) string { return "drop " + flags[f.Option] }
	fmt.Println(e.Message(cli))
	// Output:
	// Options.Rotate does not go with Options.Imatrix: the matrix weighs the unrotated columns; unset Options.Rotate
	// -rotate does not go with -imatrix: the matrix weighs the unrotated columns; drop -rotate
}
