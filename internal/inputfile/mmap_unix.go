//go:build linux || darwin

package inputfile

import (
	"errors"
	"math"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Map maps the first size bytes of f read-only and shared. The mapping
// stays valid after f is closed, until Unmap. Writing to it, or reading it
// after the file was truncated, crashes the program.
func Map(f *os.File, size int64) ([]byte, error) {
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

// Unmap releases a mapping made by Map.
func Unmap(data []byte) error { return syscall.Munmap(data) }

// Release tells the kernel the process no longer needs the pages of data,
// a part of a mapping made by Map: the whole pages inside it leave the
// resident set but stay in the page cache.
func Release(data []byte) {
	page := os.Getpagesize()
	start := 0
	// Only whole pages inside data: round the start up, the end down.
	base := int(uintptr(unsafe.Pointer(unsafe.SliceData(data))) % uintptr(page))
	if base != 0 {
		start = page - base
	}
	end := len(data) - (len(data)-start)%page
	if end-start >= page {
		_ = unix.Madvise(data[start:end], unix.MADV_DONTNEED)
	}
}

// ReleaseRange is Release for the n bytes of data from byte off, clipped
// to data (without overflow for any off and n).
func ReleaseRange(data []byte, off, n int64) {
	if n <= 0 {
		return
	}
	if off < 0 {
		off, n = 0, n+off // no overflow: n > 0 > off
	}
	if size := int64(len(data)); off < size && n > 0 {
		Release(data[off : off+min(n, size-off)])
	}
}
