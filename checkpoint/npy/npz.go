package npy

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
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

// maxDeflateRatio is the most deflate can expand its input: a 258-byte
// match costs at least 2 bits, so 1032 output bytes per input byte.
const maxDeflateRatio = 1032

// sizeLie says why the sizes a member's zip header declares cannot be true
// in an archive of archiveSize bytes, or returns "" when they can.
func sizeLie(f *zip.File, archiveSize int64) string {
	c, u := f.CompressedSize64, f.UncompressedSize64
	switch {
	case c > uint64(archiveSize):
		return fmt.Sprintf("claims %d compressed bytes in an archive of %d bytes", c, archiveSize)
	case f.Method == zip.Store && c != u:
		return fmt.Sprintf("is stored uncompressed but claims %d bytes in %d stored bytes", u, c)
	case f.Method == zip.Deflate && u > c*maxDeflateRatio+1024:
		return fmt.Sprintf("claims %d bytes uncompressed from %d compressed bytes, more than deflate can expand (%d times)", u, c, maxDeflateRatio)
	}
	return ""
}

// ReadNPZ reads every array of an .npz archive (a zip of .npy files, stored or
// deflated, as numpy.savez and savez_compressed write), in archive order.
// Member names lose their ".npy" suffix. Errors name the archive and the member.
// A member's declared sizes are checked against the archive's size and what
// its compression can expand to, members may not share data, and memory is
// allocated as bytes are read, so a small archive cannot claim gigabytes.
func ReadNPZ(path string) ([]Named, error) {
	fh, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer fh.Close()
	return ReadNPZFrom(fh, fi.Size(), path)
}

// ReadNPZFrom reads the .npz archive of size bytes in r as [ReadNPZ] does;
// name is the archive's name in errors.
func ReadNPZFrom(r io.ReaderAt, size int64, name string) ([]Named, error) {
	path := name
	zr, err := zip.NewReader(r, size)
	if errors.Is(err, zip.ErrFormat) {
		return nil, notZip(r, path)
	}
	if err != nil {
		return nil, npzErr(path, err, "not a readable zip archive")
	}
	if err := checkOverlap(zr.File, path); err != nil {
		return nil, err
	}
	var out []Named
	seen := map[string]bool{}
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, ".npy")
		switch {
		case name == "":
			return nil, npzErr(path, nil, "member %q has no array name", f.Name)
		case !utf8.ValidString(f.Name):
			return nil, npzErr(path, nil, "member name %q is not valid UTF-8", f.Name)
		}
		if seen[name] {
			return nil, npzErr(path, nil, "member %q appears twice", f.Name)
		}
		seen[name] = true
		if f.UncompressedSize64 > maxNPZMember {
			e := npzErr(path, nil, "member %q claims %d bytes, more than the %d this reader accepts",
				f.Name, f.UncompressedSize64, uint64(maxNPZMember))
			e.Kind = fileerr.TooLarge
			return nil, e
		}
		if reason := sizeLie(f, size); reason != "" {
			e := npzErr(path, nil, "member %q %s", f.Name, reason)
			e.Kind = fileerr.TooLarge
			return nil, e
		}
		rc, err := f.Open()
		if err != nil {
			return nil, npzErr(path, err, "member %q", f.Name)
		}
		// The declared size is not trusted for the allocation: the payload
		// buffer grows as bytes arrive (decode with an unknown size), and the
		// zip reader checks the size and CRC at the member's end.
		a, err := decode(io.LimitReader(rc, int64(f.UncompressedSize64)), -1)
		if err == nil {
			// The zip reader checks the CRC-32 only when a read reaches
			// the member's end: decode stops at the declared size, so ask
			// for one byte more.
			err = checkEnd(rc, int64(f.UncompressedSize64))
		}
		rc.Close()
		if err != nil {
			return nil, memberErr(path, f.Name, err)
		}
		out = append(out, Named{Name: name, Array: a})
	}
	return out, nil
}

// npzErr returns a *FormatError of the archive at path, with no offset.
func npzErr(path string, err error, reason string, args ...any) *FormatError {
	e := fileerr.New(formatNPZ, -1, err, fmt.Sprintf(reason, args...))
	e.Path = path
	return e
}

// notZip is the error of an archive that zip.NewReader refuses: one that
// starts as a zip does (a local file header) is damaged or truncated, one
// that does not is no zip archive at all.
func notZip(r io.ReaderAt, path string) error {
	var head [4]byte
	if n, _ := r.ReadAt(head[:], 0); n == len(head) && string(head[:]) == "PK\x03\x04" {
		return npzErr(path, io.ErrUnexpectedEOF, "zip archive cut short (no readable end record or central directory)")
	}
	e := npzErr(path, nil, "not a zip archive (an .npz is one)")
	e.Kind = fileerr.NotFormat
	return e
}

// memberErr is the error of decoding member of the archive at path: the
// archive's, with the member's .npy error as its cause. A member that is
// no valid .npy array makes the archive invalid, not of another format.
func memberErr(path, member string, err error) error {
	var fe *FormatError
	if !errors.As(err, &fe) {
		return npzErr(path, err, "member %q", member)
	}
	text, cause := fileerr.Nested(fe)
	e := npzErr(path, cause, "member %q: %s", member, text)
	switch fe.Kind {
	case fileerr.Unsupported, fileerr.TooLarge:
		e.Kind = fe.Kind
	default:
		e.Kind = fileerr.Invalid
	}
	return e
}

// checkOverlap refuses members whose compressed data overlap: in a zip
// that numpy (or any archiver) writes each member has its own bytes, while
// central-directory entries sharing one deflate stream would each pass the
// per-member size checks and together expand to far more than the archive
// can hold. With distinct data, the members' total size is bounded by the
// archive's size times deflate's ratio.
func checkOverlap(files []*zip.File, path string) error {
	type span struct {
		start, end int64
		name       string
	}
	spans := make([]span, 0, len(files))
	for _, f := range files {
		off, err := f.DataOffset()
		if err != nil {
			return npzErr(path, err, "member %q", f.Name)
		}
		if f.CompressedSize64 > 0 {
			end := int64(math.MaxInt64) // sizeLie refuses such a size later
			if f.CompressedSize64 <= uint64(math.MaxInt64-off) {
				end = off + int64(f.CompressedSize64)
			}
			spans = append(spans, span{off, end, f.Name})
		}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for i := 1; i < len(spans); i++ {
		if prev, s := spans[i-1], spans[i]; s.start < prev.end {
			return npzErr(path, nil, "member %q overlaps member %q (bytes %d..%d and %d..%d): the archive is damaged or a zip bomb",
				s.name, prev.name, s.start, s.end, prev.start, prev.end)
		}
	}
	return nil
}

// checkEnd reads r, a member read up to its declared size, to its end,
// which must come now: a member's last read reports a CRC-32 mismatch
// (zip.ErrChecksum).
func checkEnd(r io.Reader, size int64) error {
	var one [1]byte
	for {
		n, err := r.Read(one[:])
		switch {
		case n > 0:
			return errAt(size, nil, "member holds more bytes than it declares")
		case err == io.EOF:
			return nil
		case err != nil:
			return errAt(size, err, "at the member's end")
		}
	}
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
		return err // names the output
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
