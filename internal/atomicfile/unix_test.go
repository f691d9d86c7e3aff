//go:build unix

package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModes checks that published files and directories get 0666 and 0777
// less the umask, as os.Create and os.Mkdir give, and never 0600 regardless.
func TestModes(t *testing.T) {
	tests := []struct {
		umask         int
		file, dirMode os.FileMode
	}{
		{0o022, 0o644, 0o755},
		{0o077, 0o600, 0o700},
		{0o002, 0o664, 0o775},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("umask %03o", tt.umask), func(t *testing.T) {
			old := syscall.Umask(tt.umask)
			defer syscall.Umask(old)
			dir := t.TempDir()

			f, err := Begin(filepath.Join(dir, "f.bin"), Options{})
			require.NoError(t, err)
			fill(t, f, map[string]string{"": "x"})
			require.NoError(t, f.Commit())

			d, err := Begin(filepath.Join(dir, "d"), Options{Dir: true})
			require.NoError(t, err)
			fill(t, d, map[string]string{"a.json": "{}"})
			require.NoError(t, d.Commit())

			require.NoError(t, WriteFile(filepath.Join(dir, "w.json"), []byte("{}")))

			for p, want := range map[string]os.FileMode{
				"f.bin":    tt.file,
				"d":        tt.dirMode,
				"d/a.json": tt.file, // written by os.WriteFile(…, 0o666) inside Path
				"w.json":   tt.file,
			} {
				fi, err := os.Stat(filepath.Join(dir, p))
				require.NoError(t, err)
				assert.Equal(t, want, fi.Mode().Perm(), p)
			}
		})
	}
}

// TestStaleTemporaries checks what Begin removes from the directory of its
// destination: temporaries of processes that no longer run (and of an
// earlier process that had this process's PID), but not those of live
// processes nor names that are not this package's.
func TestStaleTemporaries(t *testing.T) {
	dead, live, self := deadPID(t), livePID(t), os.Getpid()
	name := func(prefix string, pid int, tok, base string) string {
		return fmt.Sprintf("%s%d-%s%08x-%s", prefix, pid, tok, 7, base)
	}
	other := "0badc0de"
	if token == other {
		other = "0badc0df"
	}
	tests := []struct {
		name string
		dir  bool // make a directory with a file inside rather than a file
		kept bool
	}{
		{name(tmpPrefix, dead, "01234567", "model.safetensors"), false, false},
		{name(tmpPrefix, dead, "01234567", "out"), true, false},
		{name(tmpPrefix, dead, "01234567", ".x.tcast-lock"), false, false},
		{name(tmpPrefix, self, other, "model.safetensors"), false, false},
		{name(tmpPrefix, self, token, "a.gguf"), false, true},
		{name(tmpPrefix, live, "01234567", "b.gguf"), true, true},
		{name(oldPrefix, live, "01234567", "c"), true, true},
		{name(oldPrefix, dead, "01234567", "kept.json"), false, false}, // its dest exists
		{".tcast-tmp-x-0123456789abcdef-model.safetensors", false, true},
		{".model.safetensors.tmp123", false, true},
		{"kept.json", false, true},
		{".d.tcast-lock", false, true}, // a lock of another destination
	}
	dir := t.TempDir()
	for _, tt := range tests {
		p := filepath.Join(dir, tt.name)
		if tt.dir {
			require.NoError(t, os.Mkdir(p, 0o777))
			p = filepath.Join(p, "inside")
		}
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o666))
	}
	// A destination moved aside by a writer that died, with nothing in its
	// place: Begin puts it back.
	restored := name(oldPrefix, dead, "01234567", "restored")
	require.NoError(t, os.Mkdir(filepath.Join(dir, restored), 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(dir, restored, "a"), []byte("old"), 0o666))

	o, err := Begin(filepath.Join(dir, "new.safetensors"), Options{})
	require.NoError(t, err)
	defer o.Abort()
	for _, tt := range tests {
		_, err := os.Lstat(filepath.Join(dir, tt.name))
		if tt.kept {
			assert.NoError(t, err, "%s must be kept", tt.name)
		} else {
			assert.ErrorIs(t, err, os.ErrNotExist, "%s must be removed", tt.name)
		}
	}
	assert.NoDirExists(t, filepath.Join(dir, restored))
	assert.Equal(t, map[string]string{"a": "old"}, tree(t, filepath.Join(dir, "restored")))
}

