//go:build !linux

package atomicfile

// renameNoReplace renames oldpath to newpath unless newpath exists, in which
// case the error wraps fs.ErrExist. On this system the check and the rename
// are two steps.
func renameNoReplace(oldpath, newpath string) error {
	return renameNoReplaceFallback(oldpath, newpath)
}

// exchange is not available on this system.
func exchange(a, b string) error { return errExchangeUnsupported }
