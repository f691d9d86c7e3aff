package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Names this package gives to what it leaves beside a destination <base>:
//
//	.tcast-tmp-<pid>-<token><rand>-<base>   the output being written (file or directory)
//	.tcast-old-<pid>-<token><rand>-<base>   an old output moved aside while it is replaced
//	.<base>.tcast-lock                      the lock file, holding "<pid> <token>"
//
// <pid> is the writer's process ID, <token> eight hex digits drawn once per
// process (so a later process that happens to get the same PID, as in a
// container, can tell the names of an earlier one from its own), <rand>
// eight hex digits drawn per name.
const (
	tmpPrefix  = ".tcast-tmp-"
	oldPrefix  = ".tcast-old-"
	lockSuffix = ".tcast-lock"
)

// staleAge is the age after which a temporary or lock whose writer cannot
// be checked (on systems without a process probe) counts as abandoned.
const staleAge = 24 * time.Hour

// youngLock is how long a lock file naming no process is taken for one
// being created rather than a damaged one.
const youngLock = time.Minute

// token tells this process's names from those of an earlier process that
// had the same PID.
var token = fmt.Sprintf("%08x", rand.Uint32())

// tempName returns a new name for a temporary (prefix tmpPrefix) or a
// moved-aside output (oldPrefix) of base.
func tempName(prefix, base string) string {
	return fmt.Sprintf("%s%d-%s%08x-%s", prefix, os.Getpid(), token, rand.Uint32(), base)
}

// lockName returns the name of the lock file of base.
func lockName(base string) string { return "." + base + lockSuffix }

// parseTemp splits a temporary or moved-aside name into its parts; ok is
// false for any other name.
func parseTemp(name string) (prefix string, pid int, tok, base string, ok bool) {
	switch {
	case strings.HasPrefix(name, tmpPrefix):
		prefix = tmpPrefix
	case strings.HasPrefix(name, oldPrefix):
		prefix = oldPrefix
	default:
		return "", 0, "", "", false
	}
	rest := name[len(prefix):]
	p, rest, ok1 := strings.Cut(rest, "-")
	r, base, ok2 := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(p)
	if !ok1 || !ok2 || err != nil || pid < 0 || len(r) != 16 || base == "" {
		return "", 0, "", "", false
	}
	return prefix, pid, r[:8], base, true
}

// IsTemporary reports whether name (the last element of a path) is one this
// package gives to a temporary, an output moved aside, or a lock file, so
// that code listing a directory can skip them.
func IsTemporary(name string) bool {
	if _, _, _, _, ok := parseTemp(name); ok {
		return true
	}
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, lockSuffix) && len(name) > 1+len(lockSuffix)
}

