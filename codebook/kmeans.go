package codebook

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Init chooses the starting centroids of KMeans.
type Init uint8

// The initializations.
const (
	// InitKMeansPP is k-means++ (the zero value): the first centroid drawn
	// with probability proportional to weight, each next one proportional to
	// weight times the squared distance to the nearest chosen one, from a PCG
	// generator seeded with KMeansOptions.Seed.
	InitKMeansPP Init = iota
	// InitQuantile puts centroid j at the weighted quantile (j + ½)/k of the
	// data: no randomness at all.
	InitQuantile
)

// KMeansOptions control KMeans. The zero value runs k-means++ with seed 0,
// at most 100 Lloyd iterations, unit weights, ties to the lower entry.
type KMeansOptions struct {
	// Init chooses the starting centroids.
	Init Init
	// Seed seeds the k-means++ draws (the same seed, data and options give
	// the same table).
	Seed uint64
	// MaxIter bounds the Lloyd iterations; 0 means 100.
	MaxIter int
	// Weights, when not nil, weigh each value's squared error (an importance
	// or sensitivity per value, as SqueezeLLM weighs by Fisher information);
	// one finite non-negative weight per value, not all zero.
	Weights []float32
	// Importance, when not nil, weighs each value by the importance of its
	// column, as an importance matrix (llama.cpp's imatrix) gives it: one
	// finite non-negative value per column. KMeans reads x as rows of
	// len(Importance) values; KMeansPerChannel takes one value per index
	// along the last axis of its shape. The value of x[i] then weighs
	// Importance[i mod columns] (weighted Lloyd: weighted centroids). It
	// cannot be combined with Weights.
	Importance []float32
	// Tie is the tie rule of the tables made (and of the assignments).
	Tie Tie
}

// columnWeights expands o.Importance to a weight per value of n values in
// rows of cols (o.Weights when there is no importance).
func columnWeights(name string, o KMeansOptions, n, cols int) ([]float32, error) {
	imp := o.Importance
	if imp == nil {
		return o.Weights, nil
	}
	if o.Weights != nil {
		return nil, fmt.Errorf("codebook: k-means %s: %w: both Weights and Importance", name, ErrArg)
	}
	if len(imp) == 0 || len(imp) != cols || n%cols != 0 {
		return nil, fmt.Errorf("codebook: k-means %s: %w: %d importance values for %d values in rows of %d", name, ErrArg, len(imp), n, cols)
	}
	w := make([]float32, n)
	for i := range w {
		w[i] = imp[i%cols]
	}
	return w, nil
}

// KMeansResult is a learned table and how it was found.
type KMeansResult struct {
	// Table holds the centroids in ascending order: k of them, or fewer when
	// the data has fewer distinct values or centroids merged.
	Table *Table
	// SSE is the weighted sum of squared errors of the data against the table
	// (each value to the entry it encodes to), computed in float64.
	SSE float64
	// Iterations is the number of Lloyd iterations run.
	Iterations int
	// History is the SSE after initialization and after each iteration; it
	// never increases.
	History []float64
}

const defaultMaxIter = 100

// KMeans learns a table of at most k entries (1 ≤ k ≤ 256) for the values x
// by Lloyd's algorithm in one dimension: assign every value to its nearest
// centroid (by the table's own encoding rule), move every centroid to the
// weighted mean of its values rounded to float32, repeat until the
// assignment no longer changes, MaxIter is reached, or an iteration would
// not lower the SSE (then the previous centroids are kept). A centroid left
// without values stays where it is. Centroids are float32 throughout, so
// the table encodes exactly as the iterations assigned. NaN or infinite
// values are an error (ErrNaN, ErrInf, with their offset).
func KMeans(name string, x []float32, k int, opts *KMeansOptions) (*KMeansResult, error) {
	var o KMeansOptions
	if opts != nil {
		o = *opts
	}
	w, err := columnWeights(name, o, len(x), len(o.Importance))
	if err != nil {
		return nil, err
	}
	if err := checkKMeans(name, x, k, w); err != nil {
		return nil, err
	}
	return kmeans(name, x, k, o, w)
}

