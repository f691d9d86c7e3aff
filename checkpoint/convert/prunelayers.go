package convert

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// pruneLayers drops the blocks of GGUF.PruneLayers from ds and numbers the
// blocks after them down, as llama-quantize --prune-layers does: a block
// below the first pruned one keeps its number, every later block kept
// takes the next free one. renamed gets the new names (so that Verify
// pairs them with the input's), and <arch>.block_count the blocks left.
func (p *plan) pruneLayers(ds []*decision, renamed map[string]string) ([]*decision, error) {
	prune := p.opts.GGUF.PruneLayers
	if len(prune) == 0 {
		return ds, nil
	}
	g := p.in.GGUF()
	if g == nil || !p.modelFile() {
		return nil, &OptionError{Option: "GGUF.PruneLayers", Err: ErrGGUFInputOnly,
			Reason: "drops blocks (blk.N) of a llama.cpp model file read from GGUF, and the input is " +
				"no such file; convert it to GGUF first",
			Fixes: []Fix{unset("GGUF.PruneLayers")}}
	}
	blocks := blockCount(ds)
	for _, n := range prune {
		if n < 0 || n >= blocks {
			return nil, &OptionError{Option: "GGUF.PruneLayers", Value: strconv.Itoa(n),
				Reason: fmt.Sprintf("is not a block of the model, whose blocks are 0 to %d", blocks-1)}
		}
	}
	kept := newBlockNumbers(blocks, prune)
	if len(kept) == 0 {
		return nil, &OptionError{Option: "GGUF.PruneLayers",
			Reason: fmt.Sprintf("would drop all %d blocks of the model", blocks)}
	}
	var out []*decision
	for _, d := range ds {
		b, rest, ok := blockOf(d.info.Name)
		if !ok {
			out = append(out, d)
			continue
		}
		nb, keep := kept[b]
		if !keep {
			p.dropped = append(p.dropped, dropped{info: d.info, why: fmt.Sprintf("block %d pruned (GGUF.PruneLayers)", b)})
			delete(renamed, d.info.Name)
			continue
		}
		if nb != b {
			delete(renamed, d.info.Name)
			d.info.Name = "blk." + strconv.Itoa(nb) + "." + rest
			renamed[d.info.Name] = d.source
		}
		out = append(out, d)
	}
	arch := g.Architecture()
	p.ggufKV = gguf.SetKV(p.ggufKV, gguf.KV{Key: arch + ".block_count", Value: gguf.Uint32(uint32(len(kept)))})
	return out, nil
}

// newBlockNumbers maps each block of 0..blocks-1 that prune does not name
// to its number once the pruned ones are gone.
func newBlockNumbers(blocks int, prune []int) map[int]int {
	m := map[int]int{}
	for b := range blocks {
		if !slices.Contains(prune, b) {
			m[b] = len(m)
		}
	}
	return m
}

// blockCount returns one more than the highest block number among ds's
// names.
func blockCount(ds []*decision) int {
	n := 0
	for _, d := range ds {
		if b, _, ok := blockOf(d.info.Name); ok {
			n = max(n, b+1)
		}
	}
	return n
}

// blockOf splits a GGUF name "blk.N.rest" into N and rest.
func blockOf(name string) (int, string, bool) {
	s, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return 0, "", false
	}
	num, rest, ok := strings.Cut(s, ".")
	b, err := strconv.Atoi(num)
	if !ok || err != nil || b < 0 {
		return 0, "", false
	}
	return b, rest, true
}