func TestLockFile(t *testing.T) {
	dead, live, self := deadPID(t), livePID(t), os.Getpid()
	tests := []struct {
		name    string
		content string
		age     time.Duration
		lockPID int // 0: taken over
	}{
		{"live process", fmt.Sprintf("%d 01234567\n", live), 0, live},
		{"live process, no token", fmt.Sprintf("%d\n", live), 0, live},
		{"dead process", fmt.Sprintf("%d 01234567\n", dead), 0, 0},
		{"this PID, earlier process", fmt.Sprintf("%d 0badc0de\n", self), 0, 0},
		{"this PID, no token", fmt.Sprintf("%d\n", self), 0, 0},
		{"empty, being created", "", 0, -1},
		{"empty, old", "", time.Hour, 0},
		{"garbage, old", "not a pid", time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "model.safetensors")
			lock := filepath.Join(dir, ".model.safetensors.tcast-lock")
			require.NoError(t, os.WriteFile(lock, []byte(tt.content), 0o666))
			if tt.age != 0 {
				old := time.Now().Add(-tt.age)
				require.NoError(t, os.Chtimes(lock, old, old))
			}
			o, err := Begin(dest, Options{})
			if tt.lockPID == 0 {
				require.NoError(t, err)
				b, err := os.ReadFile(lock)
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("%d %s\n", self, token), string(b), "the lock is ours")
				fill(t, o, map[string]string{"": "data"})
				require.NoError(t, o.Commit())
				assert.Equal(t, []string{"model.safetensors"}, names(t, dir))
				return
			}
			var le *LockedError
			require.ErrorAs(t, err, &le)
			assert.ErrorIs(t, err, ErrLocked)
			assert.Equal(t, dest, le.Path)
			assert.Equal(t, lock, le.Lock)
			want := max(tt.lockPID, 0)
			assert.Equal(t, want, le.PID)
			assert.ErrorContains(t, err, lock)
			if want != 0 {
				assert.ErrorContains(t, err, fmt.Sprintf("process %d", want))
			}
			b, err := os.ReadFile(lock)
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(b), "the lock is untouched")
			assert.Equal(t, []string{".model.safetensors.tcast-lock"}, names(t, dir))
		})
	}
}

// TestLockAcrossProcesses checks a lock held by a live writer in another
// process.
func TestLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "out.gguf")
	cmd := startChild(t, "file", "ATOMICFILE_DEST="+dest)
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	_, err := Begin(dest, Options{Force: true})
	var le *LockedError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, cmd.Process.Pid, le.PID)
}

// TestSignals starts a writer in a child process and checks what a signal
// leaves behind: nothing after SIGINT and SIGTERM (exit status 128+signal),
// the temporary and the lock after SIGKILL, which the next Begin removes and
// takes over. Once stop is called, SIGINT kills as it would without
// HandleSignals.
func TestSignals(t *testing.T) {
	tests := []struct {
		mode string
		sig  syscall.Signal
		code int // exit status; -1 for killed
	}{
		{"file", syscall.SIGINT, 130},
		{"file", syscall.SIGTERM, 143},
		{"dir", syscall.SIGINT, 130},
		{"dir", syscall.SIGTERM, 143},
		{"file", syscall.SIGKILL, -1},
		{"dir", syscall.SIGKILL, -1},
		{"stopped", syscall.SIGINT, -1}, // HandleSignals undone by stop: SIGINT kills
	}
	for _, tt := range tests {
		t.Run(tt.mode+" "+tt.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "out")
			cmd := startChild(t, tt.mode, "ATOMICFILE_DEST="+dest)
			tmps, err := Temporaries(dir)
			require.NoError(t, err)
			require.Len(t, tmps, 2, "the child's temporary and lock")

			require.NoError(t, cmd.Process.Signal(tt.sig))
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "exit: %v", err)
			assert.Equal(t, tt.code, ee.ExitCode())

			if tt.code != -1 {
				assert.Empty(t, names(t, dir), "nothing is left")
				assert.Equal(t, fmt.Sprintf("signal %v: removed [%s]\n", tt.sig, dest),
					cmd.Stderr.(*bytes.Buffer).String(), "the report names the removed output")
				return
			}
			left, err := Temporaries(dir)
			require.NoError(t, err)
			assert.Equal(t, tmps, left, "SIGKILL leaves the temporary and the lock")
			ws, ok := ee.Sys().(syscall.WaitStatus)
			require.True(t, ok)
			assert.Equal(t, tt.sig, ws.Signal(), "killed by the signal")
			o, err := Begin(dest, Options{Dir: tt.mode == "dir"})
			require.NoError(t, err, "the next Begin takes over")
			left, err = Temporaries(dir)
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{o.Path(), filepath.Join(dir, ".out.tcast-lock")}, left)
			require.NoError(t, o.Commit())
			assert.Equal(t, []string{"out"}, names(t, dir))
		})
	}
}

