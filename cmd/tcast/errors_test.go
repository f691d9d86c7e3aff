package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
)

// Every field of convert.Options that a flag sets has its flag, so that
// no message says "Options.X" to a user of the command.
func TestOptionFlagsCoverOptions(t *testing.T) {
	noFlag := map[string]bool{"Progress": true} // the command sets it, never a message
	var fields []string
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Type.Kind() == reflect.Struct && f.Type.Name() == "GGUFOptions" {
				walk(prefix+f.Name+".", f.Type)
				continue
			}
			fields = append(fields, prefix+f.Name)
		}
	}
	walk("", reflect.TypeFor[convert.Options]())
	for _, f := range fields {
		if !noFlag[f] {
			assert.Contains(t, optionFlags, f, "no flag for Options.%s", f)
		}
	}
	for o := range optionFlags {
		assert.Contains(t, fields, o, "optionFlags names Options.%s, which does not exist", o)
	}
}

func TestOptionMessages(t *testing.T) {
	for _, c := range []struct {
		err  *convert.OptionError
		want string
	}{
		{&convert.OptionError{Option: "Rotate", With: "Imatrix", Reason: "they mix",
			Fixes: []convert.Fix{{Option: "Rotate"}, {Option: "Imatrix"}}},
			"-rotate does not go with -imatrix: they mix; drop -rotate, or drop -imatrix"},
		{&convert.OptionError{Option: "ScaleSearch", Value: "nf4", Reason: "has no scale",
			Fixes: []convert.Fix{{Option: "ScaleSearch"}, {Option: "DataType", Choose: "an MX datatype"}}},
			"-scale-search: nf4 has no scale; drop -scale-search, or give -dtype an MX datatype"},
		{&convert.OptionError{Option: "GGUF.TypeFor", Reason: "applies to GGUF output",
			Fixes: []convert.Fix{{Option: "Layout", Value: "gguf"}}},
			"-type-for applies to GGUF output; use -layout gguf"},
		{&convert.OptionError{Option: "Imatrix", Reason: "is unused",
			Fixes: []convert.Fix{{Option: "ScaleSearch", Value: "true"}, {Option: "Exclude", Value: "^a/b$"}}},
			"-imatrix is unused; add -scale-search, or use -exclude '^a/b$'"},
		{&convert.OptionError{Option: "Workers", Reason: "is odd"}, "-workers is odd"},
	} {
		assert.Equal(t, c.want, optionMessage(c.err))
		// The library's own message names the fields.
		assert.Contains(t, c.err.Error(), "Options."+c.err.Option)
		err := explainConvert(c.err)
		var ue *usageError
		require.True(t, errors.As(err, &ue))
		assert.Equal(t, c.want, ue.msg)
	}
	assert.Equal(t, "-o x.gguf names a GGUF file; use -layout gguf, or give -o a directory",
		outputMessage(&convert.OutputError{Path: "x.gguf", Reason: "names a GGUF file",
			Want: "a directory", Fixes: []convert.Fix{{Option: "Layout", Value: "gguf"}}}))
	assert.Equal(t, `-type-for "x=q4_k" matches no tensor`,
		warningMessage(convert.Warning{Option: "GGUF.TypeFor", Value: `"x=q4_k"`, Text: "matches no tensor"}))
}

// The other typed errors of convert get their next step (from message,
// errors.go); an error of no such type stays as it is.
func TestExplainConvertSteps(t *testing.T) {
	nc := &convert.NothingCastError{Kept: []convert.KeptCount{{Why: "a scalar", Tensors: 2}}}
	assert.Equal(t, "no tensor was cast; every tensor was kept:\n  2 × a scalar\nchoose another -layout, "+
		"-dtype or -axis, or name tensors to cast with -include", message("convert", explainConvert(nc)))
	assert.ErrorIs(t, explainConvert(nc), convert.ErrNothingCast)
	other := errors.New("disk full")
	assert.Equal(t, other, explainConvert(other))
	long := errors.Join(convert.ErrNameTooLong)
	assert.Contains(t, message("convert", explainConvert(long)), "-rename RE=REPL")
}

