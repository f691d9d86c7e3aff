//go:build linux || darwin

package safetensors

import (
	"errors"
	"math"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mmapFile maps the first size bytes of f read-only and shared.
func mmapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || size > math.MaxInt {
		return nil, errors.New("size cannot be mapped")
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var data []byte
	var merr error
	if err := rc.Control(func(fd uintptr) {
		data, merr = syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	}); err != nil {
		return nil, err
	}
	if merr != nil {
		return nil, merr
	}
	return data, nil
}

// munmap releases a mapping made by mmapFile.
func munmap(data []byte) error { return syscall.Munmap(data) }

// release tells the kernel the process no longer needs the pages of data:
// they leave its resident set but stay in the page cache.
func release(data []byte) {
	page := os.Getpagesize()
	start := 0
	// Only whole pages inside data: round the start up, the end down.
	base := int(uintptr(unsafePointer(data)) % uintptr(page))
	if base != 0 {
		start = page - base
	}
	end := len(data) - (len(data)-start)%page
	if end-start >= page {
		_ = unix.Madvise(data[start:end], unix.MADV_DONTNEED)
	}
}