// KMeansPerChannel learns one table per index along axis of a tensor of
// shape (row-major x): table c from the values whose index along axis is c,
// each by KMeans with the seed Seed + c. Weights, if given, are per element
// of x. The tables are named name[c].
func KMeansPerChannel(name string, x []float32, shape []int, axis, k int, opts *KMeansOptions) ([]*KMeansResult, error) {
	var o KMeansOptions
	if opts != nil {
		o = *opts
	}
	n := 1
	for _, d := range shape {
		if d < 0 || (d != 0 && n > math.MaxInt32/d) {
			return nil, fmt.Errorf("codebook: k-means %s: %w: shape %v", name, ErrArg, shape)
		}
		n *= d
	}
	if axis < 0 || axis >= len(shape) || n != len(x) {
		return nil, fmt.Errorf("codebook: k-means %s: %w: axis %d of shape %v for %d values", name, ErrArg, axis, shape, len(x))
	}
	var err error
	if o.Weights, err = columnWeights(name, o, len(x), shape[len(shape)-1]); err != nil {
		return nil, err
	}
	if err := checkKMeans(name, x, k, o.Weights); err != nil {
		return nil, err
	}
	inner := 1
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	ch := shape[axis]
	vals := make([][]float32, ch)
	var ws [][]float32
	if o.Weights != nil {
		ws = make([][]float32, ch)
	}
	for i, v := range x {
		c := (i / inner) % ch
		vals[c] = append(vals[c], v)
		if ws != nil {
			ws[c] = append(ws[c], o.Weights[i])
		}
	}
	out := make([]*KMeansResult, ch)
	for c := range ch {
		oc := o
		oc.Seed = o.Seed + uint64(c)
		var w []float32
		if ws != nil && slices.ContainsFunc(ws[c], func(v float32) bool { return v > 0 }) {
			w = ws[c] // a channel of zero weights runs unweighted
		}
		if len(vals[c]) == 0 {
			return nil, fmt.Errorf("codebook: k-means %s: %w: channel %d has no values", name, ErrArg, c)
		}
		r, err := kmeans(fmt.Sprintf("%s[%d]", name, c), vals[c], k, oc, w)
		if err != nil {
			return nil, err
		}
		out[c] = r
	}
	return out, nil
}

func checkKMeans(name string, x []float32, k int, w []float32) error {
	switch {
	case len(x) == 0:
		return fmt.Errorf("codebook: k-means %s: %w: no values", name, ErrArg)
	case k < 1 || k > maxEntries:
		return fmt.Errorf("codebook: k-means %s: %w: k = %d, want 1 to %d", name, ErrArg, k, maxEntries)
	case w != nil && len(w) != len(x):
		return fmt.Errorf("codebook: k-means %s: %w: %d weights for %d values", name, ErrArg, len(w), len(x))
	}
	for i, v := range x {
		if v != v {
			return &TableError{Table: name, Index: i, Value: v, Err: fmt.Errorf("%w in the data", ErrNaN)}
		}
		if math.IsInf(float64(v), 0) {
			return &TableError{Table: name, Index: i, Value: v, Err: fmt.Errorf("%w in the data", ErrInf)}
		}
	}
	if w != nil {
		pos := false
		for i, v := range w {
			if !(v >= 0) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("codebook: k-means %s: %w: weight %d is %v, want finite and not negative", name, ErrArg, i, v)
			}
			pos = pos || v > 0
		}
		if !pos {
			return fmt.Errorf("codebook: k-means %s: %w: every weight is zero", name, ErrArg)
		}
	}
	return nil
}

// point is one distinct value with its total weight.
type point struct {
	x float32
	w float64
}

// kmeans runs on checked input.
func kmeans(name string, x []float32, k int, o KMeansOptions, w []float32) (*KMeansResult, error) {
	pts := distinctPoints(x, w)
	maxIter := o.MaxIter
	if maxIter <= 0 {
		maxIter = defaultMaxIter
	}
	var cent []float32
	if len(pts) <= k {
		for _, p := range pts {
			cent = append(cent, p.x)
		}
	} else if o.Init == InitQuantile {
		cent = quantileInit(pts, k)
	} else {
		cent = plusPlusInit(pts, k, o.Seed)
	}
	cent = dedupe(cent)
	res := &KMeansResult{}
	assign := assignment(pts, cent, o.Tie)
	sse := clusterSSE(pts, cent, assign)
	res.History = append(res.History, sse)
	for res.Iterations < maxIter {
		next := slices.Clone(cent)
		for j := range next {
			lo, hi := assign[j], assign[j+1]
			if lo == hi {
				continue // empty: stays
			}
			var sw, swx float64
			for _, p := range pts[lo:hi] {
				sw += p.w
				swx += p.w * float64(p.x)
			}
			if sw > 0 {
				next[j] = float32(swx / sw)
			}
		}
		next = dedupe(next)
		na := assignment(pts, next, o.Tie)
		nsse := clusterSSE(pts, next, na)
		if !(nsse < sse) {
			break // no progress: keep the current centroids
		}
		res.Iterations++
		cent, assign, sse = next, na, nsse
		res.History = append(res.History, sse)
	}
	t, err := NewTable(name, cent, &TableOptions{Tie: o.Tie})
	if err != nil {
		return nil, err
	}
	res.Table, res.SSE = t, sse
	return res, nil
}

