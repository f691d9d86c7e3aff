package masked

import (
	"cmp"
	"slices"
)

// coords is the common form of the sparse layouts: the specified entries as
// flat row-major offsets into the shape, strictly ascending, with their values
// and mask bits. Unspecified elements are masked out.
type coords[T Float] struct {
	shape []int
	lin   []int
	vals  []T
	mask  []bool
}

// keyed is a specified entry with its output position and its position within
// the reduced dimensions.
type keyed struct{ out, pos, ent int }

// groups calls f once for every output position that has specified entries,
// with their values, mask bits, positions within the reduced dimensions (in
// row-major order of those) and entry numbers, sorted by position. red flags
// the reduced dimensions.
func (c *coords[T]) groups(red []bool, f func(o int, xs []T, ks []bool, pos, ent []int)) {
	if len(c.lin) == 0 {
		return
	}
	ks := make([]keyed, len(c.lin))
	for e, l := range c.lin {
		out, pos, om, rm := 0, 0, 1, 1
		for d := len(c.shape) - 1; d >= 0; d-- {
			s := c.shape[d]
			i := l % s
			l /= s
			if red[d] {
				pos += i * rm
				rm *= s
			} else {
				out += i * om
				om *= s
			}
		}
		ks[e] = keyed{out, pos, e}
	}
	byKey := func(a, b keyed) int {
		if a.out != b.out {
			return cmp.Compare(a.out, b.out)
		}
		return cmp.Compare(a.pos, b.pos)
	}
	if !slices.IsSortedFunc(ks, byKey) {
		slices.SortFunc(ks, byKey)
	}
	var (
		xs   []T
		kb   []bool
		pos  []int
		ents []int
	)
	for i := 0; i < len(ks); {
		j := i
		xs, kb, pos, ents = xs[:0], kb[:0], pos[:0], ents[:0]
		for ; j < len(ks) && ks[j].out == ks[i].out; j++ {
			e := ks[j].ent
			xs = append(xs, c.vals[e])
			kb = append(kb, c.mask[e])
			pos = append(pos, ks[j].pos)
			ents = append(ents, e)
		}
		f(ks[i].out, xs, kb, pos, ents)
		i = j
	}
}

// dense returns the dense tensor of c: unspecified elements are 0 and masked
// out.
func (c *coords[T]) dense() *Tensor[T] {
	n := 1
	for _, s := range c.shape {
		n *= s
	}
	t := &Tensor[T]{shape: slices.Clone(c.shape), data: make([]T, n), mask: make([]bool, n)}
	for e, l := range c.lin {
		t.data[l] = c.vals[e]
		t.mask[l] = c.mask[e]
	}
	return t
}

// withValues returns c with other values and mask bits for the same entries.
func (c *coords[T]) withValues(vals []T, mask []bool) coords[T] {
	return coords[T]{shape: c.shape, lin: c.lin, vals: vals, mask: mask}
}

// COO is a sparse masked tensor in coordinate form: the specified entries'
// indices, values and mask bits (the data and the mask of torch's sparse
// MaskedTensor, which share their indices). Unspecified elements are masked
// out. The entries are held in row-major order of their indices (torch's
// coalesced order) without repeats.
type COO[T Float] struct {
	c coords[T]
}

func (s *COO[T]) entries() ([]int, *Tensor[T], *coords[T]) {
	if s == nil {
		return nil, nil, nil
	}
	return s.c.shape, nil, &s.c
}

