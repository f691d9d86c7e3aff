package kernels_test

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// A round trip through the codec table: 32 values quantized into one ggml
// Q8_0 block (a float16 scale d = amax/127 and 32 int8 codes) and decoded:
// d = 2/127 is stored as the float16 1032·2^−16, so −2 comes back as
// −127·d and 1.875 as 119·d.
func ExampleLookupBlock() {
	c, ok := kernels.LookupBlock("Q8_0")
	if !ok {
		panic("no Q8_0")
	}
	src := make([]float32, c.BlockLen)
	for i := range src {
		src[i] = float32(i-16) / 8
	}
	blocks := make([]byte, len(src)/c.BlockLen*c.BlockBytes)
	c.Quantize(blocks, src, nil, nil)
	got := make([]float32, len(src))
	c.Dequantize(got, blocks)
	fmt.Println(c.Name, c.BlockLen, "elements in", c.BlockBytes, "bytes")
	fmt.Println(src[0], src[1], src[31])
	fmt.Println(got[0], got[1], got[31])
	// Output:
	// Q8_0 32 elements in 34 bytes
	// -2 -1.875 1.875
	// -1.9998779 -1.8739014 1.8739014
}

// MXFP4 through the codec table: one E8M0 scale per 32 elements and E2M1
// codes packed two to a byte, each plane of its own.
func ExampleLookupScaled() {
	c, _ := kernels.LookupScaled("MXFP4")
	src := make([]float32, c.Block)
	for i := range src {
		src[i] = float32(i) / 4
	}
	p := kernels.Planes{
		Codes:  make([]byte, kernels.PackedLen(len(src), uint(c.Bits))),
		Scales: make([]byte, len(src)/c.Block),
	}
	c.Quantize(p, src)
	got := make([]float32, len(src))
	c.Dequantize(got, p)
	fmt.Printf("scale 2^%d, %d code bytes\n", int(p.Scales[0])-127, len(p.Codes))
	fmt.Println(src[5], src[13], src[31])
	fmt.Println(got[5], got[13], got[31])
	// Output:
	// scale 2^0, 16 code bytes
	// 1.25 3.25 7.75
	// 1 3 6
}

// Tier names the instruction set the kernels run on; TCAST_KERNELS=generic
// in the environment, or the purego build tag, makes it "generic".
func ExampleTier() {
	fmt.Println("kernels:", kernels.Tier())
}

// The random bits of a stochastic rounding stream are the high half of a
// SplitMix64 step of the seed: SplitMix64 seeded with 0 starts
// 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4. RandFor gives them to
// RoundStochastic only.
func ExampleRand32() {
	fmt.Printf("%#x %#x\n", kernels.Rand32(0, 0), kernels.Rand32(0, 1))
	fmt.Printf("%#x %#x\n", kernels.RandFor(kernels.RoundStochastic, 0, 0),
		kernels.RandFor(kernels.RoundEven, 0, 0))
	// Output:
	// 0xe220a839 0x6e789e6a
	// 0xe220a839 0x0
}
