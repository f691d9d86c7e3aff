package castdir

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// publishDir writes files into a new directory beside dst and publishes it
// at dst with one rename (atomicfile), so that dst appears whole or not at
// all. An existing dst is an error wrapping atomicfile.ErrExists unless force
// is set; then it is replaced as a whole. Missing parents of dst are created.
func publishDir(dst string, files []file, force bool) error {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dst)), 0o777); err != nil {
		return err
	}
	o, err := atomicfile.Begin(dst, atomicfile.Options{Dir: true, Force: force, Replaceable: isCastFile})
	if err != nil {
		return err
	}
	defer o.Abort()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(o.Path(), f.name), f.data, 0o666); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dst, f.name), err)
		}
	}
	return o.Commit()
}

// isCastFile reports whether name is a file a cast directory may hold: what
// -force may replace.
func isCastFile(name string) bool {
	return filepath.Ext(name) == ".npy" || name == InfoFile
}
