// Package atomicfile publishes outputs, one file or one directory of files,
// so that their final name only ever holds complete contents, and so that an
// existing output is either left as it was or replaced as a whole.
//
// An output is built under a temporary name beside its destination (see
// Begin), synced to disk, and published by Commit with one rename; the
// directory holding it is then synced. A replaced directory is swapped out
// in one step where the system can (Linux), so old and new files never mix
// under the destination. While an output is being written, a lock file
// beside the destination makes a second writer of the same destination,
// in this process or another, fail with a *LockedError.
//
// Temporary names carry a recognisable prefix and the writer's process ID
// (see Temporaries). A writer that is killed outright leaves its temporary
// behind; the next Begin in the same directory removes the temporaries and
// takes over the locks of writers that no longer run. HandleSignals removes
// this process's temporaries on SIGINT and SIGTERM before exiting.
//
// Files and directories are created with modes 0666 and 0777 less the umask,
// as os.Create and os.Mkdir do (0644 and 0755 under the usual umask 022).
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Options of Begin; the zero value writes one file and refuses an existing
// destination.
type Options struct {
	// Dir makes the output a directory: Path is then a new empty directory
	// to fill with files (and subdirectories).
	Dir bool
	// Force replaces an existing destination of the same kind, atomically:
	// see Commit. An existing empty directory is replaced without it. Begin
	// then lets the kernel drop the existing files' pages from its cache, in
	// the background (their contents stay as they are, and are read from
	// disk again if the output is abandoned), so that removing them at
	// Commit is quick.
	Force bool
	// Replaceable, when set, limits what Force replaces: an existing
	// directory is replaced only if Replaceable accepts the name of every
	// entry in it (so that a mistaken output never removes other work).
	Replaceable func(name string) bool
}

// ErrExists is wrapped by the error of Begin or Commit when the destination
// exists and Options.Force is false.
var ErrExists error = existsError{}

// Exists returns the error for an output that exists while replacing it
// was not asked for: "PATH already exists", wrapping ErrExists. Begin,
// Commit and every command that checks its outputs beforehand give this
// one message (a command adds how to replace it).
func Exists(path string) error {
	return fmt.Errorf("%s %w", path, ErrExists)
}

// existsError is ErrExists; errors.Is also matches it with fs.ErrExist.
type existsError struct{}

func (existsError) Error() string        { return "already exists" }
func (existsError) Is(target error) bool { return target == fs.ErrExist }

// NotWritableError is the error of Begin when the directory of the output
// cannot be written in (no write permission, a read-only file system). Its
// message names the directory and says to choose another; Err is the error
// of the failing operation, an *fs.PathError naming the file it created.
type NotWritableError struct {
	// Output is the destination as given to Begin.
	Output string
	// Dir is the directory of the destination, as given to Begin.
	Dir string
	// Err is the failing operation's error.
	Err error
}

// Error returns a message such as "output ro/out: cannot write in ro/:
// permission denied; choose an output directory you can write to".
func (e *NotWritableError) Error() string {
	reason := e.Err
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		reason = pe.Err
	}
	return fmt.Sprintf("output %s: cannot write in %s: %v; %s", e.Output, e.Dir, reason, e.NextStep())
}

// Unwrap returns the failing operation's error.
func (e *NotWritableError) Unwrap() error { return e.Err }

// NextStep returns what to do: choose an output directory one can write to.
func (e *NotWritableError) NextStep() string {
	return "choose an output directory you can write to"
}

// notWritable returns a *NotWritableError for err, an error of creating a
// file in the directory of clean, when it is a denied permission or a
// read-only file system, and err itself otherwise.
func notWritable(clean string, err error) error {
	if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		return err
	}
	dir := filepath.Dir(clean)
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return &NotWritableError{Output: clean, Dir: dir, Err: err}
}

// ErrLocked is wrapped by *LockedError: another writer that is still running
// is writing the same destination.
var ErrLocked = errors.New("is being written by another process")

// LockedError is the error of Begin when a live writer, in this process or
// another, holds the lock of the destination. errors.Is(err, ErrLocked)
// holds for it.
type LockedError struct {
	// Path is the destination as given to Begin.
	Path string
	// Lock is the lock file.
	Lock string
	// PID is the process ID the lock file names, 0 if it names none (a
	// lock file being created this instant, or a damaged one).
	PID int
}

// Error says who holds the lock and what to do about it.
func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("%s %v: its lock file %s names no process; "+
			"if no other tcast writes there, remove %s and try again", e.Path, ErrLocked, e.Lock, e.Lock)
	}
	return fmt.Sprintf("%s %v (process %d holds the lock file %s): "+
		"wait for it to finish, or remove %s if no process %d runs", e.Path, ErrLocked, e.PID, e.Lock, e.Lock, e.PID)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Output is an output in progress, from Begin to Commit or Abort. Its
