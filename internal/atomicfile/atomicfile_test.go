package atomicfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary serve as the child process of the tests
// that need one (see child).
func TestMain(m *testing.M) {
	if mode := os.Getenv("ATOMICFILE_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child runs in a re-executed test binary. Modes:
//
//	exit   exit at once (its PID is then a process that no longer runs)
//	block  print "ready" and block
//	file   HandleSignals, Begin a file output at $ATOMICFILE_DEST, write it,
//	       print "ready" and block
//	dir    the same with a directory output holding two files
//	stopped  as file, but with HandleSignals undone by its stop
func child(mode string) int {
	switch mode {
	case "exit":
		return 0
	case "block":
		fmt.Println("ready")
		select {}
	case "file", "dir", "stopped":
		stop := HandleSignals(func(sig os.Signal, removed []string) {
			fmt.Fprintf(os.Stderr, "signal %v: removed %v\n", sig, removed)
		})
		if mode == "stopped" {
			stop()
		}
		o, err := Begin(os.Getenv("ATOMICFILE_DEST"), Options{Dir: mode == "dir"})
		if err != nil {
			fmt.Println("error:", err)
			return 2
		}
		if mode == "dir" {
			for _, name := range []string{"a.bin", "b.bin"} {
				if err := os.WriteFile(filepath.Join(o.Path(), name), []byte(name), 0o666); err != nil {
					fmt.Println("error:", err)
					return 2
				}
			}
		} else if err := os.WriteFile(o.Path(), []byte("partial"), 0o666); err != nil {
			fmt.Println("error:", err)
			return 2
		}
		fmt.Println("ready")
		select {}
	}
	fmt.Println("unknown child mode", mode)
	return 2
}

// startChild starts the test binary in the given child mode and waits for
// its "ready" line. The caller must wait for it.
func startChild(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "ATOMICFILE_CHILD="+mode), env...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = new(bytes.Buffer)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child %s: %q, %v", mode, line, err)
	}
	return cmd
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD=exit")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// livePID returns the PID of a process that runs until the test ends.
func livePID(t *testing.T) int {
	t.Helper()
	cmd := startChild(t, "block")
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// names lists the entries of dir, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// tree maps every regular file under root to its content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	return out
}

// fill writes files (name → content) into the output's Path: the content of
// "" for a file output, files in the directory for a directory output.
func fill(t *testing.T, o *Output, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := o.Path()
		if name != "" {
			p = filepath.Join(p, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o777))
		}
		require.NoError(t, os.WriteFile(p, []byte(content), 0o666))
	}
}

// put creates an existing destination: a file when files has the key "",
// a directory of files otherwise.
func put(t *testing.T, dest string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := dest
		if name != "" {
			p = filepath.Join(dest, filepath.FromSlash(name))
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o777))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o666))
	}
}

// contents returns what is at dest in the form of put's files.
func contents(t *testing.T, dest string) map[string]string {
	t.Helper()
	fi, err := os.Stat(dest)
	require.NoError(t, err)
	if fi.IsDir() {
		return tree(t, dest)
	}
	b, err := os.ReadFile(dest)
	require.NoError(t, err)
	return map[string]string{"": string(b)}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	require.NoError(t, WriteFile(p, []byte("one")))
	require.NoError(t, WriteFile(p, []byte("two")))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	err = WriteFile(filepath.Join(dir, "missing", "b.json"), []byte("x"))
	require.ErrorContains(t, err, "b.json")
	assert.Equal(t, []string{"a.json"}, names(t, dir), "no temporary or lock file left")
}

func TestCommit(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		old   map[string]string // existing destination; nil for none
		files map[string]string // the new output
	}{
		{"new file", Options{}, nil, map[string]string{"": "new"}},
		{"new empty file", Options{}, nil, map[string]string{}},
		{"new dir", Options{Dir: true}, nil, map[string]string{"a": "1", "sub/b": "2"}},
		{"new empty dir", Options{Dir: true}, nil, map[string]string{}},
		{"force, no old file", Options{Force: true}, nil, map[string]string{"": "new"}},
		{"force replaces a file", Options{Force: true}, map[string]string{"": "old and longer"}, map[string]string{"": "new"}},
		{"force replaces a dir", Options{Dir: true, Force: true},
			map[string]string{"a": "old", "stale.json": "old only", "sub/c": "old"},
			map[string]string{"a": "new", "sub/b": "new"}},
	}
	for _, tt := range tests {
		for _, noExchange := range []bool{false, true} {
			if noExchange && !(tt.opts.Dir && tt.old != nil) {
				continue
			}
			name := tt.name
			if noExchange {
				name += ", without exchange"
			}
			t.Run(name, func(t *testing.T) {
				if noExchange {
					exchangeDirs = func(a, b string) error { return errExchangeUnsupported }
					defer func() { exchangeDirs = exchange }()
				}
				dir := t.TempDir()
				dest := filepath.Join(dir, "out")
				if tt.old != nil {
					put(t, dest, tt.old)
				}
				o, err := Begin(dest, tt.opts)
				require.NoError(t, err)
				assert.Equal(t, dir, filepath.Dir(o.Path()), "the temporary is a sibling of dest")
				assert.True(t, strings.HasPrefix(filepath.Base(o.Path()), fmt.Sprintf(".tcast-tmp-%d-", os.Getpid())), o.Path())
				tmps, err := Temporaries(dir)
				require.NoError(t, err)
				assert.ElementsMatch(t, []string{o.Path(), filepath.Join(dir, ".out.tcast-lock")}, tmps)
				fi, err := os.Stat(o.Path())
				require.NoError(t, err)
				assert.Equal(t, tt.opts.Dir, fi.IsDir())
				if tt.opts.Dir {
					assert.Empty(t, names(t, o.Path()))
				}
				fill(t, o, tt.files)
				if tt.old != nil {
					assert.Equal(t, tt.old, contents(t, dest), "dest untouched before Commit")
				} else {
					assert.NoFileExists(t, dest)
				}

				require.NoError(t, o.Commit())
				want := tt.files
				if !tt.opts.Dir && len(want) == 0 {
					want = map[string]string{"": ""}
				}
				assert.Equal(t, want, contents(t, dest))
				assert.Equal(t, []string{"out"}, names(t, dir), "nothing but the output is left")
				require.NoError(t, o.Commit(), "Commit again")
				o.Abort() // no-op after Commit
				assert.Equal(t, want, contents(t, dest))
			})
		}
	}
}