// TestStaleLocksRemoved checks that Begin removes the lock files of writers
// that no longer run, also of other destinations, and keeps live ones.
func TestStaleLocksRemoved(t *testing.T) {
	dir := t.TempDir()
	dead := deadPID(t)
	stale := filepath.Join(dir, lockName("other"))
	require.NoError(t, os.WriteFile(stale, []byte(fmt.Sprintf("%d 0123456789abcdef\n", dead)), 0o644))
	nested := filepath.Join(dir, lockName(".tcast-tmp-1-x-model.safetensors"))
	require.NoError(t, os.WriteFile(nested, []byte(fmt.Sprintf("%d 0123456789abcdef\n", dead)), 0o644))
	live := filepath.Join(dir, lockName("busy"))
	require.NoError(t, os.WriteFile(live, []byte(fmt.Sprintf("%d %s\n", os.Getpid(), token)), 0o644))
	o, err := Begin(filepath.Join(dir, "out"), Options{})
	require.NoError(t, err)
	o.Abort()
	assert.NoFileExists(t, stale)
	assert.NoFileExists(t, nested)
	assert.FileExists(t, live)
}

// TestReviewCases: ErrExists matches fs.ErrExist; a symlinked directory
// destination and a subdirectory under -force are refused; a hard link to an
// input is the input.
func TestReviewCases(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	_, err := Begin(f, Options{})
	assert.ErrorIs(t, err, fs.ErrExist)
	assert.ErrorIs(t, err, ErrExists)

	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "a.json"), []byte("{}"), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))
	_, err = Begin(link, Options{Dir: true, Force: true})
	assert.ErrorContains(t, err, "symbolic link")

	require.NoError(t, os.Mkdir(filepath.Join(real, "sub.json"), 0o755))
	_, err = Begin(real, Options{Dir: true, Force: true, Replaceable: func(string) bool { return true }})
	assert.ErrorContains(t, err, "sub.json")

	hard := filepath.Join(dir, "hard")
	require.NoError(t, os.Link(f, hard))
	assert.ErrorIs(t, CheckOutput(hard, f), ErrInput)
}

// A run that Begin refuses because the destination exists still removes
// what a killed writer left: its temporary and its lock file. (Before the
// fix the refusal came first and both survived the next run.)
func TestRefusedRunRemovesStale(t *testing.T) {
	dead := deadPID(t)
	dir := t.TempDir()
	dest := filepath.Join(dir, "out.safetensors")
	require.NoError(t, os.WriteFile(dest, []byte("old"), 0o666))
	tmp := filepath.Join(dir, fmt.Sprintf("%s%d-0123456789abcdef-out.safetensors", tmpPrefix, dead))
	require.NoError(t, os.WriteFile(tmp, []byte("half"), 0o666))
	lock := filepath.Join(dir, ".out.safetensors"+lockSuffix)
	require.NoError(t, os.WriteFile(lock, []byte(fmt.Sprintf("%d 0123456789abcdef\n", dead)), 0o666))

	_, err := Begin(dest, Options{})
	require.ErrorIs(t, err, ErrExists)
	assert.Equal(t, map[string]string{"out.safetensors": "old"}, tree(t, dir))
}

// The lock file appears whole: Begin links a file already holding the body
// to the lock's name and leaves no temporary of its own.
func TestLockAppearsWhole(t *testing.T) {
	dir := t.TempDir()
	o, err := Begin(filepath.Join(dir, "out.gguf"), Options{})
	require.NoError(t, err)
	defer o.Abort()
	b, err := os.ReadFile(filepath.Join(dir, ".out.gguf"+lockSuffix))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d %s\n", os.Getpid(), token), string(b))
	temps, err := Temporaries(dir)
	require.NoError(t, err)
	assert.Len(t, temps, 2, "the output's temporary and the lock, nothing else: %q", temps)
}
