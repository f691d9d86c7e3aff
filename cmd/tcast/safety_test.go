//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
)

// TestMain lets the tests run tcast as a child process: with TCAST_CHILD set
// the test binary is the tcast command. With TCAST_CHILD=stall, a conversion
// prints "stalled" after its first tensor and waits until the file named by
// TCAST_CHILD_GO exists (or forever), so that a test can signal, kill or race
// it at a known point.
func TestMain(m *testing.M) {
	switch os.Getenv("TCAST_CHILD") {
	case "":
		os.Exit(m.Run())
	case "fsize":
		// A disk that fills up: writes past 256 KiB (or TCAST_CHILD_FSIZE
		// bytes) fail with EFBIG.
		signal.Ignore(syscall.SIGXFSZ)
		size := uint64(256 << 10)
		if v, err := strconv.ParseUint(os.Getenv("TCAST_CHILD_FSIZE"), 10, 64); err == nil {
			size = v
		}
		lim := syscall.Rlimit{Cur: size, Max: size}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			os.Exit(3)
		}
	case "tmpfs":
		tmpfsChild()
	case "nodac":
		// A process held to file permissions even when it runs as root.
		if err := dropFileCapabilities(); err != nil {
			fmt.Fprintln(os.Stderr, "dropping capabilities:", err)
			os.Exit(3)
		}
	case "stall":
		once := false
		testHookProgress = func(convert.Progress) {
			if once {
				return
			}
			once = true
			fmt.Fprintln(os.Stdout, "stalled")
			for {
				if _, err := os.Stat(os.Getenv("TCAST_CHILD_GO")); err == nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	main()
}

// child starts tcast with args as a child process.
func child(t *testing.T, mode, goFile string, args ...string) (*exec.Cmd, *bufio.Reader, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TCAST_CHILD="+mode, "TCAST_CHILD_GO="+goFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewReader(out), &stderr
}

// waitStalled reads the child's stdout until it says it stalled.
func waitStalled(t *testing.T, r *bufio.Reader, stderr *bytes.Buffer) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				done <- fmt.Errorf("child ended before stalling: %v; stderr: %s", err, stderr.String())
				return
			}
			if strings.TrimSpace(line) == "stalled" {
				done <- nil
				go io.Copy(io.Discard, r)
				return
			}
		}
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("child did not stall within a minute")
	}
}

// entries lists a directory, hidden files included.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// synthDir writes a small Llama-shaped checkpoint and its config.json in a
// new directory.
func synthDir(t *testing.T, flags ...string) (dir, model string) {
	t.Helper()
	dir = t.TempDir()
	model, _ = synthTo(t, dir, append([]string{"-layers", "2", "-hidden", "128", "-vocab", "128", "-seed", "1"}, flags...)...)
	return dir, model
}

