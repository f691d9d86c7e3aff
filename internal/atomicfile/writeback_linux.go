package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// StartWriteback asks the kernel to start writing the n bytes of f from off
// to disk now, without waiting for them: a writer that streams a large
// output calls it for each piece it has written, so that the disk works
// while the program computes and the sync of Commit has little left to
// wait for. It is advice; errors show at the sync.
func StartWriteback(f *os.File, off, n int64) {
	if f == nil || n <= 0 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}

// dropCache asks the kernel to drop from its cache the pages of the regular
// files at path (a file, or a directory and what it holds): advice, which
// leaves their contents as they are, so that removing them later has
// little memory to free.
func dropCache(path string) {
	_ = filepath.WalkDir(path, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return nil
		}
		if f, err := os.Open(p); err == nil {
			_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
			f.Close()
		}
		return nil
	})
}
