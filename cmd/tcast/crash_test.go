//go:build unix

package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// crashForm is one output form of tcast convert: the destination's base
// name, the flags that write it, and the flags that write a different
// complete output there (the old output -force replaces).
type crashForm struct {
	name string
	dest string
	args []string
	old  []string
}

// crashForms are the output forms the crash-safety suite kills writers of:
// one file, a directory, shards, GGUF and the loader layouts with configs.
var crashForms = []crashForm{
	{"single", "out.safetensors", []string{"-dtype", "mxfp4"}, []string{"-dtype", "nvfp4"}},
	{"directory", "out", []string{"-dtype", "mxfp4"}, []string{"-dtype", "nvfp4"}},
	{"shards", "out", []string{"-dtype", "mxfp4", "-shard-size", "300KB"}, []string{"-dtype", "nvfp4", "-shard-size", "200KB"}},
	{"gguf", "out.gguf", []string{"-dtype", "q8_0", "-layout", "gguf", "-gguf-generic"}, []string{"-dtype", "q4_0", "-layout", "gguf", "-gguf-generic"}},
	{"compressed-tensors", "out", []string{"-dtype", "int4_g128", "-layout", "compressed-tensors"}, []string{"-dtype", "int8_g128", "-layout", "compressed-tensors"}},
	{"modelopt", "out", []string{"-dtype", "nvfp4", "-layout", "modelopt"}, []string{"-dtype", "mxfp4", "-layout", "gpt-oss"}},
	{"gpt-oss", "out", []string{"-dtype", "mxfp4", "-layout", "gpt-oss"}, []string{"-dtype", "nvfp4", "-layout", "modelopt"}},
}

// tree is the content of an output: the SHA-256 of every regular file by
// its path relative to the output ("." for an output that is one file).
type tree map[string][sha256.Size]byte

// snapshot reads the output at p; it returns nil if nothing is there.
func snapshot(t *testing.T, p string) tree {
	t.Helper()
	if _, err := os.Lstat(p); os.IsNotExist(err) {
		return nil
	}
	out := tree{}
	require.NoError(t, filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(q)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(p, q)
		if err != nil {
			return err
		}
		out[rel] = sha256Sum(b)
		return nil
	}))
	return out
}

func sha256Sum(b []byte) [sha256.Size]byte { return sha256.Sum256(b) }

func (a tree) equal(b tree) bool {
	if len(a) != len(b) || a == nil != (b == nil) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// place copies the output src to dst (which does not exist).
func place(t *testing.T, src, dst string) {
	t.Helper()
	info, err := os.Stat(src)
	require.NoError(t, err)
	if info.IsDir() {
		require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
		return
	}
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, b, 0o644))
}

// crashFixture is a form's expected outputs: the new output and the old one
// -force replaces, each written once in-process and verified against the
// source.
type crashFixture struct {
	model    string
	form     crashForm
	newPath  string
	oldPath  string
	new, old tree
}

func newCrashFixture(t *testing.T, model string, form crashForm) *crashFixture {
	t.Helper()
	f := &crashFixture{model: model, form: form}
	f.newPath = filepath.Join(t.TempDir(), form.dest)
	f.oldPath = filepath.Join(t.TempDir(), form.dest)
	for _, c := range []struct {
		path  string
		flags []string
	}{{f.newPath, form.args}, {f.oldPath, form.old}} {
		code, _, stderr := tcast(append(append([]string{"convert", model}, c.flags...), "-o", c.path)...)
		require.Equal(t, 0, code, stderr)
		code, _, stderr = tcast("verify", model, c.path)
		require.Equal(t, 0, code, "the reference output verifies: %s", stderr)
	}
	f.new = snapshot(t, f.newPath)
	f.old = snapshot(t, f.oldPath)
	require.False(t, f.new.equal(f.old), "the old output differs from the new one")
	return f
}

// command returns the arguments of the conversion writing dest.
func (f *crashFixture) command(dest string, force bool) []string {
	args := append(append([]string{"convert", f.model}, f.form.args...), "-o", dest)
	if force {
		args = append(args, "-force")
	}
	return args
}

// setup makes a new parent directory, with the old output at the
// destination if force is set; it returns the parent and the destination.
func (f *crashFixture) setup(t *testing.T, force bool) (parent, dest string) {
	t.Helper()
	parent = t.TempDir()
	dest = filepath.Join(parent, f.form.dest)
	if force {
		place(t, f.oldPath, dest)
	}
	return parent, dest
}

// start runs the test binary as tcast with args in mode (see TestMain).
func startChild(t *testing.T, mode string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "TCAST_CHILD="+mode), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	return cmd, &stderr
}

