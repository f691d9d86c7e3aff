package imatrix

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

// Sizes of the .dat format's parts.
const (
	// datMinEntry is the smallest entry: name length, a 1-byte name,
	// ncall, nval and one value.
	datMinEntry = 4 + 1 + 4 + 4 + 4
	// datChunk is how many float32 values are read and checked at a time.
	datChunk = 1 << 14
)

// datReader reads the .dat format sequentially, tracking the offset and
// the bytes left.
type datReader struct {
	r     *bufio.Reader
	off   int64
	size  int64
	path  string
	entry string
	buf   [4]byte
}

func (d *datReader) fail(off int64, err error, format string, args ...any) *FormatError {
	e := fileerr.New(formatName, off, err, fmt.Sprintf(format, args...))
	e.Path, e.Tensor = d.path, d.entry
	return e
}

func (d *datReader) left() int64 { return d.size - d.off }

// i32 reads one little-endian int32 called what.
func (d *datReader) i32(what string) (int32, error) {
	if d.left() < 4 {
		return 0, d.fail(d.off, io.ErrUnexpectedEOF, "%s: need 4 bytes, %d left", what, d.left())
	}
	if _, err := io.ReadFull(d.r, d.buf[:]); err != nil {
		return 0, d.fail(d.off, eofToUnexpected(err), "reading %s", what)
	}
	d.off += 4
	return int32(binary.LittleEndian.Uint32(d.buf[:])), nil
}

// bytes reads n bytes (n already checked against left()).
func (d *datReader) bytes(n int, what string) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		return nil, d.fail(d.off, eofToUnexpected(err), "reading %s", what)
	}
	d.off += int64(n)
	return b, nil
}

func eofToUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// notDat is the error for a file whose first bytes are not those of a .dat
// importance matrix (an entry count and a first name length that fit the
// file): a *NotImatrixError around err, the legacy-format error.
func notDat(d *datReader, err *FormatError) error {
	err.Reason = "read as llama-imatrix's legacy .dat: " + err.Reason
	err.Kind = fileerr.NotFormat
	return &NotImatrixError{Path: d.path, Err: err}
}

// parseDat decodes the .dat format.
func parseDat(r io.ReaderAt, size int64, path string) (*Imatrix, error) {
	d := &datReader{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10), size: size, path: path}
	n, err := d.i32("entry count")
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, notDat(d, d.fail(0, nil, "entry count %d < 1", n))
	}
	if int64(n) > d.left()/datMinEntry {
		return nil, notDat(d, d.fail(0, nil, "entry count %d cannot fit in the %d bytes that follow (an entry takes at least %d)",
			n, d.left(), datMinEntry))
	}
	m := &Imatrix{Format: FormatDat, Entries: make([]Entry, 0, n)}
	seen := make(map[string]int64, n)
	for i := range int(n) {
		d.entry = ""
		start := d.off
		e, err := d.readEntry(i)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[e.Name]; dup {
			return nil, d.fail(start, nil, "duplicate entry (first at offset %d)", prev)
		}
		seen[e.Name] = start
		m.Entries = append(m.Entries, e)
	}
	d.entry = ""
	if err := d.readTrailer(m); err != nil {
		return nil, err
	}
	return m, nil
}

