// Command nm generates the N:M selection kernels of package kernels:
// nm_amd64.s and the stub declarations in nm_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./nm -out ../nm_amd64.s -stubs ../nm_stubs_amd64.go -pkg kernels
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		for _, m := range []int{2, 4, 8, 16} {
			selectNM(m)
		}
	})
}

// rotation returns, for groups of m lanes, the VPERMD index that gives lane
// p of each group the element s places further in its group (cyclically),
// and the addend that is 1 where that element lies before p (it outranks p
// on equal keys: the lower index wins a tie) and 0 where it lies after.
func rotation(m, s int) (idx, add []uint32) {
	for l := range 16 {
		g, p := l/m*m, l%m
		q := (p + s) % m
		idx = append(idx, uint32(g+q))
		bump := uint32(0)
		if q < p {
			bump = 1
		}
		add = append(add, bump)
	}
	return idx, add
}

// selectNM writes selectNM<m>AVX512 for groups of m (2, 4, 8, 16) floats.
func selectNM(m int) {
	name := fmt.Sprintf("selectNM%dAVX512", m)
	TEXT(name, NOSPLIT, "func(dst []byte, src []float32, n int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s is the AVX-512 kernel of selectNMGo for groups of %d, the loop", name, m),
		"",
		fmt.Sprintf("\tfor g := 0; g*%d < len(src); g++ {", m),
		"\t\tfor i in the group: rank[i] = #{j in the group: key[j] > key[i], or key[j] = key[i] and j < i}",
		"\t\tbit i of the mask = rank[i] < n",
		"\t}",
		"",
		"over len(src)/32 runs of 32 floats (two vectors): the keys (float bits without the sign)",
		fmt.Sprintf("of each group rotated %d times within the group (VPERMD), 1 added where the rotated", m-1),
		"element lies before the lane's (so that an equal key outranks it), compared (VPCMPUD, the keys",
		"are below 2^31), each win counted into the lane's rank, and rank < n stored as the mask (KMOVW).")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	Load(Param("n"), RAX)
	SHRQ(U8(5), RCX)
	JZ(LabelRef(name + "_done"))
	VPBROADCASTD(EAX, Z29)
	gen.Broadcast32(0x7fffffff, Z31, RAX, X31)
	gen.Broadcast32(1, Z30, RAX, X30)
	// The rotations' indexes and addends: in registers Z0… for up to 7
	// rotations, else read from their tables.
	type rot struct{ idx, add Op }
	var rots []rot
	for s := 1; s < m; s++ {
		idx, add := rotation(m, s)
		ti := gen.Table(fmt.Sprintf("nm%dIdx%d", m, s), idx)
		ta := gen.Table(fmt.Sprintf("nm%dAdd%d", m, s), add)
		if m <= 8 {
			ri, ra := gen.Z(2*(s-1)), gen.Z(2*(s-1)+1)
			VMOVDQU32(ti, ri)
			VMOVDQU32(ta, ra)
			rots = append(rots, rot{ri, ra})
		} else {
			rots = append(rots, rot{ti, ta})
		}
	}
	Label(name + "_loop")
	type lane struct {
		key, r, t VecPhysical
		k         Register
	}
	ls := []lane{{Z16, Z17, Z18, K1}, {Z19, Z20, Z21, K2}}
	for j, l := range ls {
		VPANDD(Mem{Base: RSI, Disp: 64 * j}, Z31, l.key)
		VPXORD(l.r, l.r, l.r)
	}
	for _, ro := range rots {
		for _, l := range ls {
			if ri, ok := ro.idx.(VecPhysical); ok {
				VPERMD(l.key, ri, l.t)
			} else {
				VMOVDQU32(ro.idx, l.t)
				VPERMD(l.key, l.t, l.t)
			}
			VPADDD(ro.add, l.t, l.t)
			VPCMPUD(U8(6), l.key, l.t, l.k) // the other element outranks the lane
			VPADDD(Z30, l.r, l.k, l.r)
		}
	}
	for j, l := range ls {
		VPCMPUD(U8(1), Z29, l.r, l.k) // rank < n
		KMOVW(l.k, Mem{Base: RDI, Disp: 2 * j})
	}
	ADDQ(U8(128), RSI)
	ADDQ(U8(4), RDI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	gen.End(false)
}
