package imatrix

import (
	"bytes"
	"fmt"
	"io"
	"sort"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/names"
)

// Format is the file format an importance matrix was read from.
type Format int

const (
	// FormatGGUF is llama-imatrix's GGUF format (the default since 2025).
	FormatGGUF Format = iota + 1
	// FormatDat is the older .dat format.
	FormatDat
)

// String returns "gguf" or "dat".
func (f Format) String() string {
	switch f {
	case FormatGGUF:
		return "gguf"
	case FormatDat:
		return "dat"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Imatrix is a parsed importance matrix.
type Imatrix struct {
	// Path is the file name given to Read or Parse.
	Path string
	// Format is the format the file was in.
	Format Format
	// Datasets lists the calibration files the matrix was computed on
	// (imatrix.datasets, or the .dat trailer's one name); it may be empty.
	Datasets []string
	// ChunkCount is the number of chunks the matrix was computed on
	// (imatrix.chunk_count, or the .dat trailer's count); 0 when the file
	// does not say.
	ChunkCount int64
	// ChunkSize is the number of tokens per chunk (imatrix.chunk_size);
	// 0 for a .dat file, which does not store it.
	ChunkSize int64
	// Entries holds one entry per weight tensor, sorted by name.
	Entries []Entry

	idx map[string]int
}

// Entry is the importance of one weight tensor.
type Entry struct {
	// Name is the weight's GGUF tensor name ("blk.0.attn_q.weight").
	Name string
	// Matrices is the number of matrices the entry covers: the number of
	// experts of a 3-D expert weight in a GGUF imatrix, otherwise 1 (a
	// .dat file does not record it).
	Matrices int
	// Importance holds len/Matrices values per matrix, matrix after
	// matrix: the mean square of the activations that met each input
	// column (1 for every column of a matrix with a zero count).
	Importance []float32
	// Counts holds, per matrix, the number of activation rows the sums
	// cover (GGUF), or the single ncall of a .dat entry.
	Counts []int64
}

// Read reads the importance matrix at path, in either format: a file that
// starts with the GGUF magic is read as GGUF, any other as .dat. A NumPy
// .npz archive of statistics laid out as ReadNPZ describes (a zip file) is
// read too: as the GGUF file Write would make of it.
func Read(path string) (*Imatrix, error) {
	fh, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, &FormatError{Format: formatName, Path: path, Offset: -1, Reason: "cannot open", Err: err}
	}
	defer fh.Close()
	var magic [4]byte
	if n, _ := fh.ReadAt(magic[:], 0); n == 4 && string(magic[:]) == "PK\x03\x04" {
		s, err := ReadNPZ(path)
		if err != nil {
			return nil, err
		}
		b, err := encode(s, FormatGGUF)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return Parse(bytes.NewReader(b), int64(len(b)), path)
	}
	return Parse(fh, fi.Size(), path)
}

// Parse reads an importance matrix of size bytes through r; name is used
// in errors and as Imatrix.Path. Errors in the input are *FormatError
// values, or a *NotImatrixError (wrapping one) for input that is not
// plausibly an importance matrix: too short, text or other data whose
// first bytes are not a .dat's entry count and name length, or a GGUF file
// that is a model (general.architecture) or has neither imatrix.* keys nor
// importance tensors.
func Parse(r io.ReaderAt, size int64, name string) (*Imatrix, error) {
	if size < 8 {
		// Not even a .dat's entry count and first name length.
		return nil, &NotImatrixError{Path: name, Err: &FormatError{Format: formatName, Path: name, Offset: 0,
			Reason: fmt.Sprintf("file of %d bytes is too short", size), Err: io.ErrUnexpectedEOF, Kind: fileerr.NotFormat}}
	}
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return nil, &FormatError{Format: formatName, Path: name, Offset: 0, Reason: "reading the first 4 bytes", Err: err}
	}
	var m *Imatrix
	var err error
	if string(magic[:]) == gguf.Magic {
		m, err = parseGGUF(r, size, name)
	} else {
		m, err = parseDat(r, size, name)
	}
	if err != nil {
		return nil, err
	}
	m.Path = name
	sort.Slice(m.Entries, func(i, j int) bool { return m.Entries[i].Name < m.Entries[j].Name })
	m.idx = make(map[string]int, len(m.Entries))
	for i, e := range m.Entries {
		m.idx[e.Name] = i
	}
	return m, nil
}

// Names returns the entry names, sorted.
func (m *Imatrix) Names() []string {
	out := make([]string, len(m.Entries))
	for i, e := range m.Entries {
		out[i] = e.Name
	}
	return out
}

// Entry returns the entry of the named tensor (a GGUF tensor name), or a
// *LookupError wrapping ErrNoEntry that lists the closest names the file
// has.
func (m *Imatrix) Entry(name string) (*Entry, error) {
	if i, ok := m.idx[name]; ok {
		return &m.Entries[i], nil
	}
	return nil, &LookupError{Path: m.Path, Name: name, Closest: names.Closest(name, m.Names(), 3)}
}

// Has reports whether the file has an entry for the named tensor (a cheap
// test; Entry's error for a missing name searches the closest names).
func (m *Imatrix) Has(name string) bool {
	_, ok := m.idx[name]
	return ok
}

// Vector returns the per-column importance of the named weight as one
// vector, the cols values of each expert one after another (experts is 1
// for a dense weight, the number of experts of a 3-D expert weight;
// values < 1 count as 1): the form the GGUF quantizers take. It shares
// memory with the Imatrix and must not be modified.
//
// A missing entry gives a *LookupError; an entry whose size is not
// cols × experts, or that records another number of matrices, gives a
// *SizeError.
func (m *Imatrix) Vector(name string, cols, experts int) ([]float32, error) {
	e, err := m.Entry(name)
	if err != nil {
		return nil, err
	}
	experts = max(experts, 1)
	bad := cols <= 0 || len(e.Importance)%cols != 0 || len(e.Importance)/cols != experts ||
		(e.Matrices > 1 && e.Matrices != experts)
	if bad {
		return nil, &SizeError{Path: m.Path, Name: name, Values: len(e.Importance), Matrices: e.Matrices,
			Cols: cols, Experts: experts}
	}
	return e.Importance[: cols*experts : cols*experts], nil
}

// Importance is Vector cut into one vector of cols values per expert.
func (m *Imatrix) Importance(name string, cols, experts int) ([][]float32, error) {
	v, err := m.Vector(name, cols, experts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(v)/cols)
	for i := range out {
		out[i] = v[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return out, nil
}