// readEntry reads entry i (counted from 0).
func (d *datReader) readEntry(i int) (Entry, error) {
	lenOff := d.off
	nameLen, err := d.i32(fmt.Sprintf("name length of entry %d", i))
	if err != nil {
		return Entry{}, err
	}
	if nameLen < 1 || nameLen > gguf.MaxNameLen {
		err := d.fail(lenOff, nil, "entry %d: name length %d outside 1..%d", i, nameLen, gguf.MaxNameLen)
		if i == 0 {
			return Entry{}, notDat(d, err)
		}
		return Entry{}, err
	}
	if int64(nameLen) > d.left() {
		return Entry{}, d.fail(lenOff, io.ErrUnexpectedEOF, "entry %d: name of %d bytes, %d left", i, nameLen, d.left())
	}
	nameOff := d.off
	b, err := d.bytes(int(nameLen), fmt.Sprintf("name of entry %d", i))
	if err != nil {
		return Entry{}, err
	}
	name := string(b)
	if j := strings.IndexByte(name, 0); j >= 0 {
		return Entry{}, d.fail(nameOff+int64(j), nil, "entry %d: name %q holds a NUL byte", i, name)
	}
	if !utf8.ValidString(name) {
		return Entry{}, d.fail(nameOff, nil, "entry %d: name %q is not valid UTF-8 (tensor names are)", i, name)
	}
	d.entry = name
	callOff := d.off
	ncall, err := d.i32("ncall")
	if err != nil {
		return Entry{}, err
	}
	if ncall < 0 {
		return Entry{}, d.fail(callOff, nil, "ncall %d < 0", ncall)
	}
	nvalOff := d.off
	nval, err := d.i32("nval")
	if err != nil {
		return Entry{}, err
	}
	if nval < 1 {
		return Entry{}, d.fail(nvalOff, nil, "nval %d < 1", nval)
	}
	if int64(nval) > d.left()/4 {
		return Entry{}, d.fail(nvalOff, io.ErrUnexpectedEOF, "nval %d needs %d bytes, %d left", nval, 4*int64(nval), d.left())
	}
	vals := make([]float32, nval)
	if err := d.values(vals, ncall); err != nil {
		return Entry{}, err
	}
	return Entry{Name: name, Matrices: 1, Importance: vals, Counts: []int64{int64(ncall)}}, nil
}

// values reads len(dst) float32 values, checks each is finite and not
// negative, and stores value/ncall (the value itself when ncall is 0).
func (d *datReader) values(dst []float32, ncall int32) error {
	buf := make([]byte, 4*min(len(dst), datChunk))
	for start := 0; start < len(dst); start += datChunk {
		k := min(datChunk, len(dst)-start)
		chunkOff := d.off
		if _, err := io.ReadFull(d.r, buf[:4*k]); err != nil {
			return d.fail(chunkOff, eofToUnexpected(err), "reading values")
		}
		d.off += int64(4 * k)
		for j := range k {
			v := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0 {
				return d.fail(chunkOff+int64(4*j), nil, "value %d is %v (a mean square must be finite and ≥ 0)",
					start+j, v)
			}
			if ncall > 0 {
				v /= float32(ncall)
			}
			dst[start+j] = v
		}
	}
	return nil
}

// readTrailer reads the optional trailer: nothing, an int32 chunk count,
// or a chunk count, an int32 length and a dataset name of that length
// ending the file.
func (d *datReader) readTrailer(m *Imatrix) error {
	if d.left() == 0 {
		return nil
	}
	countOff := d.off
	count, err := d.i32("trailing chunk count")
	if err != nil {
		return err
	}
	if count < 0 {
		return d.fail(countOff, nil, "trailing chunk count %d < 0", count)
	}
	m.ChunkCount = int64(count)
	if d.left() == 0 {
		return nil
	}
	lenOff := d.off
	n, err := d.i32("dataset name length")
	if err != nil {
		return err
	}
	switch {
	case n < 0:
		return d.fail(lenOff, nil, "dataset name length %d < 0", n)
	case int64(n) > d.left():
		return d.fail(lenOff, io.ErrUnexpectedEOF, "dataset name of %d bytes, %d left", n, d.left())
	case int64(n) < d.left():
		return d.fail(lenOff, nil, "%d bytes follow the dataset name of %d bytes", d.left()-int64(n), n)
	}
	if n == 0 {
		return nil
	}
	nameOff := d.off
	b, err := d.bytes(int(n), "dataset name")
	if err != nil {
		return err
	}
	if j := strings.IndexByte(string(b), 0); j >= 0 {
		return d.fail(nameOff+int64(j), nil, "dataset name holds a NUL byte")
	}
	m.Datasets = []string{string(b)}
	return nil
}
