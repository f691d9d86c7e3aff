package atomicfile

import (
	"errors"
	"io/fs"
	"os"
)

// errExchangeUnsupported is the error of exchange where the system cannot
// swap two directory entries in one step.
var errExchangeUnsupported = errors.New("exchanging two names in one rename is not supported here")

// renameNoReplaceFallback is renameNoReplace in two steps: a check that
// newpath does not exist, then a rename.
func renameNoReplaceFallback(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(oldpath, newpath)
}