// Temporaries returns the paths of the entries of dir that writers of this
// package made and that are not outputs (see IsTemporary), sorted, whether
// their writers still run or not: nothing is left behind when it is empty.
func Temporaries(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if IsTemporary(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// abandoned reports whether the writer named by pid and tok, whose file was
// last modified at mod, no longer runs.
func abandoned(pid int, tok string, mod time.Time) bool {
	if pid == os.Getpid() {
		return tok != token
	}
	alive, known := processAlive(pid)
	if known {
		return !alive
	}
	return time.Since(mod) > staleAge
}

// removeStale removes the temporaries in dir whose writers no longer run,
// and puts back an output such a writer had moved aside if nothing has taken
// its place (removing it otherwise). It is best effort: what it cannot
// remove stays.
func removeStale(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		prefix, pid, tok, base, ok := parseTemp(e.Name())
		if !ok {
			if strings.HasSuffix(e.Name(), lockSuffix) && strings.HasPrefix(e.Name(), ".") {
				removeStaleLock(filepath.Join(dir, e.Name()))
			}
			continue
		}
		info, err := e.Info()
		if err != nil || !abandoned(pid, tok, info.ModTime()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if prefix == oldPrefix {
			dest := filepath.Join(dir, base)
			if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) {
				if os.Rename(p, dest) == nil {
					continue
				}
			}
		}
		os.RemoveAll(p)
	}
}

// removeStaleLock removes the lock file p if its writer no longer runs: it
// is renamed to a name of ours first, so that of several processes doing so
// only one removes it, and put back if it turns out to be a live writer's.
func removeStaleLock(p string) {
	if _, stale, err := readLock(p); err != nil || !stale {
		return
	}
	aside := filepath.Join(filepath.Dir(p), tempName(tmpPrefix, filepath.Base(p)))
	if os.Rename(p, aside) != nil {
		return
	}
	if _, stale, err := readLock(aside); err == nil && !stale {
		os.Rename(aside, p)
		return
	}
	os.Remove(aside)
}

// acquireLock creates the lock file of o, taking over one whose writer no
// longer runs. o.mu is held.
func (o *Output) acquireLock() error {
	body := fmt.Sprintf("%d %s\n", os.Getpid(), token)
	for range 5 {
		err := o.createLock(body)
		if err == nil {
			o.lockBody = body
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("output %s: creating the lock file: %w", o.dest, err)
		}
		pid, stale, err := readLock(o.lock)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return fmt.Errorf("output %s: reading the lock file: %w", o.dest, err)
		}
		if !stale {
			return &LockedError{Path: o.dest, Lock: o.lock, PID: pid}
		}
		if err := o.takeOver(pid); err != nil {
			return err
		}
	}
	return fmt.Errorf("output %s: the lock file %s keeps changing; is another tcast writing there?", o.dest, o.lock)
}

// createLock creates the lock file of o holding body, or fails with an error
// matching fs.ErrExist if there is one. The body is written under a
// temporary name and linked to the lock's name, so that a writer killed at
// any point leaves either no lock file or a whole one naming it (an empty
// lock file would hold the output for youngLock); where the file system
// has no hard links the lock file is created in place.
func (o *Output) createLock(body string) error {
	tmp := filepath.Join(o.dir, tempName(tmpPrefix, filepath.Base(o.lock)))
	if err := os.WriteFile(tmp, []byte(body), 0o666); err != nil {
		os.Remove(tmp)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: "create", Path: o.lock, Err: pe.Err} // name the lock, not our temporary
		}
		return err
	}
	err := os.Link(tmp, o.lock)
	os.Remove(tmp)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	f, err := os.OpenFile(o.lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(o.lock)
	}
	return err
}

// takeOver removes the lock file of a writer that no longer runs (pid). The
// file is first renamed to a name of ours, so that of several processes
// taking it over at once only one removes it; should the file renamed be a
// live writer's after all (it replaced the stale one meanwhile), it is put
// back.
func (o *Output) takeOver(pid int) error {
	aside := filepath.Join(o.dir, tempName(tmpPrefix, filepath.Base(o.lock)))
	if err := os.Rename(o.lock, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // someone else took it
		}
		return fmt.Errorf("output %s: taking over the lock file of process %d: %w", o.dest, pid, err)
	}
	pid2, stale, err := readLock(aside)
	if err == nil && !stale {
		os.Rename(aside, o.lock)
		return &LockedError{Path: o.dest, Lock: o.lock, PID: pid2}
	}
	os.Remove(aside)
	return nil
}

// readLock reads the lock file at p: the process it names (0 if none) and
// whether that writer no longer runs.
func readLock(p string) (pid int, stale bool, err error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, false, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0, false, err
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, time.Since(fi.ModTime()) > youngLock, nil
	}
	pid, err = strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return 0, time.Since(fi.ModTime()) > youngLock, nil
	}
	tok := ""
	if len(fields) > 1 {
		tok = fields[1]
	}
	return pid, abandoned(pid, tok, fi.ModTime()), nil
}

// releaseLock removes the lock file if it is still the one o created.
func (o *Output) releaseLock() {
	if o.lockBody == "" {
		return
	}
	if b, err := os.ReadFile(o.lock); err == nil && string(b) == o.lockBody {
		os.Remove(o.lock)
	}
	o.lockBody = ""
}
