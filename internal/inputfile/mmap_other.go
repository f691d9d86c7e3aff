//go:build !(linux || darwin)

package inputfile

import (
	"errors"
	"os"
)

// Map reports that memory mapping is not available, so readers read
// through ReadAt.
func Map(*os.File, int64) ([]byte, error) {
	return nil, errors.New("memory mapping is not supported on this platform")
}

// Unmap is never called on this platform.
func Unmap([]byte) error { return nil }

// Release does nothing on this platform.
func Release([]byte) {}

// ReleaseRange does nothing on this platform.
func ReleaseRange([]byte, int64, int64) {}