func TestRefused(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		old    map[string]string
		is     error
		errHas []string
	}{
		{"file exists", Options{}, map[string]string{"": "old"}, ErrExists, []string{"out already exists"}},
		{"dir exists", Options{Dir: true}, map[string]string{"a": "old"}, ErrExists, []string{"out already exists"}},
		{"file output, dir exists", Options{}, map[string]string{"a": "old"}, nil, []string{"out is a file", "is a directory"}},
		{"file output, dir exists, force", Options{Force: true}, map[string]string{"a": "old"}, nil, []string{"is a directory"}},
		{"dir output, file exists", Options{Dir: true}, map[string]string{"": "old"}, nil, []string{"is not a directory"}},
		{"dir output, file exists, force", Options{Dir: true, Force: true}, map[string]string{"": "old"}, nil, []string{"is not a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "out")
			if len(tt.old) == 0 {
				require.NoError(t, os.Mkdir(dest, 0o777))
			}
			put(t, dest, tt.old)
			o, err := Begin(dest, tt.opts)
			require.Error(t, err)
			assert.Nil(t, o)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			} else {
				assert.NotErrorIs(t, err, ErrExists)
			}
			for _, s := range tt.errHas {
				assert.ErrorContains(t, err, s)
			}
			assert.ErrorContains(t, err, dest)
			assert.Equal(t, []string{"out"}, names(t, dir))
			assert.Equal(t, tt.old, contents(t, dest))
		})
	}
}

// TestCommitFails checks that a failing Commit leaves the old destination
// (or none) as it was and removes the temporary and the lock.
func TestCommitFails(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		old   map[string]string // existing destination at Begin
		later map[string]string // destination created between Begin and Commit
		mess  func(o *Output)   // what else happens before Commit
		is    error
	}{
		{"file appeared meanwhile", Options{}, nil, map[string]string{"": "theirs"}, nil, ErrExists},
		{"dir appeared meanwhile", Options{Dir: true}, nil, map[string]string{"x": "theirs"}, nil, ErrExists},
		{"dir where a file was expected appeared", Options{Force: true}, nil, map[string]string{"x": "theirs"}, nil, nil},
		{"temporary file gone", Options{Force: true}, map[string]string{"": "old"}, nil,
			func(o *Output) { os.Remove(o.Path()) }, fs.ErrNotExist},
		{"temporary dir gone", Options{Dir: true, Force: true}, map[string]string{"a": "old"}, nil,
			func(o *Output) { os.RemoveAll(o.Path()) }, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "out")
			if tt.old != nil {
				put(t, dest, tt.old)
			}
			o, err := Begin(dest, tt.opts)
			require.NoError(t, err)
			if tt.opts.Dir {
				fill(t, o, map[string]string{"new": "new"})
			} else {
				fill(t, o, map[string]string{"": "new"})
			}
			if tt.later != nil {
				put(t, dest, tt.later)
			}
			if tt.mess != nil {
				tt.mess(o)
			}
			err = o.Commit()
			require.Error(t, err)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.ErrorContains(t, err, dest)
			want := tt.old
			if tt.later != nil {
				want = tt.later
			}
			assert.Equal(t, want, contents(t, dest))
			assert.Equal(t, []string{"out"}, names(t, dir))
			assert.Error(t, o.Commit(), "Commit after a failed Commit")
		})
	}
}