// Outcome of one kill: what the destination held right after it.
const (
	killBefore    = iota // no temporary yet: the destination untouched
	killMidWrite         // temporaries left, destination untouched (or old moved aside)
	killPublished        // the new output in place
	killFinished         // the child exited before the kill
	killOutcomes
)

// TestCrashSafetyKill kills tcast convert with SIGKILL at random points of
// its run, for every output form, with and without -force over an old
// output. After each kill the destination is absent (or the old output,
// in place or moved aside) or the new output whole; the next run removes
// every temporary, puts back a moved-aside old output, and (without
// -force) refuses an existing output or writes the new one.
func TestCrashSafetyKill(t *testing.T) {
	_, model := synthDir(t, "-hidden", "256", "-vocab", "256")
	kills := 20
	if testing.Short() {
		kills = 6
	}
	for fi, form := range crashForms {
		t.Run(form.name, func(t *testing.T) {
			f := newCrashFixture(t, model, form)
			// The duration of a whole run, process start included: the
			// shortest of three, so that the kill points fall inside runs.
			whole := time.Duration(math.MaxInt64)
			for range 3 {
				parent, dest := f.setup(t, false)
				begin := time.Now()
				cmd, stderr := startChild(t, "crash", nil, f.command(dest, false)...)
				require.NoError(t, cmd.Wait(), stderr.String())
				whole = min(whole, time.Since(begin))
				require.Equal(t, []string{form.dest}, entries(t, parent))
			}
			rng := rand.New(rand.NewPCG(15, uint64(fi)))
			var outcomes [killOutcomes]int
			tried, survived := 0, 0
			// Kill points spread over the run: one per stratum of
			// [0, whole); a run that finished first does not count as a
			// kill (its outcome is still checked) and its stratum is tried
			// again, up to three times as many runs as kills.
			for i := 0; tried < kills && i < 3*kills; i++ {
				force := i%2 == 1
				delay := time.Duration((float64(tried) + rng.Float64()) / float64(kills) * float64(whole))
				parent, dest := f.setup(t, force)
				cmd, _ := startChild(t, "crash", nil, f.command(dest, force)...)
				time.Sleep(delay)
				_ = cmd.Process.Kill()
				waitErr := cmd.Wait()
				ok := f.checkKill(t, i, force, delay, waitErr, parent, dest, &outcomes)
				if waitErr == nil {
					continue
				}
				tried++
				if ok {
					survived++
				}
			}
			t.Logf("%s: %d/%d kills survived (run %v; killed before any temporary %d, mid-write %d, after publishing %d; runs that finished first %d)",
				form.name, survived, tried, whole.Round(time.Millisecond),
				outcomes[killBefore], outcomes[killMidWrite], outcomes[killPublished], outcomes[killFinished])
			require.GreaterOrEqual(t, tried, kills/2, "too few runs were killed before they finished")
			require.Equal(t, tried, survived)
		})
	}
}

// checkKill checks one killed run and the next run; it reports whether both
// kept the promises, and counts the outcome.
func (f *crashFixture) checkKill(t *testing.T, i int, force bool, delay time.Duration, waitErr error, parent, dest string, outcomes *[killOutcomes]int) bool {
	t.Helper()
	fail := func(format string, args ...any) bool {
		t.Errorf("kill %d (force %v, after %v): "+format, append([]any{i, force, delay}, args...)...)
		return false
	}
	base := f.form.dest
	temps, err := atomicfile.Temporaries(parent)
	require.NoError(t, err)
	for _, e := range entries(t, parent) {
		if e != base && !atomicfile.IsTemporary(e) {
			return fail("stray entry %q", e)
		}
	}
	got := snapshot(t, dest)
	var aside tree
	for _, p := range temps {
		if strings.HasPrefix(filepath.Base(p), ".tcast-old-") {
			aside = snapshot(t, p)
		}
	}
	wantNext := 0 // the next run, without -force, writes the new output
	switch {
	case got.equal(f.new):
		wantNext = 1 // refuses the existing output
		if waitErr == nil {
			outcomes[killFinished]++
		} else {
			outcomes[killPublished]++
		}
	case got == nil && !force:
		if len(temps) == 0 {
			outcomes[killBefore]++
		} else {
			outcomes[killMidWrite]++
		}
	case force && got.equal(f.old), force && got == nil && aside.equal(f.old):
		wantNext = 1
		if len(temps) == 0 {
			outcomes[killBefore]++
		} else {
			outcomes[killMidWrite]++
		}
	case got == nil:
		return fail("the old output is gone (temporaries %q)", temps)
	default:
		return fail("the destination is neither absent, the old output nor the new one (temporaries %q)", temps)
	}
	if waitErr == nil && !got.equal(f.new) {
		return fail("the child exited 0 without publishing")
	}
	code, _, stderr := tcast(f.command(dest, false)...)
	if code != wantNext {
		return fail("the next run exited %d, want %d: %s", code, wantNext, stderr)
	}
	if left := entries(t, parent); !slices.Equal(left, []string{base}) {
		return fail("after the next run the directory holds %q", left)
	}
	after := snapshot(t, dest)
	if wantNext == 0 || got.equal(f.new) {
		if !after.equal(f.new) {
			return fail("after the next run the destination is not the new output")
		}
	} else if !after.equal(f.old) {
		return fail("after the next run the destination is not the old output")
	}
	return true
}