// Finding 1: converting in a checkpoint directory never writes the input's
// files: not its config.json (content and mode), not its weights.
func TestConvertNeverWritesInput(t *testing.T) {
	dir, model := synthDir(t)
	cfg := filepath.Join(dir, "config.json")
	require.NoError(t, os.Chmod(cfg, 0o644))
	before, err := os.ReadFile(cfg)
	require.NoError(t, err)
	weights, err := os.ReadFile(model)
	require.NoError(t, err)
	unchanged := func() {
		t.Helper()
		b, err := os.ReadFile(cfg)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(b), "config.json of the input is untouched")
		st, err := os.Stat(cfg)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
		w, err := os.ReadFile(model)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(weights, w), "weights of the input are untouched")
	}

	code, _, stderr := tcast("convert", model, "-layout", "modelopt", "-dtype", "nvfp4", "-o", filepath.Join(dir, "model-nvfp4.safetensors"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "layout writes config.json and hf_quant_config.json beside the weights; give -o a directory")
	unchanged()
	for _, out := range []string{dir, model, filepath.Dir(dir)} {
		code, _, stderr = tcast("convert", model, "-layout", "modelopt", "-dtype", "nvfp4", "-force", "-o", out)
		assert.Equal(t, 1, code, out)
		assert.Contains(t, stderr, "overwrite the input", out)
		unchanged()
	}
	out := filepath.Join(dir, "nvfp4")
	code, _, stderr = tcast("convert", model, "-layout", "modelopt", "-dtype", "nvfp4", "-o", out)
	require.Equal(t, 0, code, stderr)
	unchanged()
	b, err := os.ReadFile(filepath.Join(out, "config.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "quantization_config")
	assert.FileExists(t, filepath.Join(out, "hf_quant_config.json"))
}

// Finding 4: a layout that casts nothing is an error, and nothing is written.
func TestConvertNothingCastIsAnError(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{
		{"-layout", "compressed-tensors", "-dtype", "nvfp4"},
		{"-dtype", "mxfp4", "-axis", "5"},
	} {
		code, _, stderr := tcast(append([]string{"convert", irisFixture, "-o", out}, args...)...)
		assert.Equal(t, 1, code, args)
		assert.Contains(t, stderr, "no tensor was cast", args)
		assert.Contains(t, stderr, "-include", args)
		assert.NoDirExists(t, out, "nothing is written: %v", args)
	}
	// A datatype the layout never takes is a usage error, before the input is read.
	code, _, stderr := tcast("convert", irisFixture, "-o", out, "-layout", "modelopt", "-dtype", "mxfp4")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "takes nvfp4 only")
	assert.NoDirExists(t, out)
	// The same shape of weight kept in one layout is an error under -include in every layout.
	for _, lay := range []string{"compressed-tensors", "modelopt"} {
		code, _, stderr := tcast("convert", irisFixture, "-layout", lay, "-dtype", "nvfp4", "-include", "conv2d_1/", "-o", out)
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, "-include: conv2d_1/ matches tensor conv2d_1/Conv2D_bn_offset, which cannot be cast", lay)
	}
}

// Finding 5: every file of an output gets 0666 less the umask.
func TestConvertFileModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	_, model := synthDir(t)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := tcast("convert", model, "-layout", "modelopt", "-dtype", "nvfp4", "-shard-size", "100KB", "-o", out)
	require.Equal(t, 0, code, stderr)
	st, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm(), out)
	names := entries(t, out)
	assert.Contains(t, names, "config.json")
	assert.Contains(t, names, "hf_quant_config.json")
	assert.Contains(t, names, safetensors.IndexFileName)
	for _, n := range names {
		st, err := os.Stat(filepath.Join(out, n))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), n)
	}
}

// Finding 6: the output's extension is honoured.
func TestOutputExtensions(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "x.gguf"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "use -layout gguf")
	assert.NoDirExists(t, filepath.Join(dir, "x.gguf"))
	code, _, stderr = tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "x.npy"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "names a .npy file, and a checkpoint is not written as one")

	conv := filepath.Join(dir, "conv")
	code, _, stderr = tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", conv)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = tcast("decompress", "-o", filepath.Join(dir, "x.npy"), conv)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "decompresses to safetensors")
	assert.NoFileExists(t, filepath.Join(dir, "x.npy"))
	code, _, stderr = tcast("decompress", "-o", filepath.Join(dir, "plain.safetensors"), conv)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = tcast("decompress", "-o", filepath.Join(dir, "plain.safetensors"), conv)
	assert.Equal(t, 1, code, "an existing output needs -force")
	assert.Contains(t, stderr, "-force")
}

