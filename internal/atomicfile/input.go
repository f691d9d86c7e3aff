package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrInput is matched by the error of CheckOutput: the output would write
// over or inside an input.
var ErrInput = errors.New("the output would overwrite the input")

// CheckOutput refuses a destination that is one of inputs (files or
// directories, symbolic links resolved), a directory that holds one, or a
// path inside an input directory: writing it would change or remove an
// input. No command writes a file it reads.
func CheckOutput(dest string, inputs ...string) error {
	d, err := canonical(dest)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		p, err := canonical(in)
		if err != nil {
			continue
		}
		if p == d || sameFile(p, d) {
			return fmt.Errorf("%w: %s is the input %s; write the output somewhere else", ErrInput, dest, in)
		}
		if inside(p, d) {
			return fmt.Errorf("%w: %s holds the input %s; write the output somewhere else", ErrInput, dest, in)
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() && inside(d, p) {
			return fmt.Errorf("%w: %s is inside the input directory %s; write the output somewhere else", ErrInput, dest, in)
		}
	}
	return nil
}

// canonical returns p made absolute with its symbolic links resolved, as
// far as it exists.
func canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		}
		if filepath.Dir(cur) == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

// inside reports whether path p lies strictly inside directory d.
func inside(p, d string) bool {
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// sameFile reports whether a and b exist and are the same file (a hard link,
// or another spelling on a case-insensitive file system).
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}