// largestFile returns the size of the largest file of the output at p.
func largestFile(t *testing.T, p string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n = max(n, info.Size())
		}
		return err
	}))
	return n
}

// checkFailed checks the directory of a run that failed: it holds the old
// output if force was set (nothing otherwise), and no temporary or lock.
func (f *crashFixture) checkFailed(t *testing.T, force bool, parent, dest string) {
	t.Helper()
	if force {
		require.Equal(t, []string{f.form.dest}, entries(t, parent), "only the old output is left")
		require.True(t, snapshot(t, dest).equal(f.old), "the old output is whole")
	} else {
		require.Empty(t, entries(t, parent), "no output, no temporary, no lock")
	}
}

// TestCrashSafetyFullDisk fills the disk under tcast convert (a file-size
// limit on the child: writes past it fail with EFBIG) at several sizes below
// the output's largest file, for every output form, with and without -force
// over an old output: the run fails naming the error, and leaves the
// directory as it found it.
func TestCrashSafetyFullDisk(t *testing.T) {
	_, model := synthDir(t, "-hidden", "256", "-vocab", "256")
	for _, form := range crashForms {
		t.Run(form.name, func(t *testing.T) {
			f := newCrashFixture(t, model, form)
			largest := largestFile(t, f.newPath)
			runs := 0
			for k := int64(0); k < 5; k++ {
				for _, force := range []bool{false, true} {
					limit := largest * k / 5
					parent, dest := f.setup(t, force)
					cmd, stderr := startChild(t, "fsize", []string{fmt.Sprintf("TCAST_CHILD_FSIZE=%d", limit)}, f.command(dest, force)...)
					err := cmd.Wait()
					var ee *exec.ExitError
					require.ErrorAs(t, err, &ee, "limit %d: %s", limit, stderr.String())
					require.Equal(t, 1, ee.ExitCode(), stderr.String())
					require.Contains(t, stderr.String(), "file too large")
					f.checkFailed(t, force, parent, dest)
					runs++
				}
			}
			t.Logf("%s: %d/%d full-disk runs left the directory as they found it (limits 0..%d bytes)", form.name, runs, runs, largest*4/5)
		})
	}
}

// TestCrashSafetyNoWritePermission converts into a directory without write
// permission, for every output form, with and without -force over an old
// output. The child gives up root's permission override (see
// dropFileCapabilities), so the test means the same as root and as any
// other user: the run fails with "permission denied" and the directory
// stays as it was.
func TestCrashSafetyNoWritePermission(t *testing.T) {
	if os.Geteuid() == 0 && runtime.GOOS != "linux" {
		t.Skip("root overrides file permissions and can drop that only on Linux")
	}
	_, model := synthDir(t, "-hidden", "256", "-vocab", "256")
	for _, form := range crashForms {
		t.Run(form.name, func(t *testing.T) {
			f := newCrashFixture(t, model, form)
			runs := 0
			for _, force := range []bool{false, true} {
				parent, dest := f.setup(t, force)
				require.NoError(t, os.Chmod(parent, 0o555))
				t.Cleanup(func() { os.Chmod(parent, 0o755) })
				cmd, stderr := startChild(t, "nodac", nil, f.command(dest, force)...)
				err := cmd.Wait()
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, stderr.String())
				require.Equal(t, 1, ee.ExitCode(), stderr.String())
				require.Contains(t, stderr.String(), "permission denied")
				require.Contains(t, stderr.String(), dest)
				require.NotContains(t, stderr.String(), ".tcast-tmp-", "the message names the output, not a temporary")
				f.checkFailed(t, force, parent, dest)
				runs++
				if force {
					t.Logf("%s", strings.TrimSpace(stderr.String()))
				}
			}
			t.Logf("%s: %d/%d runs into a read-only directory failed and left it as it was", form.name, runs, runs)
		})
	}
}