// Finding 7: -force replaces an output as a whole: no file of the old one
// survives beside the new one.
func TestForceReplacesWholeOutput(t *testing.T) {
	_, model := synthDir(t)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := tcast("convert", model, "-layout", "modelopt", "-dtype", "nvfp4", "-shard-size", "100KB", "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, entries(t, out), "hf_quant_config.json")
	code, _, stderr = tcast("convert", model, "-layout", "compressed-tensors", "-dtype", "int4_g32", "-o", out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "-force")
	code, _, stderr = tcast("convert", model, "-layout", "compressed-tensors", "-dtype", "int4_g32", "-o", out, "-force")
	require.Equal(t, 0, code, stderr)
	assert.ElementsMatch(t, []string{"config.json", "model.safetensors"}, entries(t, out))
	code, _, stderr = tcast("verify", model, out)
	assert.Equal(t, 0, code, stderr)

	// A directory that holds other work is not replaced.
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644))
	code, _, stderr = tcast("convert", model, "-dtype", "mxfp4", "-o", other, "-force")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "notes.txt")
	assert.FileExists(t, filepath.Join(other, "notes.txt"))
}

// Finding 8: converting a converted checkpoint carries none of the old
// conversion's metadata along, so a round trip through decompress verifies.
func TestNoStaleMetadata(t *testing.T) {
	dir := t.TempDir()
	const e, h, n = 2, 64, 96
	gu := make([]byte, 4*e*h*n)
	for i := range e * h * n {
		v := float32(i%37) - 18
		b := math.Float32bits(v)
		gu[4*i], gu[4*i+1], gu[4*i+2], gu[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	src := filepath.Join(dir, "src.safetensors")
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{
		{Name: "model.layers.0.mlp.experts.gate_up_proj", DType: safetensors.F32, Shape: []int{e, h, n}, Data: gu},
	}, map[string]string{"format": "pt"}))
	oss := filepath.Join(dir, "oss")
	code, _, stderr := tcast("convert", src, "-layout", "gpt-oss", "-dtype", "mxfp4", "-o", oss)
	require.Equal(t, 0, code, stderr)
	plain := filepath.Join(dir, "plain.safetensors")
	code, _, stderr = tcast("decompress", "-o", plain, oss)
	require.Equal(t, 0, code, stderr)
	f, err := safetensors.Open(plain)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"format": "pt"}, f.Metadata(), "no tcast keys in decompressed output")
	f.Close()
	again := filepath.Join(dir, "again")
	code, _, stderr = tcast("convert", plain, "-dtype", "mxfp4", "-o", again)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := tcast("verify", "-json", plain, again)
	require.Equal(t, 0, code, stderr)
	var vr []verify.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &vr))
	require.Len(t, vr, 1)
	assert.True(t, vr[0].Converted)
	// The MXFP4 values decompressed are MXFP4 values again: the second cast is exact.
	assert.Nil(t, vr[0].SQNR)
	assert.Zero(t, vr[0].MaxAbsErr)
}

// Finding 13: SIGINT and SIGTERM remove the output being written; a SIGKILL
// leaves a temporary that the next run removes.
func TestSignalsLeaveNothing(t *testing.T) {
	_, model := synthDir(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			cmd, r, stderr := child(t, "stall", "", "convert", model, "-dtype", "mxfp4", "-workers", "1", "-o", out)
			waitStalled(t, r, stderr)
			assert.NotEmpty(t, entries(t, parent), "a temporary is being written")
			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			if sig == syscall.SIGKILL {
				assert.NotEmpty(t, entries(t, parent), "a killed writer leaves its temporary")
				code, _, stderr := tcast("convert", model, "-dtype", "mxfp4", "-o", out)
				require.Equal(t, 0, code, stderr)
				assert.Equal(t, []string{"out"}, entries(t, parent), "the next run removed the temporary")
				return
			}
			assert.Equal(t, 128+int(sig), ee.ExitCode())
			assert.Empty(t, entries(t, parent), "no temporary, no lock, no output")
			by := map[syscall.Signal]string{syscall.SIGINT: "Ctrl-C (SIGINT)", syscall.SIGTERM: "SIGTERM"}[sig]
			assert.True(t, strings.HasSuffix(stderr.String(), "tcast: stopped by "+by+"; removed the unfinished output "+
				out+" (nothing of it appeared); run the command again to write it\n"), "%q", stderr.String())
		})
	}
}