// NewCOO returns a sparse masked tensor of the given shape with nnz specified
// entries: indices has one row per dimension, each nnz long (torch's
// indices() layout: indices[d][e] is entry e's coordinate along dimension d),
// values and mask are nnz long (a nil mask keeps every specified entry). The
// entries may come in any order; a repeated index is an error. NewCOO copies
// its arguments.
func NewCOO[T Float](shape []int, indices [][]int, values []T, mask []bool) (*COO[T], error) {
	const op = "NewCOO"
	if _, err := numel(op, "shape", shape); err != nil {
		return nil, err
	}
	nnz := len(values)
	if mask != nil && len(mask) != nnz {
		return nil, errorf(ErrShape, op, "mask", "%d mask bits for %d values", len(mask), nnz)
	}
	if len(indices) != len(shape) {
		return nil, errorf(ErrIndex, op, "indices", "%d index rows for rank %d", len(indices), len(shape))
	}
	for d, row := range indices {
		if len(row) != nnz {
			return nil, errorf(ErrIndex, op, "indices", "row %d has %d indices for %d values", d, len(row), nnz)
		}
	}
	if len(shape) == 0 && nnz > 1 {
		return nil, errorf(ErrIndex, op, "indices", "%d entries in a scalar", nnz)
	}
	lin := make([]int, nnz)
	for e := range lin {
		l := 0
		for d, s := range shape {
			i := indices[d][e]
			if i < 0 || i >= s {
				return nil, errorf(ErrIndex, op, "indices", "entry %d: index %d out of range [0, %d) along dimension %d", e, i, s, d)
			}
			l = l*s + i
		}
		lin[e] = l
	}
	c, err := sortedCoords(op, shape, lin, values, mask, func(e int) []int {
		at := make([]int, len(shape))
		for d := range shape {
			at[d] = indices[d][e]
		}
		return at
	})
	if err != nil {
		return nil, err
	}
	return &COO[T]{c: c}, nil
}

// sortedCoords sorts entries by flat offset (copying values and mask) and
// rejects repeats; where names an entry's index for the error.
func sortedCoords[T Float](op string, shape, lin []int, values []T, mask []bool, where func(e int) []int) (coords[T], error) {
	perm := make([]int, len(lin))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return cmp.Compare(lin[a], lin[b]) })
	c := coords[T]{shape: slices.Clone(shape), lin: make([]int, len(lin)), vals: make([]T, len(lin)), mask: make([]bool, len(lin))}
	for i, e := range perm {
		c.lin[i] = lin[e]
		c.vals[i] = values[e]
		c.mask[i] = mask == nil || mask[e]
		if i > 0 && c.lin[i] == c.lin[i-1] {
			return coords[T]{}, errorf(ErrIndex, op, "indices", "index %v repeated (entries %d and %d)", where(e), perm[i-1], e)
		}
	}
	return c, nil
}

// Shape returns a copy of the shape.
func (s *COO[T]) Shape() []int { return slices.Clone(s.c.shape) }

// NNZ returns the number of specified entries.
func (s *COO[T]) NNZ() int { return len(s.c.lin) }

// Indices returns the entries' indices in torch's layout (one row per
// dimension), in the held order.
func (s *COO[T]) Indices() [][]int {
	idx := make([][]int, len(s.c.shape))
	for d := range idx {
		idx[d] = make([]int, len(s.c.lin))
	}
	for e, l := range s.c.lin {
		for d := len(s.c.shape) - 1; d >= 0; d-- {
			idx[d][e] = l % s.c.shape[d]
			l /= s.c.shape[d]
		}
	}
	return idx
}

// Values returns the entries' values in the held order (shared, not a copy).
func (s *COO[T]) Values() []T { return s.c.vals }

// Mask returns the entries' mask bits in the held order (shared, not a copy).
func (s *COO[T]) Mask() []bool { return s.c.mask }

// ToDense returns the dense masked tensor: unspecified elements become 0 and
// masked out.
func (s *COO[T]) ToDense() *Tensor[T] { return s.c.dense() }

// ToCSR returns the same entries in CSR form, sharing the values and mask
// bits; the tensor must have two dimensions.
func (s *COO[T]) ToCSR() (*CSR[T], error) { return csrFromCoords("COO.ToCSR", s.c) }

// ToCOO returns the kept elements of t as a sparse COO tensor (torch's
// MaskedTensor.to_sparse: the specified entries are those whose mask is true).
func (t *Tensor[T]) ToCOO() *COO[T] {
	return &COO[T]{c: t.keptCoords()}
}

// ToCSR returns the kept elements of t as a sparse CSR tensor; t must have two
// dimensions.
func (t *Tensor[T]) ToCSR() (*CSR[T], error) { return csrFromCoords("Tensor.ToCSR", t.keptCoords()) }

func (t *Tensor[T]) keptCoords() coords[T] {
	n := countBlock(t.mask)
	c := coords[T]{shape: slices.Clone(t.shape), lin: make([]int, 0, n), vals: make([]T, 0, n), mask: make([]bool, 0, n)}
	for i, k := range t.mask {
		if k {
			c.lin = append(c.lin, i)
			c.vals = append(c.vals, t.data[i])
			c.mask = append(c.mask, true)
		}
	}
	return c
}

