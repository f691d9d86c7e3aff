package main

import (
	"os"
	"runtime"
	"syscall"
)

// dropFileCapabilities holds a process running as root to file permissions
// as any other user is: it drops CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
// CAP_FOWNER from the capability bounding set of this thread and executes
// the test binary again from it, which root then starts without them. A
// process of another user is held to them already.
func dropFileCapabilities() error {
	if os.Geteuid() != 0 || os.Getenv("TCAST_CHILD_NODAC") == "dropped" {
		return nil
	}
	runtime.LockOSThread()
	const prCapbsetDrop = 24 // PR_CAPBSET_DROP
	for _, c := range []uintptr{1, 2, 3} {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, c, 0); errno != 0 {
			return errno
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, append(os.Environ(), "TCAST_CHILD_NODAC=dropped"))
}
