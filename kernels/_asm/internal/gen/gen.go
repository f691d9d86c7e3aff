// Package gen holds the helpers the kernel generators share: the program
// frame, registers by number, constants and tables, the transpose trees of
// block maxima, and loop scaffolding.
//
// It imports avo's packages by name (the generators dot-import them), so
// that its own names may be short without clashing with avo's.
package gen

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// BuildConstraint is the build constraint of every generated file: the
// assembly is amd64 only, and the purego tag turns it off.
const BuildConstraint = "amd64,!purego"

// Main runs a generator: it sets the build constraint, lets body emit the
// tables and kernels, and writes the files avo's flags (-out, -stubs, -pkg)
// name.
func Main(body func()) {
	build.ConstraintExpr(BuildConstraint)
	body()
	build.Generate()
}

// Broadcast32 fills the vector register v (an xmm, ymm or zmm) with the 32-bit
// constant c through the general-purpose register gp and the xmm register x.
func Broadcast32(c uint32, v reg.VecPhysical, gp reg.GPPhysical, x reg.VecPhysical) {
	build.MOVL(operand.U32(c), gp.As32())
	build.VMOVD(gp.As32(), x.AsX())
	build.VPBROADCASTD(x.AsX(), v)
}

// Broadcast16 fills v with the 16-bit value held in the low half of gp.
func Broadcast16(v reg.VecPhysical, gp reg.GPPhysical, x reg.VecPhysical) {
	build.VMOVD(gp.As32(), x.AsX())
	build.VPBROADCASTW(x.AsX(), v)
}

// Table emits a read-only table of 32-bit words and returns it.
func Table(name string, words []uint32) operand.Mem {
	m := build.GLOBL(name, attr.RODATA|attr.NOPTR)
	for i, w := range words {
		build.DATA(4*i, operand.U32(w))
	}
	return m
}

// Bytes emits a read-only table of bytes, a multiple of 4 long, as
// little-endian 32-bit words, and returns it.
func Bytes(name string, b []byte) operand.Mem {
	if len(b)%4 != 0 {
		panic(fmt.Sprintf("gen: table %s: %d bytes, not a multiple of 4", name, len(b)))
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
	}
	return Table(name, w)
}

// Consts emits read-only 32-bit constants the first time a kernel asks for
// them, each value once, in tables named after Prefix and the value.
type Consts struct {
	Prefix      string
	words, vecs map[uint32]operand.Mem
}

// Word returns a table holding v once (for embedded-broadcast operands),
// named Prefix + "K" + v in hex.
func (c *Consts) Word(v uint32) operand.Mem {
	if m, ok := c.words[v]; ok {
		return m
	}
	m := Table(fmt.Sprintf("%sK%08x", c.Prefix, v), []uint32{v})
	if c.words == nil {
		c.words = map[uint32]operand.Mem{}
	}
	c.words[v] = m
	return m
}

// Vec returns a table holding eight copies of v (a ymm operand, or a zmm
// embedded broadcast of its first word), named Prefix + "V" + v in hex.
func (c *Consts) Vec(v uint32) operand.Mem {
	if m, ok := c.vecs[v]; ok {
		return m
	}
	m := Table(fmt.Sprintf("%sV%08x", c.Prefix, v), []uint32{v, v, v, v, v, v, v, v})
	if c.vecs == nil {
		c.vecs = map[uint32]operand.Mem{}
	}
	c.vecs[v] = m
	return m
}
