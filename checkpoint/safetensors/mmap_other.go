//go:build !(linux || darwin)

package safetensors

import (
	"errors"
	"os"
)

// mmapFile reports that memory mapping is not available, so Open reads
// through ReadAt.
func mmapFile(*os.File, int64) ([]byte, error) {
	return nil, errors.New("memory mapping is not supported on this platform")
}

// munmap is never called on this platform.
func munmap([]byte) error { return nil }

func release([]byte) {}
