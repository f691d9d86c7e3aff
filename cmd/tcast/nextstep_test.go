package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

// generic is the next step added to a damaged input file's message.
const generic = "download or export it again"

// TestNextStep: each typed error gets its one next step, by its kind and
// reader, through wrapping; an error that says what to do already, or
// that no step fits, gets none.
func TestNextStep(t *testing.T) {
	notMask := &npy.FormatError{Format: "npy", Path: "m.npy", Reason: "header", Err: fmt.Errorf("x: %w", npy.ErrNotMask)}
	for _, tc := range []struct {
		name string
		cmd  string
		err  error
		want string // the step; "" for none
	}{
		{"safetensors damaged", "inspect", &safetensors.FormatError{Format: "safetensors", Path: "a", Reason: "bad"},
			"the file is damaged or not what its name says: " + generic},
		{"gguf truncated", "convert", fmt.Errorf("x: %w", &gguf.FormatError{Format: "gguf", Path: "a", Reason: "r",
			Err: io.ErrUnexpectedEOF, Kind: fileerr.Truncated}), "the file is truncated: " + generic},
		{"gguf unsupported", "inspect", &gguf.FormatError{Format: "gguf", Reason: "r", Kind: fileerr.Unsupported},
			"tcast reads little-endian GGUF version 3: convert the file with a current llama.cpp"},
		{"npy unsupported", "cast", &npy.FormatError{Format: "npy", Reason: "r", Kind: fileerr.Unsupported},
			"save the array again with numpy.save, as a bool, integer or float array"},
		{"other unsupported", "x", &fileerr.FormatError{Format: "imatrix", Kind: fileerr.Unsupported},
			"tcast does not read this variant of the format (docs/FORMAT.md)"},
		{"npz too large", "convert", fmt.Errorf("-act-norms: %w", &npy.FormatError{Format: "npz", Kind: fileerr.TooLarge}),
			"the archive is damaged; recreate it with numpy.savez"},
		{"safetensors too large", "inspect", &safetensors.FormatError{Format: "safetensors", Kind: fileerr.TooLarge},
			"the file is damaged or hostile; split a real checkpoint of that many tensors into shards"},
		{"gguf too large", "inspect", &gguf.FormatError{Format: "gguf", Kind: fileerr.TooLarge},
			"the file is damaged or hostile: it claims more than tcast reads (docs/FORMAT.md, Limits on input files)"},
		{"missing shard", "verify", &safetensors.FormatError{Format: "safetensors", Path: filepath.Join("d", "i.json"),
			Kind: fileerr.MissingFile, Err: &fs.PathError{Op: "stat", Path: "d/s", Err: fs.ErrNotExist}},
			"download every shard the index lists into d"},
		{"linked shard", "inspect", &safetensors.FormatError{Format: "safetensors", Kind: fileerr.LinkOutside},
			"copy the file into that directory instead of linking it"},
		{"cast directory", "decompress", &castdir.FormatError{Format: "castdir", Path: "c/info.json", Kind: fileerr.Truncated},
			"the cast directory is damaged or was edited: write it again with tcast cast"},
		{"not the format, a command of no input", "x", &gguf.FormatError{Format: "gguf", Kind: fileerr.NotFormat},
			"if it is one, it is damaged: " + generic},
		{"a file that cannot be read", "verify", &imatrix.FormatError{Format: "imatrix", Path: "x.dat", Reason: "cannot open",
			Err: &fs.PathError{Op: "open", Path: "x.dat", Err: fs.ErrNotExist}}, ""},
		{"not a mask, in cast", "cast", notMask, "save the mask with numpy as bool or uint8 in C order (numpy.ascontiguousarray)"},
		{"not a mask, elsewhere", "inspect", notMask, ""},
		{"not a vector, convert", "convert", flagFile("-act-norms", fmt.Errorf("n.npz: w: %w", npy.ErrNotVector)),
			"give an .npz holding one 1-D norm vector per weight, named as the weight, as numpy.savez writes it"},
		{"not a vector, cast", "cast", flagFile("-act-norms", fmt.Errorf("x: %w", npy.ErrNotVector)),
			"give one norm per index along the scaled axis"},
		{"not an imatrix", "convert", &imatrix.NotImatrixError{Path: "x", Err: &fileerr.FormatError{Kind: fileerr.NotFormat}}, ""},
		{"joined", "inspect", errors.Join(errors.New("a"), &safetensors.FormatError{Kind: fileerr.MissingFile, Path: "i.json"}),
			"download every shard the index lists into ."},
		{"nothing cast", "convert", &convert.NothingCastError{},
			"choose another -layout, -dtype or -axis, or name tensors to cast with -include"},
		{"no model file", "convert", fmt.Errorf("m: %w", convert.ErrNoModelFile), "or write a generic GGUF with -gguf-generic"},
		{"name too long", "convert", fmt.Errorf("m: %w", convert.ErrNameTooLong), "shorten names with -rename RE=REPL"},
		{"other", "inspect", errors.New("plain"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, nextStep(tc.cmd, tc.err), tc.err)
			msg := message(tc.cmd, tc.err)
			sep := "; "
			if tc.name == "nothing cast" {
				sep = "\n" // after the list of reasons
			}
			if tc.want == "" {
				assert.Equal(t, tc.err.Error(), msg)
			} else {
				assert.Equal(t, tc.err.Error()+sep+tc.want, msg)
			}
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
	page := filepath.Join(dir, "out.html")
	require.NoError(t, os.WriteFile(page, []byte("old"), 0o644))
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", file}, file},
		{[]string{"cast", npyIn, "-dtype", "mxfp4", "-o", castOut}, castOut},
		{[]string{"decompress", irisFixture, "-o", file}, file},
		{[]string{"synth", "-o", file, "-layers", "1", "-hidden", "64", "-vocab", "64"}, file},
		{[]string{"report", "-o", page, irisFixture, irisFixture}, page},
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

// TestWrongKindMessages (new-user finding 5): a file of the wrong kind is
// said to be what it is, with what the command (or flag) takes and what
// to use instead; it is not called damaged. A file whose kind cannot be
// told keeps the reader's message, with what the command takes.
func TestWrongKindMessages(t *testing.T) {
	dir := t.TempDir()
	put := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	iris, err := os.ReadFile(irisFixture)
	require.NoError(t, err)
	arr, err := os.ReadFile("../../testdata/conv2d_2.f32.npy")
	require.NoError(t, err)
	model := put("model.safetensors", iris)
	npyFile := put("x.npy", arr)
	gguf := put("some.gguf", arr) // an .npy array under a GGUF name
	config := put("config.json", []byte(`{"architectures": ["LlamaForCausalLM"], "model_type": "llama"}`))
	ck := filepath.Dir(put("ck/model.safetensors", iris))
	text := put("notes.txt", []byte("this is no file of any format\n"))
	cast := filepath.Join(dir, "c")
	code, _, stderr := tcast("cast", npyFile, "-dtype", "mxfp4", "-o", cast)
	require.Equal(t, 0, code, stderr)
	out := filepath.Join(dir, "out")
	wanda := []string{"-dtype", "mxfp4", "-sparsity", "2:4", "-sparsity-criterion", "wanda", "-o", out}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cast", model, "-dtype", "mxfp4", "-o", out},
			model + " is a safetensors checkpoint, not an .npy array; tcast cast takes one .npy array: use tcast convert for checkpoints"},
		{[]string{"cast", ck, "-dtype", "mxfp4", "-o", out},
			ck + " is a checkpoint directory, not a regular file; tcast cast takes one .npy array: use tcast convert for checkpoints"},
		{[]string{"convert", config, "-dtype", "mxfp4", "-o", out},
			config + " is a model configuration, not a checkpoint; tcast convert takes a checkpoint: " +
				"give the directory that holds the checkpoint, or its .safetensors file or index"},
		{[]string{"convert", cast, "-dtype", "mxfp4", "-o", out},
			cast + " is a cast directory (written by tcast cast), not a checkpoint; tcast convert takes a checkpoint: " +
				"tcast inspect, verify and decompress read cast directories"},
		{[]string{"inspect", npyFile},
			npyFile + " is a NumPy .npy array, not a checkpoint; tcast inspect takes a checkpoint or a cast directory: cast arrays with tcast cast"},
		{[]string{"decompress", gguf, "-o", filepath.Join(dir, "d.safetensors")},
			gguf + " is a NumPy .npy array, not a checkpoint; tcast decompress takes a cast directory or a checkpoint: cast arrays with tcast cast"},
		{[]string{"verify", model, npyFile},
			npyFile + " is a NumPy .npy array, not a checkpoint; tcast verify takes checkpoints or cast directories: cast arrays with tcast cast"},
		{append([]string{"convert", model, "-act-norms", npyFile}, wanda...),
			npyFile + " is a NumPy .npy array, not an .npz archive; -act-norms takes an .npz of 1-D norm vectors, one per weight (numpy.savez)"},
		{[]string{"cast", text, "-dtype", "mxfp4", "-o", out},
			"npy: " + text + ": offset 0: bad magic (not an .npy file); tcast cast takes one .npy array; if it is one, it is damaged: " + generic},
		{[]string{"inspect", text}, "load: " + text + ": not a checkpoint: neither a safetensors file (its first 8 bytes are no header " +
			"length that fits the file) nor a GGUF file; tcast inspect takes a checkpoint or a cast directory; if it is one, it is damaged: " + generic},
	} {
		t.Run(tc.args[0]+" "+filepath.Base(tc.args[1]), func(t *testing.T) {
			code, _, stderr := tcast(tc.args...)
			assert.Equal(t, 1, code, stderr)
			assert.Equal(t, "tcast "+tc.args[0]+": "+tc.want+"\n", stderr)
			if !strings.HasSuffix(tc.want, generic) {
				assert.NotContains(t, stderr, "damaged", "of another kind, not damaged")
			}
		})
	}
	assert.NoFileExists(t, out)
}
