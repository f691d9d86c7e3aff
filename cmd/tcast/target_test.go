package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTargetFlags converts the trained model with -target-size the Q3_K_M
// file's size (a file no larger, the report giving the target's choices)
// and checks the messages of wrong target flags: each names the flag and
// what to give instead.
func TestTargetFlags(t *testing.T) {
	dir := t.TempDir()
	mix := filepath.Join(dir, "mix.gguf")
	code, _, stderr := tcast("convert", trainedModel, "-layout", "gguf", "-dtype", "Q3_K_M", "-o", mix)
	require.Equal(t, 0, code, stderr)
	st, err := os.Stat(mix)
	require.NoError(t, err)
	out := filepath.Join(dir, "target.gguf")
	code, stdout, stderr := tcast("convert", trainedModel, "-layout", "gguf", "-dtype", "Q3_K_M", "-o", out,
		"-target-size", fmt.Sprint(st.Size()))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "size target: ")
	got, err := os.Stat(out)
	require.NoError(t, err)
	assert.LessOrEqual(t, got.Size(), st.Size())

	base := []string{"convert", trainedModel, "-layout", "gguf", "-dtype", "Q3_K_M", "-o", filepath.Join(dir, "x.gguf")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-target-bpw", "1"}, "-target-bpw: 1 is below the smallest file the candidate types make of this model"},
		{[]string{"-target-bpw", "1"}, "bits per weight; use -target-bpw 2."},
		{[]string{"-target-bpw", "4", "-target-size", "1MB"}, "-target-bpw does not go with -target-size: both set the file's size"},
		{[]string{"-target-size", "1XB"}, `-target-size: "1XB" is not a positive size`},
		{[]string{"-target-bpw", "-2"}, `invalid value "-2" for flag -target-bpw: want a number of bits per weight above 0, such as 4.5`},
		{[]string{"-target-bpw", "0"}, `invalid value "0" for flag -target-bpw: want a number`},
		{[]string{"-target-bpw", "x"}, `invalid value "x" for flag -target-bpw: want a number`},
		{[]string{"-target-bpw", "4", "-pure"}, "-target-bpw does not go with -gguf-pure"},
	} {
		code, _, stderr := tcast(append(base, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, c.args)
	}
	assert.NoFileExists(t, filepath.Join(dir, "x.gguf"))
}
