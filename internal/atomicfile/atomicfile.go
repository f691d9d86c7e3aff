// Package atomicfile writes small files so that their final name only ever
// holds complete contents: a temporary file in the same directory, synced, then
// renamed, then the directory synced.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes b to path atomically. On error nothing is left under path
// (an existing file there is untouched) and the temporary file is removed.
func WriteFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
