package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// tmpfsReport is what a child in mode tmpfs reports about its small file
// system after the run: its entries and the output's content.
type tmpfsReport struct {
	Code    int
	Entries []string
	Output  tree
}

// tmpfsChild runs tcast on a full disk: in a mount namespace of its own it
// mounts a tmpfs of TCAST_CHILD_TMPFS bytes on TCAST_CHILD_MNT, copies the
// output TCAST_CHILD_OLD (if set) into it as TCAST_CHILD_DEST, runs the
// command line, and writes a tmpfsReport to TCAST_CHILD_REPORT (the file
// system vanishes with the process).
func tmpfsChild() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "tmpfs child:", err)
		os.Exit(3)
	}
	mnt := os.Getenv("TCAST_CHILD_MNT")
	if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		fail(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size="+os.Getenv("TCAST_CHILD_TMPFS")); err != nil {
		fail(err)
	}
	dest := filepath.Join(mnt, os.Getenv("TCAST_CHILD_DEST"))
	if old := os.Getenv("TCAST_CHILD_OLD"); old != "" {
		if err := copyOutput(old, dest); err != nil {
			fail(err)
		}
	}
	rep := tmpfsReport{Code: run(os.Args[1:], os.Stdout, os.Stderr)}
	es, err := os.ReadDir(mnt)
	if err != nil {
		fail(err)
	}
	for _, e := range es {
		rep.Entries = append(rep.Entries, e.Name())
	}
	if _, err := os.Lstat(dest); err == nil {
		rep.Output = tree{}
		err := filepath.WalkDir(dest, func(q string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(q)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dest, q)
			rep.Output[rel] = sha256Sum(b)
			return nil
		})
		if err != nil {
			fail(err)
		}
	}
	b, err := json.Marshal(rep)
	if err == nil {
		err = os.WriteFile(os.Getenv("TCAST_CHILD_REPORT"), b, 0o644)
	}
	if err != nil {
		fail(err)
	}
	os.Exit(0)
}

// copyOutput copies the output src (a file or a directory) to dst.
func copyOutput(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if info.IsDir() {
		return os.CopyFS(dst, os.DirFS(src))
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// outputSize is the total size of the files of the output at p.
func outputSize(t *testing.T, p string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		n += info.Size()
		return err
	}))
	return n
}

// TestCrashSafetyTmpfs fills a real file system: tcast convert writes onto
// a tmpfs too small for the output (sizes from 1/5 to 4/5 of it, after the
// old output with -force), in a mount namespace of the child's own, for
// every output form. Each run fails with "no space left on device" and
// leaves the file system as it found it. Mounting needs root or a user
// namespace; where neither is allowed the test says so and stops, and
// TestCrashSafetyFullDisk (a file-size limit) covers the same ground.
func TestCrashSafetyTmpfs(t *testing.T) {
	_, model := synthDir(t, "-hidden", "256", "-vocab", "256")
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	for _, form := range crashForms {
		t.Run(form.name, func(t *testing.T) {
			f := newCrashFixture(t, model, form)
			newSize, oldSize := outputSize(t, f.newPath), outputSize(t, f.oldPath)
			runs := 0
			for k := int64(1); k < 5; k++ {
				for _, force := range []bool{false, true} {
					size := newSize * k / 5
					env := []string{"TCAST_CHILD_DEST=" + form.dest}
					if force {
						size += oldSize + 64<<10
						env = append(env, "TCAST_CHILD_OLD="+f.oldPath)
					}
					mnt := t.TempDir()
					report := filepath.Join(t.TempDir(), "report.json")
					env = append(env, fmt.Sprintf("TCAST_CHILD_TMPFS=%d", size), "TCAST_CHILD_MNT="+mnt, "TCAST_CHILD_REPORT="+report)
					cmd := exec.Command(os.Args[0], f.command(filepath.Join(mnt, form.dest), force)...)
					cmd.Env = append(append(os.Environ(), "TCAST_CHILD=tmpfs"), env...)
					cmd.SysProcAttr = attr
					var stderr strings.Builder
					cmd.Stderr = &stderr
					err := cmd.Run()
					var ee *exec.ExitError
					if runs == 0 && (errors.Is(err, syscall.EPERM) || errors.As(err, &ee) && strings.Contains(stderr.String(), "tmpfs child: operation not permitted")) {
						t.Skipf("no mount namespace here (%v %s); TestCrashSafetyFullDisk covers a full disk", err, stderr.String())
					}
					require.NoError(t, err, stderr.String())
					b, err := os.ReadFile(report)
					require.NoError(t, err)
					var rep tmpfsReport
					require.NoError(t, json.Unmarshal(b, &rep))
					require.Equal(t, 1, rep.Code, "tmpfs of %d bytes: %s", size, stderr.String())
					require.Contains(t, stderr.String(), "no space left on device")
					if force {
						require.Equal(t, []string{form.dest}, rep.Entries, "only the old output is left")
						require.True(t, rep.Output.equal(f.old), "the old output is whole")
					} else {
						require.Empty(t, rep.Entries, "no output, no temporary, no lock")
					}
					runs++
				}
			}
			t.Logf("%s: %d/%d runs on a full tmpfs left it as they found it", form.name, runs, runs)
		})
	}
}
