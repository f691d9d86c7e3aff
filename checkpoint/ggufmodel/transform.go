package ggufmodel

import "fmt"

// Transform is a change of a tensor's values on its way from the Hugging
// Face checkpoint to the GGUF file. The zero Transform changes nothing.
type Transform struct {
	// PermuteHeads, when positive, is the number of heads of a query or key
	// projection whose rows (the outermost axis) are reordered for
	// llama.cpp's RoPE: within each head of d rows, row 2i+k of the output is
	// row k·d/2+i of the input (i < d/2, k ∈ {0, 1}), so the pairs the
	// rotation mixes, d/2 apart in Hugging Face's layout, become adjacent.
	PermuteHeads int `json:"permute_heads,omitempty"`
	// AddOne adds 1 to every value.
	AddOne bool `json:"add_one,omitempty"`
}

// IsZero reports whether t changes nothing.
func (t Transform) IsZero() bool { return t == Transform{} }

// RowPermutation returns, for a tensor of rows rows, the input row of each
// output row, or nil when t does not permute rows. rows must be a multiple
// of 2·PermuteHeads.
func (t Transform) RowPermutation(rows int) ([]int, error) {
	h := t.PermuteHeads
	if h <= 0 {
		return nil, nil
	}
	if rows%(2*h) != 0 {
		return nil, fmt.Errorf("%d rows do not split into %d heads of an even size", rows, h)
	}
	d := rows / h
	perm := make([]int, rows)
	for head := range h {
		for i := range d / 2 {
			for k := range 2 {
				perm[head*d+2*i+k] = head*d + k*d/2 + i
			}
		}
	}
	return perm, nil
}

// Apply returns x, a row-major tensor of shape shape, transformed, and
// never changes x: the result is a new slice (x itself for the zero
// Transform), so x may be read-only memory.
func (t Transform) Apply(x []float32, shape []int) ([]float32, error) {
	if t.IsZero() {
		return x, nil
	}
	var perm []int
	n := len(x) // values per row
	if t.PermuteHeads > 0 {
		if len(shape) == 0 {
			return nil, fmt.Errorf("cannot permute the rows of a scalar")
		}
		rows := shape[0]
		var err error
		if perm, err = t.RowPermutation(rows); err != nil {
			return nil, err
		}
		if rows == 0 || len(x)%rows != 0 {
			return nil, fmt.Errorf("%d values are not %d rows", len(x), rows)
		}
		n = len(x) / rows
	}
	y := make([]float32, len(x))
	for r := range len(x) / max(n, 1) {
		src := r
		if perm != nil {
			src = perm[r]
		}
		dst, in := y[r*n:(r+1)*n], x[src*n:(src+1)*n]
		if !t.AddOne {
			copy(dst, in)
			continue
		}
		for i, v := range in {
			dst[i] = v + 1
		}
	}
	return y, nil
}
