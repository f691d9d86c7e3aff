package mask

import (
	"fmt"
	"strings"
)

// VisualizeOptions selects the slice an [Attention.Visualize] picture shows
// and how. The zero value draws batch row 0 (head 0) in Unicode, at most 64
// cells wide and 64 high, with segment IDs on the edges.
type VisualizeOptions struct {
	// Batch and Head select the [Q,K] slice (Head 0 when there are no heads).
	Batch, Head int
	// MaxWidth and MaxHeight bound the picture's cells across (keys) and
	// down (queries); 0 means 64. A mask larger than that is downsampled:
	// each cell stands for a block of ⌈K/MaxWidth⌉ keys by ⌈Q/MaxHeight⌉
	// queries.
	MaxWidth, MaxHeight int
	// ASCII draws '#' (every pair of the cell attends), '+' (some do) and '.'
	// (none does) instead of '█', '▒' and '·'.
	ASCII bool
	// NoSegments leaves out the segment IDs on the edges.
	NoSegments bool
}

// Visualize draws the [Q,K] slice of batch row o.Batch (and head o.Head) of
// the pairwise mask as text, one line per query (or block of queries), one
// character per key (or block of keys): '█' where every pair of the cell
// attends, '▒' where some do, '·' where none does ('#', '+', '.' in ASCII).
// The first line names the slice and the block size. Unless o.NoSegments,
// the next line holds the key segment IDs, one character per column, and
// each row starts with its query segment ID and a space: IDs 0-9, then a-z
// for 10-35 and A-Z for 36-61 (larger IDs wrap around), '-' for padding and
// '*' for a block that holds several segments. A pairwise mask without a
// segment structure is drawn without IDs. An o.Batch or o.Head out of range,
// or a negative size, is an *InputError.
func (a *Attention) Visualize(o VisualizeOptions) (string, error) {
	if err := a.checkVisualize(o); err != nil {
		return "", err
	}
	if o.MaxWidth == 0 {
		o.MaxWidth = 64
	}
	if o.MaxHeight == 0 {
		o.MaxHeight = 64
	}
	m, err := a.cache().pair.get(a.computePairwise)
	if err != nil {
		return "", err
	}
	p := newPicture(a, o, m.bits)
	var sb strings.Builder
	fmt.Fprintf(&sb, "batch %d", o.Batch)
	if a.heads > 0 {
		fmt.Fprintf(&sb, " head %d", o.Head)
	}
	fmt.Fprintf(&sb, ": %d queries × %d keys", p.nq, p.nk)
	if p.bw > 1 || p.bh > 1 {
		fmt.Fprintf(&sb, ", %d×%d per cell", p.bh, p.bw)
	}
	sb.WriteByte('\n')

	var qlab, klab []byte
	if !o.NoSegments {
		if s, err := a.segments(FormSegments); err == nil {
			qlab = labels(s[0][o.Batch*p.nq:(o.Batch+1)*p.nq], p.bh)
			klab = labels(s[1][o.Batch*p.nk:(o.Batch+1)*p.nk], p.bw)
		}
	}
	if klab != nil {
		sb.WriteString("  ")
		sb.Write(klab)
		sb.WriteByte('\n')
	}
	for r := range ceilDiv(p.nq, p.bh) {
		if qlab != nil {
			sb.WriteByte(qlab[r])
			sb.WriteByte(' ')
		}
		p.writeRow(&sb, r)
		sb.WriteByte('\n')
	}
	return sb.String(), nil
}

// checkVisualize checks o's batch row and head against a's, and that its
// sizes are not negative.
func (a *Attention) checkVisualize(o VisualizeOptions) error {
	fail := func(arg string, v int, reason string) error {
		return &InputError{Op: "visualize", Arg: arg, Index: -1, Value: int64(v), Reason: reason}
	}
	switch {
	case o.Batch < 0 || o.Batch >= a.batch:
		return fail("Batch", o.Batch, fmt.Sprintf("outside [0, %d)", a.batch))
	case o.Head < 0 || o.Head >= max(a.heads, 1):
		return fail("Head", o.Head, fmt.Sprintf("outside [0, %d)", max(a.heads, 1)))
	case o.MaxWidth < 0:
		return fail("MaxWidth", o.MaxWidth, "negative")
	case o.MaxHeight < 0:
		return fail("MaxHeight", o.MaxHeight, "negative")
	}
	return nil
}

// picture is the [Q,K] slice Visualize draws: nq × nk bits of the pairwise
// mask from bit base on, in cells of bh queries by bw keys.
type picture struct {
	bits   []byte
	base   int
	nq, nk int
	bw, bh int
	glyph  [3]string // for a cell where none, some and every pair attends
}

// newPicture returns the picture of a's pairwise mask bits that o asks for,
// o's sizes set.
func newPicture(a *Attention, o VisualizeOptions, bits []byte) *picture {
	nq, nk := a.nq, a.nk
	p := &picture{
		bits:  bits,
		base:  (o.Batch*max(a.heads, 1) + o.Head) * nq * nk,
		nq:    nq,
		nk:    nk,
		bw:    max(ceilDiv(nk, o.MaxWidth), 1),
		bh:    max(ceilDiv(nq, o.MaxHeight), 1),
		glyph: [3]string{"·", "▒", "█"},
	}
	if o.ASCII {
		p.glyph = [3]string{".", "+", "#"}
	}
	return p
}

// writeRow writes the cells of row r, one glyph each.
func (p *picture) writeRow(sb *strings.Builder, r int) {
	i0, i1 := r*p.bh, min((r+1)*p.bh, p.nq)
	for c := range ceilDiv(p.nk, p.bw) {
		j0, j1 := c*p.bw, min((c+1)*p.bw, p.nk)
		n := 0
		for i := i0; i < i1; i++ {
			n += countRange(p.bits, p.base+i*p.nk+j0, p.base+i*p.nk+j1)
		}
		switch {
		case n == 0:
			sb.WriteString(p.glyph[0])
		case n == (i1-i0)*(j1-j0):
			sb.WriteString(p.glyph[2])
		default:
			sb.WriteString(p.glyph[1])
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

const idChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// labels gives each block of size tokens of ids one character: its segment
// ID, '-' for padding, '*' for a block of several.
func labels(ids []int32, size int) []byte {
	out := make([]byte, 0, ceilDiv(len(ids), size))
	for lo := 0; lo < len(ids); lo += size {
		block := ids[lo:min(lo+size, len(ids))]
		c := byte('-')
		if block[0] >= 0 {
			c = idChars[block[0]%int32(len(idChars))]
		}
		for _, v := range block[1:] {
			if v != block[0] {
				c = '*'
				break
			}
		}
		out = append(out, c)
	}
	return out
}