// CSR is a two-dimensional sparse masked tensor in compressed sparse row form:
// row r's entries are at crow[r]..crow[r+1] of col (their columns, ascending),
// values and mask. Unspecified elements are masked out.
type CSR[T Float] struct {
	c    coords[T]
	crow []int
	col  []int
}

func (s *CSR[T]) entries() ([]int, *Tensor[T], *coords[T]) {
	if s == nil {
		return nil, nil, nil
	}
	return s.c.shape, nil, &s.c
}

// NewCSR returns a sparse masked tensor of shape [rows, cols] in CSR form:
// crowIndices has rows+1 non-decreasing offsets from 0 to nnz, colIndices,
// values and mask (nil: every specified entry kept) are nnz long. The columns of
// a row may come in any order; a repeated column is an error. NewCSR copies its
// arguments.
func NewCSR[T Float](shape []int, crowIndices, colIndices []int, values []T, mask []bool) (*CSR[T], error) {
	const op = "NewCSR"
	if len(shape) != 2 {
		return nil, errorf(ErrShape, op, "shape", "CSR needs two dimensions, got %v", shape)
	}
	if _, err := numel(op, "shape", shape); err != nil {
		return nil, err
	}
	rows, cols := shape[0], shape[1]
	nnz := len(values)
	if mask != nil && len(mask) != nnz {
		return nil, errorf(ErrShape, op, "mask", "%d mask bits for %d values", len(mask), nnz)
	}
	if len(colIndices) != nnz {
		return nil, errorf(ErrIndex, op, "colIndices", "%d column indices for %d values", len(colIndices), nnz)
	}
	if len(crowIndices) != rows+1 || crowIndices[0] != 0 || crowIndices[rows] != nnz {
		return nil, errorf(ErrIndex, op, "crowIndices", "want %d offsets from 0 to %d", rows+1, nnz)
	}
	lin := make([]int, nnz)
	for r := range rows {
		lo, hi := crowIndices[r], crowIndices[r+1]
		if hi < lo || hi > nnz {
			return nil, errorf(ErrIndex, op, "crowIndices", "offsets %d, %d of row %d out of order", lo, hi, r)
		}
		for e := lo; e < hi; e++ {
			c := colIndices[e]
			if c < 0 || c >= cols {
				return nil, errorf(ErrIndex, op, "colIndices", "entry %d: column %d out of range [0, %d)", e, c, cols)
			}
			lin[e] = r*cols + c
		}
	}
	c, err := sortedCoords(op, shape, lin, values, mask, func(e int) []int { return []int{lin[e] / cols, lin[e] % cols} })
	if err != nil {
		return nil, err
	}
	return csrFromCoords(op, c)
}

// csrFromCoords builds the CSR index arrays of two-dimensional coords.
func csrFromCoords[T Float](op string, c coords[T]) (*CSR[T], error) {
	if len(c.shape) != 2 {
		return nil, errorf(ErrShape, op, "shape", "CSR needs two dimensions, got %v", c.shape)
	}
	rows, cols := c.shape[0], c.shape[1]
	s := &CSR[T]{c: c, crow: make([]int, rows+1), col: make([]int, len(c.lin))}
	for e, l := range c.lin {
		s.crow[l/cols+1]++
		s.col[e] = l % cols
	}
	for r := range rows {
		s.crow[r+1] += s.crow[r]
	}
	return s, nil
}

// Shape returns a copy of the shape ([rows, cols]).
func (s *CSR[T]) Shape() []int { return slices.Clone(s.c.shape) }

// NNZ returns the number of specified entries.
func (s *CSR[T]) NNZ() int { return len(s.c.lin) }

// CrowIndices returns the row offsets (shared, not a copy).
func (s *CSR[T]) CrowIndices() []int { return s.crow }

// ColIndices returns the entries' columns (shared, not a copy).
func (s *CSR[T]) ColIndices() []int { return s.col }

// Values returns the entries' values (shared, not a copy).
func (s *CSR[T]) Values() []T { return s.c.vals }

// Mask returns the entries' mask bits (shared, not a copy).
func (s *CSR[T]) Mask() []bool { return s.c.mask }

// ToDense returns the dense masked tensor: unspecified elements become 0 and
// masked out.
func (s *CSR[T]) ToDense() *Tensor[T] { return s.c.dense() }

// ToCOO returns the same entries in COO form, sharing the values and mask
// bits.
func (s *CSR[T]) ToCOO() *COO[T] { return &COO[T]{c: s.c} }