// distinctPoints returns the distinct values of x, ascending (−0 as +0),
// with their summed weights (1 each without weights).
func distinctPoints(x, w []float32) []point {
	all := make([]point, len(x))
	for i, v := range x {
		all[i] = point{v + 0, 1}
		if w != nil {
			all[i].w = float64(w[i])
		}
	}
	slices.SortFunc(all, func(a, b point) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	var pts []point
	for _, a := range all {
		if n := len(pts); n > 0 && pts[n-1].x == a.x {
			pts[n-1].w += a.w
			continue
		}
		pts = append(pts, a)
	}
	// Values of zero weight do not pull centroids; keep them only if nothing
	// else is left.
	kept := slices.DeleteFunc(slices.Clone(pts), func(p point) bool { return p.w == 0 })
	if len(kept) > 0 {
		return kept
	}
	return pts
}

// dedupe sorts the centroids and drops equal ones.
func dedupe(c []float32) []float32 {
	slices.Sort(c)
	return slices.Compact(c)
}

// assignment returns, for ascending centroids c, the range of points of each:
// centroid j owns pts[a[j]:a[j+1]], split at the bounds a table of c uses.
func assignment(pts []point, c []float32, tie Tie) []int {
	a := make([]int, len(c)+1)
	a[len(c)] = len(pts)
	if len(c) > 1 {
		t, err := NewTable("", c, &TableOptions{Tie: tie})
		if err != nil {
			panic(err) // c is ascending, distinct and finite
		}
		for j, b := range t.bounds {
			a[j+1] = sort.Search(len(pts), func(i int) bool { return pts[i].x >= b })
		}
	}
	return a
}

// clusterSSE is the weighted squared error of the points against the
// centroids they are assigned to.
func clusterSSE(pts []point, c []float32, a []int) float64 {
	var s float64
	for j, cj := range c {
		for _, p := range pts[a[j]:a[j+1]] {
			d := float64(p.x) - float64(cj)
			s += p.w * d * d
		}
	}
	return s
}

// quantileInit puts centroid j at the weighted quantile (j + ½)/k.
func quantileInit(pts []point, k int) []float32 {
	var total float64
	for _, p := range pts {
		total += p.w
	}
	c := make([]float32, 0, k)
	i := 0
	var cum float64
	for j := range k {
		q := (float64(j) + 0.5) / float64(k) * total
		for i < len(pts)-1 && cum+pts[i].w <= q {
			cum += pts[i].w
			i++
		}
		c = append(c, pts[i].x)
	}
	return c
}

// plusPlusInit is k-means++ over the weighted distinct points.
func plusPlusInit(pts []point, k int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	draw := func(weight func(i int) float64) int {
		var total float64
		for i := range pts {
			total += weight(i)
		}
		if total == 0 {
			return -1
		}
		u := r.Float64() * total
		var cum float64
		for i := range pts {
			cum += weight(i)
			if u < cum {
				return i
			}
		}
		return len(pts) - 1
	}
	first := draw(func(i int) float64 { return pts[i].w })
	c := []float32{pts[first].x}
	d2 := make([]float64, len(pts))
	for i, p := range pts {
		d := float64(p.x) - float64(c[0])
		d2[i] = d * d
	}
	for len(c) < k {
		i := draw(func(i int) float64 { return pts[i].w * d2[i] })
		if i < 0 {
			break // every point sits on a centroid
		}
		c = append(c, pts[i].x)
		for j, p := range pts {
			d := float64(p.x) - float64(pts[i].x)
			d2[j] = min(d2[j], d*d)
		}
	}
	return c
}