// Finding 3 of the new-user trial: the datatype is shown as the user asked
// for it, and a refusal names its cause.
func TestDataTypeAsAsked(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "a"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "(tcast layout, mxfp4): ")
	assert.NotContains(t, stdout, "mxfp4e2")
	code, stdout, stderr = tcast("convert", irisFixture, "-dtype", "mxfp4", "-sparsity", "2:4", "-o", filepath.Join(dir, "b"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "(tcast layout, mxfp4 with 2:4 sparsity): ")
	assert.NotContains(t, stdout, "float4_e2m1fn_float8_e8m0fnu_t32n2m4", "the datatype as asked for, in the notes too")
	code, _, stderr = tcast("convert", irisFixture, "-layout", "modelopt", "-dtype", "nvfp4", "-sparsity", "2:4",
		"-o", filepath.Join(dir, "c"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-sparsity: the modelopt layout stores no N:M sparsity (it takes -dtype nvfp4 without -sparsity)")
	src, _ := synthTo(t, filepath.Join(dir, "llama"), "-arch", "llama", "-layers", "1", "-hidden", "256", "-vocab", "512")
	code, _, stderr = tcast("convert", filepath.Dir(src), "-layout", "gguf", "-dtype", "q8_0", "-sparsity", "2:4",
		"-o", filepath.Join(dir, "q.gguf"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-sparsity: the gguf layout stores no N:M sparsity (it takes -dtype q8_0 without -sparsity)")
	code, stdout, stderr = tcast("cast", "-dtype", "mxfp4", "-o", filepath.Join(dir, "d"), "../../testdata/conv2d_2.f32.npy")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "→ mxfp4 = float4_e2m1fn_float8_e8m0fnu_t32 ")
	assert.NotContains(t, stderr, "TensorCast names the element", "no note on TensorCast's name for the OCP one")
	code, _, stderr = tcast("cast", "-dtype", "mxfp4e2", "-o", filepath.Join(dir, "e"), "../../testdata/conv2d_2.f32.npy")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "note: mxfp4e2: TensorCast names the element e2m1fnuz")
}

// Finding 6: decompress -to takes the names of the formats, as everywhere.
func TestDecompressToNames(t *testing.T) {
	dir := t.TempDir()
	cast := filepath.Join(dir, "c")
	code, _, stderr := tcast("cast", "-dtype", "mxfp4", "-o", cast, "../../testdata/conv2d_2.f32.npy")
	require.Equal(t, 0, code, stderr)
	var first []byte
	for i, to := range []string{"f16", "fp16", "half", "float16", "FP16"} {
		out := filepath.Join(dir, fmt.Sprintf("o%d.npy", i))
		code, _, stderr := tcast("decompress", "-to", to, "-o", out, cast)
		require.Equal(t, 0, code, "%s: %s", to, stderr)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		if first == nil {
			first = b
		}
		assert.True(t, bytes.Equal(first, b), "-to %s writes what -to f16 writes", to)
	}
	code, _, stderr = tcast("decompress", "-to", "e4m3fn", "-o", filepath.Join(dir, "x.npy"), cast)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `-to "e4m3fn": want f32, f16 or bf16`)
}

// Finding 6: tcast version says which build this is.
func TestVersion(t *testing.T) {
	code, stdout, stderr := tcast("version")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `^tcast (devel|v\S+).*, go1\.\d+\S* \w+/\w+, kernels \S+\n$`, stdout)
	code, _, stderr = tcast("version", "x")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "version takes no arguments")
}

// Finding 4: an interrupt ends the progress bar's line and says what it
// removed.
func TestInterruptedMessage(t *testing.T) {
	var b strings.Builder
	progressOpen.Store(true)
	defer progressOpen.Store(false)
	interrupted(&b, os.Interrupt, []string{"out"})
	assert.Equal(t, "\ntcast: stopped by Ctrl-C (SIGINT); removed the unfinished output out (nothing of it appeared); "+
		"run the command again to write it\n", b.String())
	b.Reset()
	progressOpen.Store(false)
	interrupted(&b, syscall.SIGTERM, nil)
	assert.Equal(t, "tcast: stopped by SIGTERM; no output was being written\n", b.String())
}