// methods may be called from several goroutines.
type Output struct {
	dest string // as given to Begin, cleaned; for messages
	abs  string // absolute destination
	dir  string // absolute directory of abs
	base string // last element of abs
	tmp  string // absolute temporary path
	lock string // absolute lock file path
	opts Options

	mu       sync.Mutex
	state    int    // stateActive, stateCommitted or stateAborted
	lockBody string // content of the lock file we created; "" if none
	made     bool   // the temporary exists

	uncache sync.WaitGroup // dropping the cached pages of the destination
}

const (
	stateActive = iota
	stateCommitted
	stateAborted
)

// Begin starts an output that Commit will publish at dest, and returns it;
// its content is to be written under Path.
//
// Begin first removes, in the directory of dest, the temporaries left by
// writers that no longer run (also of other destinations), and puts back a
// destination that such a writer had moved aside and not replaced. It then
// creates the lock file of dest, taking over one whose writer no longer runs;
// a lock held by a live writer gives a *LockedError. dest must not exist
// unless opts.Force is set (an error wrapping ErrExists says to pass -force
// or choose another output); an existing dest of the other kind (a file
// where Options.Dir asks for a directory, or the reverse) is an error even
// with Force. The directory of dest must exist.
func Begin(dest string, opts Options) (*Output, error) {
	if dest == "" {
		return nil, errors.New("output path is empty")
	}
	clean := filepath.Clean(dest)
	abs, err := filepath.Abs(clean)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", clean, err)
	}
	dir, base := filepath.Split(abs)
	if base == "" || base == "." || base == ".." {
		return nil, fmt.Errorf("output %s: not a name a file can be written under", clean)
	}
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("output %s: directory %s: %w", clean, filepath.Dir(clean), err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("output %s: %s is not a directory", clean, filepath.Dir(clean))
	}
	o := &Output{
		dest: clean,
		abs:  abs,
		dir:  dir,
		base: base,
		tmp:  filepath.Join(dir, tempName(tmpPrefix, base)),
		lock: filepath.Join(dir, lockName(base)),
		opts: opts,
	}
	// Clean up first, so that a run refused below still removes what a
	// killed writer left and puts back an output it had moved aside.
	removeStale(dir)
	if err := o.checkDest(); err != nil {
		return nil, err
	}

	o.mu.Lock()
	defer o.mu.Unlock()
	if err := register(o); err != nil {
		return nil, fmt.Errorf("output %s: %w", clean, err)
	}
	err = o.acquireLock()
	if err == nil {
		err = o.checkDest() // another writer may have published meanwhile
	}
	if err == nil {
		err = o.create()
	}
	if err != nil {
		o.abortLocked()
		return nil, notWritable(clean, err)
	}
	if opts.Force {
		o.uncache.Go(func() { dropCache(abs) })
	}
	return o, nil
}

