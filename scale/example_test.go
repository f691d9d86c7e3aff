package scale_test

import (
	"errors"
	"fmt"

	"github.com/tensorcast-go/tensorcast/scale"
)

func ExampleParse() {
	// NVFP4: an unsigned e4m3 scale per 16 elements under one fp32 tensor scale.
	s, err := scale.Parse("multi_ue4m3_float32_t16")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Scale.Name(), s.TensorScale.Name(), s.Tiles[0].Size, s.IsMultiscale())

	// MX9-style: e8m0 per 16, 1-bit exponent offsets per subtile of 2.
	s = scale.MustParse("E8M0_t16s2o1")
	fmt.Println(s, s.IsExponent(), s.IsSubtile())

	// Three number specs without multi_: tensor scale, scale, zero (TensorCast's order).
	s = scale.MustParse("float32_float16_int8_t32")
	fmt.Println(s, s.Zero.Name())

	_, err = scale.Parse("e8m0_t3")
	fmt.Println(err)
	// Output:
	// ue4m3 float32 16 true
	// float8_e8m0fnu_t16s2o1 true true
	// multi_float16_int8_float32_t32 int8
	// scale: bad spec "e8m0_t3": segment "t3": tile size 3 is not 0 or a power of two in 2..1024
}

// Modes are named as Mode.String writes them, or by TensorCast's "max" and
// "auto"; another name matches ErrMode.
func ExampleParseMode() {
	for _, s := range []string{"rceil", "auto", "nearest"} {
		m, err := scale.ParseMode(s)
		fmt.Println(m, errors.Is(err, scale.ErrMode))
	}
	// Output:
	// rceil false
	// midmax false
	// floor true
}

// A spec that breaks the grammar is a *ParseError naming it.
func ExampleParseError() {
	_, err := scale.Parse("e8m0_t16_t16_t16")
	var pe *scale.ParseError
	fmt.Println(errors.As(err, &pe), pe.Spec)
	// Output:
	// true e8m0_t16_t16_t16
}
