//go:build !linux

package atomicfile

import "os"

// StartWriteback asks the kernel to start writing the n bytes of f from off
// to disk now; on this platform it does nothing (the sync of Commit writes
// everything).
func StartWriteback(f *os.File, off, n int64) {}

// dropCache drops the cached pages of the files at path; on this platform
// it does nothing.
func dropCache(path string) {}
