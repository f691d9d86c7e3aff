package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

// generic is the next step added to a refused input file's message when the
// error gives none of its own.
const generic = "download or export it again"

// TestDamagedHintOnce: the generic next step is added only to an error that
// gives no specific one; an error's own step is never followed by a second.
func TestDamagedHintOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool // the generic step is added
	}{
		{"safetensors", &safetensors.FormatError{Path: "a", Offset: 0, Reason: "bad"}, true},
		{"gguf", &gguf.FormatError{Path: "a", Reason: "bad"}, true},
		{"npy wrapped", fmt.Errorf("x: %w", &npy.FormatError{Path: "a", Reason: "bad"}), true},
		{"safetensors own step", fmt.Errorf("x: %w", &safetensors.FormatError{Path: "a", Reason: "bad", Kind: fileerr.LinkOutside}), false},
		{"withStep", withStep(&npy.FormatError{Path: "a", Reason: "bad"}, "do that"), false},
		{"joined", errors.Join(errors.New("a"), &safetensors.FormatError{Reason: "bad", Kind: fileerr.MissingFile}), false},
		{"other", errors.New("plain"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, strings.Contains(damagedHint(tc.err), generic), tc.err)
		})
	}
}

// TestSymlinkedShardOneStep: a shard linked from outside the index's
// directory is refused with the one step that fixes it, not followed by the
// generic "download it again".
func TestSymlinkedShardOneStep(t *testing.T) {
	f, err := safetensors.Open(irisFixture)
	require.NoError(t, err)
	var entries []string
	for _, ti := range f.Tensors() {
		entries = append(entries, fmt.Sprintf("%q: %q", ti.Name, "model.safetensors"))
	}
	require.NoError(t, f.Close())
	dir := t.TempDir()
	abs, err := filepath.Abs(irisFixture)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, filepath.Join(dir, "model.safetensors")))
	index := `{"weight_map": {` + strings.Join(entries, ", ") + `}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(index), 0o644))

	code, _, stderr := tcast("inspect", dir)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "model.safetensors")
	assert.Contains(t, stderr, "copy the file into that directory instead of linking it")
	assert.NotContains(t, stderr, generic)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
}

// TestNotWritableMessage: every command that writes an output, run as a
// user who may not write in the output's directory (root without its
// permission override, see dropFileCapabilities), exits with status 1 and
// says which directory it cannot write in and to choose another.
func TestNotWritableMessage(t *testing.T) {
	ro := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(ro, 0o555))
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	want := "cannot write in " + ro + string(filepath.Separator) + ": permission denied; choose an output directory you can write to"
	for _, args := range [][]string{
		{"convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(ro, "out")},
		{"cast", "../../testdata/conv2d_2.f32.npy", "-dtype", "mxfp4", "-o", filepath.Join(ro, "out")},
		{"decompress", irisFixture, "-o", filepath.Join(ro, "out.safetensors")},
		{"synth", "-o", filepath.Join(ro, "out.safetensors"), "-layers", "1", "-hidden", "64", "-vocab", "64"},
		{"report", "-o", filepath.Join(ro, "r.html"), irisFixture, irisFixture},
	} {
		t.Run(args[0], func(t *testing.T) {
			cmd, stderr := startChild(t, "nodac", nil, args...)
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, stderr.String())
			assert.Equal(t, 1, ee.ExitCode(), stderr.String())
			assert.Contains(t, stderr.String(), "tcast "+args[0]+": output "+args[slices.Index(args, "-o")+1]+": "+want)
			assert.NotContains(t, stderr.String(), "lock")
			entries, err := os.ReadDir(ro)
			require.NoError(t, err)
			assert.Empty(t, entries)
		})
	}
}

// TestOutputExistsMessage: every command refuses an existing output without
// -force with one message, exit status 1, naming the output and saying
// -force once.
func TestOutputExistsMessage(t *testing.T) {
	dir := t.TempDir()
	npyIn := "../../testdata/conv2d_2.f32.npy"
	castOut := filepath.Join(dir, "cast")
	require.NoError(t, os.Mkdir(castOut, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(castOut, "info.json"), []byte("{}"), 0o644))
	file := filepath.Join(dir, "out.safetensors")
	require.NoError(t, os.WriteFile(file, []byte("old"), 0o644))
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", file}, file},
		{[]string{"cast", npyIn, "-dtype", "mxfp4", "-o", castOut}, castOut},
		{[]string{"decompress", irisFixture, "-o", file}, file},
		{[]string{"synth", "-o", file, "-layers", "1", "-hidden", "64", "-vocab", "64"}, file},
		{[]string{"report", "-o", file, irisFixture, irisFixture}, file},
		{[]string{"cast", npyIn, "-dtype", "mxfp4", "-o", filepath.Join(dir, "c2"), "-cpuprofile", file}, file},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			code, _, stderr := tcast(tc.args...)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, tc.out+" already exists; pass -force to replace it, or choose another output\n")
			assert.Equal(t, 1, strings.Count(stderr, "-force"), stderr)
			assert.NotContains(t, stderr, "see tcast help")
		})
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
}

// TestDecompressMissingInput: decompress of an input that does not exist, or
// of a directory that is neither a cast directory nor a checkpoint, says so
// (exit status 1) and what decompress takes, as inspect and convert do.
func TestDecompressMissingInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexist")
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	for _, tc := range []struct {
		in, out, want string
	}{
		{missing, "z.npy", "input " + missing + " does not exist"},
		{empty, "z.npy", empty + " is not a cast directory (it has no info.json) and holds no checkpoint"},
		{missing, "z.safetensors", "checkpoint " + missing + " does not exist"},
	} {
		code, _, stderr := tcast("decompress", "-o", filepath.Join(dir, tc.out), tc.in)
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, tc.want)
		if tc.out == "z.npy" {
			assert.Contains(t, stderr, "decompress takes a cast directory (written by tcast cast) or a checkpoint")
			assert.NotContains(t, stderr, "info.json: no such file")
		}
		assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	}
}

// TestHelpMessages: tcast help says how to get a command's help; an unknown
// command gets the closest ones; every command's -h starts with its usage
// and a description; the flag list names each flag's value as the usage
// does (no Go type names); the bench table's "median of 1 round".
func TestHelpMessages(t *testing.T) {
	code, stdout, _ := tcast("help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "tcast help COMMAND")
	assert.Contains(t, stdout, "tcast COMMAND -h")

	code, _, stderr := tcast("conver")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown command "conver" (did you mean convert?)`)

	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, _ := tcast(c.name, "-h")
			assert.Equal(t, 0, code)
			usage, rest, ok := strings.Cut(stdout, "\n\n")
			require.True(t, ok, stdout)
			desc, _, ok := strings.Cut(rest, "\nflags:\n")
			require.True(t, ok, stdout)
			assert.NotEmpty(t, strings.TrimSpace(desc), "a description after the usage")
			assert.True(t, strings.HasSuffix(strings.TrimSpace(desc), "."), "the description ends with a full stop: %q", desc)
			for i, line := range strings.Split(usage, "\n")[1:] {
				if strings.HasPrefix(strings.TrimSpace(line), "tcast ") {
					assert.True(t, strings.HasPrefix(line, "       tcast "), "usage form %d aligned under the first: %q", i+2, line)
				}
			}
			for _, line := range strings.Split(stdout, "\n") {
				for _, typ := range []string{" string", " int", " uint", " float", " value"} {
					assert.False(t, strings.HasPrefix(line, "  -") && strings.HasSuffix(line, typ), "Go type as a flag's value name: %q", line)
				}
			}
		})
	}
	_, stdout, _ = tcast("bench", "-h")
	assert.NotContains(t, stdout, "64 MiB, beyond the caches) (default")

	code, stdout, stderr = tcast("bench", "-size", "l2", "-kernels", "MemRead", "-rounds", "1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "median of 1 round\n")
}