// Finding 13: a second writer of the same output fails with a clear message
// while the first runs, and the first one's output is whole.
func TestSecondWriterIsRefused(t *testing.T) {
	_, model := synthDir(t)
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	goFile := filepath.Join(t.TempDir(), "go")
	cmd, r, stderr := child(t, "stall", goFile, "convert", model, "-dtype", "mxfp4", "-workers", "1", "-o", out)
	waitStalled(t, r, stderr)
	code, _, stderr2 := tcast("convert", model, "-dtype", "nvfp4", "-o", out, "-force")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr2, "is being written by another process")
	assert.Contains(t, stderr2, fmt.Sprint(cmd.Process.Pid))
	require.NoError(t, os.WriteFile(goFile, nil, 0o644))
	require.NoError(t, cmd.Wait(), stderr.String())
	code, _, stderr2 = tcast("convert", model, "-dtype", "nvfp4", "-o", out)
	assert.Equal(t, 1, code, "the finished output exists")
	code, _, stderr2 = tcast("verify", model, out)
	assert.Equal(t, 0, code, stderr2)
	assert.Equal(t, []string{"out"}, entries(t, parent))
}

// Finding 13: a sharded checkpoint converted onto itself is refused.
func TestConvertOntoItselfIsRefused(t *testing.T) {
	_, model := synthDir(t)
	sharded := filepath.Join(t.TempDir(), "sharded")
	code, _, stderr := tcast("convert", model, "-dtype", "mxfp4", "-shard-size", "100KB", "-o", sharded)
	require.Equal(t, 0, code, stderr)
	before := entries(t, sharded)
	code, _, stderr = tcast("convert", sharded, "-dtype", "nvfp4", "-o", sharded, "-force")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "overwrite the input")
	assert.Equal(t, before, entries(t, sharded))
}

// A full disk: the conversion fails naming the output, and leaves nothing.
func TestFullDiskLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	cmd, r, stderr := child(t, "fsize", "", "convert", irisFixture, "-dtype", "mxint8", "-o", out)
	go io.Copy(io.Discard, r)
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	assert.Equal(t, 1, ee.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "file too large")
	assert.Contains(t, stderr.String(), "model.safetensors")
	assert.Empty(t, entries(t, parent), "no output, no temporary, no lock")
}

// Finding 13: decompress never writes into the cast directory it reads, and
// cast and decompress refuse an existing output without -force.
func TestCastAndDecompressProtectInputs(t *testing.T) {
	dir := t.TempDir()
	cast := filepath.Join(dir, "cast")
	code, _, stderr := tcast("cast", "-dtype", "mxfp4", "-o", cast, "../../testdata/conv2d_2.f32.npy")
	require.Equal(t, 0, code, stderr)
	packed, err := os.ReadFile(filepath.Join(cast, "packed.npy"))
	require.NoError(t, err)
	code, _, stderr = tcast("decompress", "-o", filepath.Join(cast, "packed.npy"), "-force", cast)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "overwrite the input")
	after, err := os.ReadFile(filepath.Join(cast, "packed.npy"))
	require.NoError(t, err)
	assert.Equal(t, packed, after)

	code, _, stderr = tcast("cast", "-dtype", "nvfp4", "-o", cast, "../../testdata/conv2d_2.f32.npy")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "-force")
	back := filepath.Join(dir, "back.npy")
	code, _, stderr = tcast("decompress", "-o", back, cast)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = tcast("decompress", "-o", back, cast)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "-force")
	code, _, stderr = tcast("decompress", "-o", back, "-force", cast)
	assert.Equal(t, 0, code, stderr)
}

// cast -force replaces a cast directory, never a directory holding other work.
func TestCastForceKeepsOtherWork(t *testing.T) {
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644))
	code, _, stderr := tcast("cast", "-dtype", "mxfp4", "-force", "-o", other, "../../testdata/conv2d_2.f32.npy")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "notes.txt")
	assert.FileExists(t, filepath.Join(other, "notes.txt"))
}
