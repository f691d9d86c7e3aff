package npy

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// Named is one array of an .npz archive.
type Named struct {
	Name string
	*Array
}

// maxNPZMember bounds the uncompressed size of one archive member that ReadNPZ
// accepts: a member claiming more than this is an error, not an allocation.
const maxNPZMember = 1 << 34

// ReadNPZ reads every array of an .npz archive (a zip of .npy files, stored or
// deflated, as numpy.savez and savez_compressed write), in archive order.
// Member names lose their ".npy" suffix. Errors name the archive and the member.
func ReadNPZ(path string) ([]Named, error) {
	fh, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer fh.Close()
	zr, err := zip.NewReader(fh, fi.Size())
	if err != nil {
		return nil, &FormatError{Path: path, Reason: "not a zip archive", Err: err}
	}
	var out []Named
	seen := map[string]bool{}
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, ".npy")
		if seen[name] {
			return nil, &FormatError{Path: path, Reason: fmt.Sprintf("member %q appears twice", f.Name)}
		}
		seen[name] = true
		if f.UncompressedSize64 > maxNPZMember {
			return nil, &FormatError{Path: path, Reason: fmt.Sprintf("member %q claims %d bytes", f.Name, f.UncompressedSize64)}
		}
		rc, err := f.Open()
		if err != nil {
			return nil, &FormatError{Path: path, Reason: fmt.Sprintf("member %q", f.Name), Err: err}
		}
		a, err := decode(io.LimitReader(rc, int64(f.UncompressedSize64)), int64(f.UncompressedSize64))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("npy: %s: member %q: %w", path, f.Name, err)
		}
		out = append(out, Named{Name: name, Array: a})
	}
	return out, nil
}

// WriteNPZ writes arrays as an uncompressed .npz archive (numpy.savez's layout),
// members named "<name>.npy" in the order given, through a synced temporary file
// renamed into place (replacing an existing file; mode 0666 less the umask).
func WriteNPZ(path string, arrays []Named) (err error) {
	names := make([]string, len(arrays))
	for i, a := range arrays {
		names[i] = a.Name
	}
	sort.Strings(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			return fmt.Errorf("npy: %s: array name %q used twice", path, names[i])
		}
	}
	out, err := atomicfile.Begin(path, atomicfile.Options{Force: true})
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	defer out.Abort() // does nothing after Commit
	f, err := os.OpenFile(out.Path(), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	defer f.Close() // a second Close after the one below does no harm
	zw := zip.NewWriter(f)
	for _, a := range arrays {
		if a.Header.Fortran {
			return fmt.Errorf("npy: %s: array %q is in Fortran order; WriteNPZ writes C order", path, a.Name)
		}
		var b bytes.Buffer
		if err := Write(&b, a.Header.DType, a.Header.Shape, a.Data); err != nil {
			return fmt.Errorf("npy: %s: array %q: %w", path, a.Name, err)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: zip.Store})
		if err != nil {
			return err
		}
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("npy: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("npy: %s: %w", path, err)
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}
