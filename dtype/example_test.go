package dtype_test

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/dtype"
)

func ExampleParse() {
	f, err := dtype.Parse("e4m3fn")
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Name(), f.Bits(), f.MaxFinite(), f.Emax())

	_, err = dtype.Parse("e4m3fm")
	fmt.Println(err)
	// Output:
	// float8_e4m3fn 8 448 8
	// dtype: "e4m3fm": unknown format name (closest known: e4m3fn, e4m3)
}

func ExampleFormat_EncodeWith() {
	fp4 := dtype.MustParse("e2m1")
	for _, mode := range []dtype.Rounding{dtype.RoundEven, dtype.RoundAway, dtype.RoundZero} {
		code := fp4.EncodeWith(2.5, dtype.Options{Rounding: mode})
		fmt.Printf("%#x=%g\n", code, fp4.Decode(code))
	}
	e4m3 := dtype.MustParse("float8_e4m3fn")
	fmt.Printf("%#x %#x\n", e4m3.Encode(1000), e4m3.EncodeWith(1000, dtype.Options{Overflow: dtype.OverflowIEEE}))
	// Output:
	// 0x4=2
	// 0x5=3
	// 0x4=2
	// 0x7e 0x7f
}

func ExampleEncodeSlice() {
	bf16 := dtype.MustParse("bfloat16")
	src := []float32{1, 0.1, -3.14159, 65504}
	codes := make([]uint16, len(src))
	dtype.EncodeSlice(bf16, codes, src, dtype.Options{})
	back := make([]float32, len(src))
	dtype.DecodeSlice(bf16, back, codes)
	fmt.Printf("%#04x\n%v\n", codes, back)
	// Output:
	// [0x3f80 0x3dcd 0xc049 0x4780]
	// [1 0.100097656 -3.140625 65536]
}