// create makes the empty temporary file or directory.
func (o *Output) create() error {
	if o.opts.Dir {
		if err := os.Mkdir(o.tmp, 0o777); err != nil {
			return fmt.Errorf("output %s: %w", o.dest, err)
		}
		o.made = true
		return nil
	}
	f, err := os.OpenFile(o.tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	o.made = true
	if err := f.Close(); err != nil {
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	return nil
}

// Path returns the temporary file or directory (with Options.Dir) to write
// the output into: a sibling of the destination, which Begin created empty.
// A file there is best opened with os.OpenFile(o.Path(), os.O_RDWR, 0) or
// os.Create, which keep the mode Begin gave it.
func (o *Output) Path() string { return o.tmp }

// Dest returns the destination as given to Begin, cleaned.
func (o *Output) Dest() string { return o.dest }

// Commit publishes the output: it syncs the file (with Options.Dir, every
// file and directory under Path) to disk, renames Path to the destination,
// syncs the directory holding it, and releases the lock. Every file written
// under Path must be closed before.
//
// An existing destination is replaced only with Options.Force: a file by one
// rename over it; a directory, on Linux, by exchanging the two directories
// in one rename (RENAME_EXCHANGE) and then removing the old one; where that
// is unsupported, by renaming the old directory aside, the new one in, and
// removing the old one (a crash between the two renames leaves the old
// directory aside, which the next Begin puts back).
//
// On error the temporary is removed, the lock released, and the destination
// is as it was. Commit after a successful Commit returns nil; after Abort or
// a failed Commit it is an error.
func (o *Output) Commit() error {
	o.uncache.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.state {
	case stateCommitted:
		return nil
	case stateAborted:
		return fmt.Errorf("output %s: Commit after Abort or a failed Commit", o.dest)
	}
	err := o.syncTree()
	if err == nil {
		err = o.publish()
	}
	if err != nil {
		o.abortLocked()
		return err
	}
	o.made = false
	syncDir(o.dir)
	o.state = stateCommitted
	o.releaseLock()
	unregister(o)
	return nil
}

// Abort abandons the output: the temporary is removed and the lock
// released; the destination is untouched. Abort may be called more than
// once, and does nothing after a successful Commit, so it can be deferred.
func (o *Output) Abort() {
	o.uncache.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state == stateActive {
		o.abortLocked()
	}
}

// abortLocked is Abort with o.mu held.
func (o *Output) abortLocked() {
	o.state = stateAborted
	if o.made {
		os.RemoveAll(o.tmp)
		o.made = false
	}
	o.releaseLock()
	unregister(o)
}

// checkDest returns an error if the destination exists and may not be
// replaced, or is of the other kind.
func (o *Output) checkDest() error {
	fi, err := os.Lstat(o.abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	return o.checkExisting(fi)
}

// checkExisting returns an error unless the existing destination described
// by fi (from Lstat) may be replaced.
func (o *Output) checkExisting(fi fs.FileInfo) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := os.Stat(o.abs); err == nil {
			if o.opts.Dir && target.IsDir() {
				return fmt.Errorf("output %s is a symbolic link to a directory; give the directory itself (or another output)", o.dest)
			}
			fi = target
		}
	}
	switch {
	case o.opts.Dir && !fi.IsDir():
		return fmt.Errorf("output %s is a directory of files, but %s exists and is not a directory: remove it or choose another output", o.dest, o.dest)
	case !o.opts.Dir && fi.IsDir():
		return fmt.Errorf("output %s is a file, but %s exists and is a directory: remove it or choose another output", o.dest, o.dest)
	}
	if !o.opts.Dir {
		if !o.opts.Force {
			return Exists(o.dest)
		}
		return nil
	}
	entries, err := os.ReadDir(o.abs)
	if err != nil {
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	if len(entries) == 0 {
		return nil // an empty directory: nothing to lose
	}
	if !o.opts.Force {
		return Exists(o.dest)
	}
	if o.opts.Replaceable != nil {
		for _, e := range entries {
			if !e.Type().IsRegular() || !o.opts.Replaceable(e.Name()) {
				return fmt.Errorf("replacing %s would remove %s, a file this output does not consist of; "+
					"move it away or choose another output", o.dest, filepath.Join(o.dest, e.Name()))
			}
		}
	}
	return nil
}

// syncTree syncs the temporary file, or every file and directory under the
// temporary directory.
func (o *Output) syncTree() error {
	if !o.opts.Dir {
		if err := syncFile(o.tmp); err != nil {
			return fmt.Errorf("output %s: %w", o.dest, err)
		}
		return nil
	}
	err := filepath.WalkDir(o.tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			syncDir(p)
		case d.Type().IsRegular():
			return syncFile(p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	return nil
}

// publish renames the temporary to the destination, replacing an existing
// one if allowed.
func (o *Output) publish() error {
	fi, err := os.Lstat(o.abs)
	if errors.Is(err, fs.ErrNotExist) {
		err = renameNoReplace(o.tmp, o.abs)
		if !errors.Is(err, fs.ErrExist) {
			if err != nil {
				return fmt.Errorf("output %s: %w", o.dest, err)
			}
			return nil
		}
		// The destination appeared since the Lstat: treat it as existing.
		fi, err = os.Lstat(o.abs)
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	if err := o.checkExisting(fi); err != nil {
		return err
	}
	if !o.opts.Dir || fi.Mode()&fs.ModeSymlink != 0 {
		// A file, or a symbolic link (to a directory): one rename replaces it.
		if err := os.Rename(o.tmp, o.abs); err != nil {
			return fmt.Errorf("output %s: %w", o.dest, err)
		}
		return nil
	}
	return o.replaceDir()
}

// replaceDir puts the temporary directory in place of the existing
// destination directory.
func (o *Output) replaceDir() error {
	err := exchangeDirs(o.tmp, o.abs)
	if err == nil {
		// The old directory is now under the temporary name.
		os.RemoveAll(o.tmp)
		return nil
	}
	if !errors.Is(err, errExchangeUnsupported) {
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	aside := filepath.Join(o.dir, tempName(oldPrefix, o.base))
	if err := os.Rename(o.abs, aside); err != nil {
		return fmt.Errorf("output %s: moving the old output aside: %w", o.dest, err)
	}
	if err := os.Rename(o.tmp, o.abs); err != nil {
		if rerr := os.Rename(aside, o.abs); rerr != nil {
			return fmt.Errorf("output %s: %w; the old output is left at %s: %w", o.dest, err, aside, rerr)
		}
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	os.RemoveAll(aside)
	return nil
}

// exchangeDirs is exchange; tests replace it to take the path of systems
// without it.
var exchangeDirs = exchange

// syncFile syncs the file at p to disk.
func syncFile(p string) error {
	// Some systems (Windows) sync only a file opened for writing.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrPermission) {
		f, err = os.Open(p)
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes renames in dir durable where the system can sync a
// directory; failures are ignored, as some systems cannot.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// WriteFile writes b to path atomically, replacing an existing file: on
// error nothing is left under path (an existing file there is untouched)
// and the temporary file is removed.
func WriteFile(path string, b []byte) error {
	o, err := Begin(path, Options{Force: true})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(o.Path(), os.O_WRONLY|os.O_TRUNC, 0)
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		o.Abort()
		return fmt.Errorf("output %s: %w", o.dest, err)
	}
	return o.Commit()
}