func TestAbort(t *testing.T) {
	for _, opts := range []Options{{}, {Dir: true}, {Force: true}, {Dir: true, Force: true}} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "out")
			var old map[string]string
			if opts.Force {
				old = map[string]string{"": "old"}
				if opts.Dir {
					old = map[string]string{"a": "old"}
				}
				put(t, dest, old)
			}
			o, err := Begin(dest, opts)
			require.NoError(t, err)
			if opts.Dir {
				fill(t, o, map[string]string{"a": "new", "sub/b": "new"})
			} else {
				fill(t, o, map[string]string{"": "new"})
			}
			o.Abort()
			o.Abort()
			if old == nil {
				assert.Empty(t, names(t, dir), "nothing is left")
			} else {
				assert.Equal(t, []string{"out"}, names(t, dir))
				assert.Equal(t, old, contents(t, dest))
			}
			err = o.Commit()
			assert.ErrorContains(t, err, "Commit after Abort")
			// The lock is released: the destination can be written again.
			o2, err := Begin(dest, Options{Dir: opts.Dir, Force: true})
			require.NoError(t, err)
			o2.Abort()
		})
	}
}

func TestBeginBadPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o666))
	tests := []struct {
		name, dest, errHas string
	}{
		{"empty", "", "empty"},
		{"missing dir", filepath.Join(dir, "missing", "out"), "missing"},
		{"parent is a file", filepath.Join(file, "out"), "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Begin(tt.dest, Options{})
			assert.ErrorContains(t, err, tt.errHas)
			assert.Equal(t, []string{"f"}, names(t, dir))
		})
	}
}

func TestLockedInProcess(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "out")
	o, err := Begin(dest, Options{})
	require.NoError(t, err)
	// The same destination, spelled differently, is locked too.
	for _, d := range []string{dest, filepath.Join(dir, ".", "x", "..", "out")} {
		_, err = Begin(d, Options{Force: true})
		var le *LockedError
		require.ErrorAs(t, err, &le)
		assert.ErrorIs(t, err, ErrLocked)
		assert.Equal(t, os.Getpid(), le.PID)
		assert.Equal(t, filepath.Join(dir, ".out.tcast-lock"), le.Lock)
	}
	// Another destination in the same directory is not.
	o2, err := Begin(filepath.Join(dir, "other"), Options{})
	require.NoError(t, err)
	o2.Abort()
	require.NoError(t, o.Commit())
	assert.Equal(t, []string{"out"}, names(t, dir))
}

func TestIsTemporary(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{tempName(tmpPrefix, "model.safetensors"), true},
		{tempName(oldPrefix, "out"), true},
		{".tcast-tmp-12-0123456789abcdef-x", true},
		{".model.safetensors.tcast-lock", true},
		{"model.safetensors", false},
		{".tcast-tmp-x-0123456789abcdef-x", false},
		{".tcast-tmp-12-0123-x", false},
		{".tcast-tmp-12-0123456789abcdef-", false},
		{".tcast-lock", false},
		{"a.tcast-lock", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, IsTemporary(tt.name), tt.name)
	}
}

func TestLockedErrorMessage(t *testing.T) {
	err := error(&LockedError{Path: "out/model.safetensors", Lock: "out/.model.safetensors.tcast-lock", PID: 4242})
	assert.True(t, errors.Is(err, ErrLocked))
	for _, s := range []string{"out/model.safetensors", "4242", "out/.model.safetensors.tcast-lock", "wait", "remove"} {
		assert.Contains(t, err.Error(), s)
	}
}

// TestEmptyAndReplaceable checks that an existing empty directory is taken
// without Force (nothing is lost), and that Force replaces a directory only
// when Replaceable accepts every entry.
func TestEmptyAndReplaceable(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "out")
	require.NoError(t, os.Mkdir(dest, 0o755))
	o, err := Begin(dest, Options{Dir: true})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(o.Path(), "model.safetensors"), []byte("new"), 0o666))
	require.NoError(t, o.Commit())

	require.NoError(t, os.WriteFile(filepath.Join(dest, "notes.txt"), []byte("mine"), 0o644))
	onlyCheckpoints := func(name string) bool { return filepath.Ext(name) == ".safetensors" }
	_, err = Begin(dest, Options{Dir: true, Force: true, Replaceable: onlyCheckpoints})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "notes.txt")
	assert.FileExists(t, filepath.Join(dest, "notes.txt"))
	require.NoError(t, os.Remove(filepath.Join(dest, "notes.txt")))
	o, err = Begin(dest, Options{Dir: true, Force: true, Replaceable: onlyCheckpoints})
	require.NoError(t, err)
	o.Abort()
}

// TestDropCache checks that dropping the cached pages of an output about to
// be replaced leaves every file of it as it was, and passes over what is
// missing.
func TestDropCache(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	put(t, file, map[string]string{"": "file"})
	tree := filepath.Join(dir, "d")
	want := map[string]string{"a": "one", "sub/b": strings.Repeat("two", 5000)}
	put(t, tree, want)
	require.NoError(t, os.Symlink(file, filepath.Join(tree, "link")))
	dropCache(file)
	dropCache(tree)
	dropCache(filepath.Join(dir, "missing"))
	assert.Equal(t, map[string]string{"": "file"}, contents(t, file))
	b, err := os.ReadFile(filepath.Join(tree, "sub", "b"))
	require.NoError(t, err)
	assert.Equal(t, want["sub/b"], string(b))
	target, err := os.Readlink(filepath.Join(tree, "link"))
	require.NoError(t, err)
	assert.Equal(t, file, target)
}
