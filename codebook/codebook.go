package codebook

import (
	"fmt"
	"slices"
	"sync"

	"github.com/tensorcast-go/tensorcast/dtype"
)

// Codebook is a set of 2^MetaBits tables ("mappings") whose codes are
// IndexBits wide: every element stores an index into one of them, and each
// tile or subtile stores in its meta field which one (docs/CODEBOOK.md §4).
// Codebooks are immutable and safe for concurrent use.
type Codebook struct {
	name      string
	indexBits int
	metaBits  int
	tables    []*Table
	compute   *dtype.Format // the number format the entries lie on, or nil
	maxAbs    float32
	plan      func() *signedPlan // built on first use; nil result when it does not apply
	minLen    int                // the fewest entries of a table
	luts      []float32          // 2^indexBits entries per table (NaN past the last), for DecodeBlocks
}

// New returns the codebook of tables, a power of two of them (1 to 256),
// with codes of indexBits (1 to 8, at least every table's Bits). compute, if
// not nil, is the number format the entries are taken from; a scaled
// datatype chooses its power-of-two scale from that format's top exponent
// (else from the tables' largest magnitude).
func New(name string, indexBits int, tables []*Table, compute *dtype.Format) (*Codebook, error) {
	n := len(tables)
	if n == 0 || n > maxEntries || n&(n-1) != 0 {
		return nil, fmt.Errorf("codebook %q: %w: %d tables, want a power of two from 1 to %d", name, ErrArg, n, maxEntries)
	}
	if indexBits < 1 || indexBits > 8 {
		return nil, fmt.Errorf("codebook %q: %w: %d index bits, want 1 to 8", name, ErrArg, indexBits)
	}
	c := &Codebook{name: name, indexBits: indexBits, metaBits: bitsFor(n), tables: slices.Clone(tables), compute: compute}
	if n == 1 {
		c.metaBits = 0
	}
	for i, t := range tables {
		if t == nil {
			return nil, fmt.Errorf("codebook %q: %w: table %d is nil", name, ErrArg, i)
		}
		if t.Bits() > indexBits {
			return nil, fmt.Errorf("codebook %q: %w: table %d (%s) has %d-bit codes, more than %d index bits", name, ErrArg, i, t.Name(), t.Bits(), indexBits)
		}
		c.maxAbs = max(c.maxAbs, t.MaxAbs())
	}
	c.minLen = tables[0].Len()
	for _, t := range tables {
		c.minLen = min(c.minLen, t.Len())
	}
	if entries := 1 << indexBits; n*entries <= 1<<14 {
		c.luts = make([]float32, entries*n)
		for k, t := range tables {
			copy(c.luts[entries*k:entries*(k+1)], t.lut[:entries])
		}
	}
	c.plan = sync.OnceValue(c.newSignedPlan)
	return c, nil
}

// Name returns the codebook's name.
func (c *Codebook) Name() string { return c.name }

// String returns the name.
func (c *Codebook) String() string { return c.name }

// IndexBits returns the width of an element's code.
func (c *Codebook) IndexBits() int { return c.indexBits }

// MetaBits returns the width of a meta field: log2 of the number of tables.
func (c *Codebook) MetaBits() int { return c.metaBits }

// Len returns the number of tables.
func (c *Codebook) Len() int { return len(c.tables) }

// Table returns table i.
func (c *Codebook) Table(i int) *Table { return c.tables[i] }

// Tables returns the tables.
func (c *Codebook) Tables() []*Table { return slices.Clone(c.tables) }

// Compute returns the number format the entries lie on, or nil.
func (c *Codebook) Compute() *dtype.Format { return c.compute }

// MaxAbs returns the largest entry magnitude of all tables.
func (c *Codebook) MaxAbs() float32 { return c.maxAbs }
