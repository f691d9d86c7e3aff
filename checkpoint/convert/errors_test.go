package convert

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/rotate"
)

// Every sentinel of Convert's errors is matched by errors.Is, and the
// *OptionError, *OutputError and *NothingCastError by errors.As, on the
// options and inputs that cause them; none of the messages names a flag.
func TestErrorSentinels(t *testing.T) {
	lay := func(name string) layout.Layout {
		l, err := layout.Get(name)
		require.NoError(t, err)
		return l
	}
	mix, err := ggufmix.Lookup("q4_k_m")
	require.NoError(t, err)
	im := &imatrix.Imatrix{Path: "x.imatrix"}
	h := rotate.Rotation{Kind: rotate.Hadamard}
	with := func(o Options, f func(*Options)) Options { f(&o); return o }
	tc := opts(t, "mxfp4", "tcast")
	gopts := func(name string) Options {
		return Options{Layout: lay("gguf"), DataType: mustDataType(t, lay("gguf"), name), Workers: 2}
	}
	llama := mixLlama(t, t.TempDir())
	for _, c := range []struct {
		name   string
		in     string
		out    string
		o      Options
		want   error
		option string
	}{
		{"no datatype", iris, "o", Options{}, ErrNoDataType, "DataType"},
		{"mix without gguf", iris, "o", Options{GGUF: GGUFOptions{Mix: mix}}, ErrGGUFOnly, "GGUF.Mix"},
		{"pure without gguf", iris, "o", with(tc, func(o *Options) { o.GGUF.Pure = true }), ErrGGUFOnly, "GGUF.Pure"},
		{"rotate and imatrix", iris, "o", with(tc, func(o *Options) { o.Rotate, o.Imatrix = h, im }), ErrConflict, "Rotate"},
		{"rotate into gguf", iris, "o", with(gopts("q8_0"), func(o *Options) { o.Rotate = h }),
			ErrRotateUnrecorded, "Rotate"},
		{"scale search of nf4", iris, "o", with(opts(t, "nf4", "tcast"), func(o *Options) { o.ScaleSearch = true }),
			ErrScaleSearchUnused, "ScaleSearch"},
		{"imatrix of mxfp4", iris, "o", with(tc, func(o *Options) { o.Imatrix = im }), ErrImatrixUnused, "Imatrix"},
		{"pure without a mix", iris, "o.gguf", with(gopts("q8_0"), func(o *Options) { o.GGUF.Pure = true }),
			ErrMixOnly, "GGUF.Pure"},
		{"q8_k model file", llama, "o.gguf", Options{Layout: lay("gguf"), DataType: mustDataType(t, lay("gguf"), "q8_k")},
			ErrNotForLlamaCpp, "DataType"},
		{"include a norm", iris, "o", with(opts(t, "nvfp4", "compressed-tensors"), func(o *Options) {
			o.Include = regexp.MustCompile("conv2d_1/")
		}),
			ErrCannotCast, "Include"},
		{"nothing cast", iris, "o", with(tc, func(o *Options) { o.Exclude = regexp.MustCompile(".") }), ErrNothingCast, ""},
		{"a gguf name", iris, "o.gguf", with(tc, func(o *Options) {}), ErrOutput, ""},
		{"too long for gguf", iris, "o.gguf", with(gopts("q8_0"), func(o *Options) {
			o.Rename = func(n string) string { return n + "_________________________________________________________" }
		}), ErrNameTooLong, ""},
	} {
		out := filepath.Join(t.TempDir(), c.out)
		_, err := Convert(c.in, out, c.o)
		require.ErrorIs(t, err, c.want, c.name)
		assert.NotRegexp(t, `(^|\s)-[a-z]`, err.Error(), "%s: a library message names no flag", c.name)
		if c.option != "" {
			var oe *OptionError
			require.ErrorAs(t, err, &oe, c.name)
			assert.Equal(t, c.option, oe.Option, c.name)
		}
		assert.NoDirExists(t, out, c.name)
		assert.NoFileExists(t, out, c.name)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "m.safetensors")
	b, err := os.ReadFile(iris)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(in, b, 0o644))
	_, err = Convert(in, dir, with(tc, func(o *Options) { o.Force = true }))
	assert.ErrorIs(t, err, ErrUnsafeOutput, "an output over the input")
	var nc *NothingCastError
	_, err = Convert(iris, filepath.Join(t.TempDir(), "o"), with(tc, func(o *Options) { o.Exclude = regexp.MustCompile(".") }))
	require.ErrorAs(t, err, &nc)
	assert.Equal(t, []KeptCount{{Why: "excluded", Tensors: 189}}, nc.Kept)
	var ou *OutputError
	_, err = Convert(iris, filepath.Join(t.TempDir(), "o.gguf"), tc)
	require.ErrorAs(t, err, &ou)
	assert.Equal(t, []Fix{{Option: "Layout", Value: "gguf"}}, ou.Fixes)
	assert.True(t, errors.Is(ou, ErrOutput))
}

func TestFixAndWarningText(t *testing.T) {
	assert.Equal(t, "set Options.Layout to gguf", Fix{Option: "Layout", Value: "gguf"}.String())
	assert.Equal(t, "unset Options.Rotate", Fix{Option: "Rotate"}.String())
	assert.Equal(t, "set Options.DataType to a datatype that searches",
		Fix{Option: "DataType", Choose: "a datatype that searches"}.String())
	w := Warning{Option: "Exclude", Value: `"x"`, Text: "matches no tensor", Fixes: []Fix{{Option: "Exclude"}}}
	assert.Equal(t, `Options.Exclude "x" matches no tensor; unset Options.Exclude`, w.String())
	b, err := w.MarshalText()
	require.NoError(t, err)
	var back Warning
	require.NoError(t, back.UnmarshalText(b))
	assert.Equal(t, w.String(), back.Text)
}
