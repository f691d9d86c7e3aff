package castdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// publishDir writes files into a new directory beside dst and renames it to
// dst, so that dst appears whole or not at all. An existing dst is an error
// wrapping fs.ErrExist unless force is set; then the old directory is renamed
// aside, the new one renamed into place and the old one removed (put back if
// the second rename fails). Files get mode 0644 and the directory 0755, less
// the umask. Missing parents of dst are created.
func publishDir(dst string, files []file, force bool) (err error) {
	dst = filepath.Clean(dst)
	old, statErr := os.Lstat(dst)
	switch {
	case statErr == nil && !force:
		return fmt.Errorf("writing %s: %w", dst, fs.ErrExist)
	case statErr == nil && !old.IsDir():
		return fmt.Errorf("writing %s: it exists and is no directory", dst)
	case statErr != nil && !errors.Is(statErr, fs.ErrNotExist):
		return statErr
	}
	parent := filepath.Dir(dst)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := mkdirTemp(parent, "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	for _, f := range files {
		if err := writeSynced(filepath.Join(tmp, f.name), f.data); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dst, f.name), err)
		}
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if statErr != nil {
		if err := os.Rename(tmp, dst); err != nil {
			return fmt.Errorf("writing %s: %w", dst, err)
		}
		return syncDir(parent)
	}
	aside := tmp + ".old"
	if err := os.Rename(dst, aside); err != nil {
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		if rerr := os.Rename(aside, dst); rerr != nil {
			return fmt.Errorf("replacing %s: %w (the old directory is left at %s)", dst, err, aside)
		}
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	os.RemoveAll(aside)
	return syncDir(parent)
}

// mkdirTemp creates a new directory named prefix plus a random suffix in
// parent with mode 0755 less the umask (os.MkdirTemp would make it 0700).
func mkdirTemp(parent, prefix string) (string, error) {
	for range 100 {
		var b [6]byte
		rand.Read(b[:])
		p := filepath.Join(parent, prefix+hex.EncodeToString(b[:]))
		err := os.Mkdir(p, 0o755)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("creating a temporary directory in %s: too many collisions", parent)
}

// writeSynced creates path (mode 0644 less the umask) holding b, synced.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir flushes a directory's entries; filesystems that cannot are ignored.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	d.Sync()
	return d.Close()
}

// within reports whether path is dir or lies inside it, after resolving both
// to absolute paths and following symbolic links where they exist.
func within(path, dir string) bool {
	resolve := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return p
	}
	rel, err := filepath.Rel(resolve(dir), resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
