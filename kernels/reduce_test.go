package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAbsMaxBits(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	tests := []struct {
		name string
		in   []float32
		keep []bool
		want float32 // compared as bits; NaN means "a NaN"
	}{
		{"empty", nil, nil, 0},
		{"negative max", []float32{1, -7, 3, 6.5, 2}, nil, 7},
		{"neg zero", []float32{-0.0, 0}, nil, 0},
		{"tail", []float32{1, 2, 3, 4, -9}, nil, 9},
		{"subnormal", []float32{math.SmallestNonzeroFloat32, 0}, nil, math.SmallestNonzeroFloat32},
		{"inf", []float32{1, -inf, 2}, nil, inf},
		{"nan beats inf", []float32{inf, nan, 2}, nil, nan},
		{"masked out max", []float32{1, -7, 3}, []bool{true, false, true}, 3},
		{"masked out nan", []float32{nan, 2}, []bool{false, true}, 2},
		{"all masked", []float32{5, 6}, []bool{false, false}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got uint32
			if tc.keep == nil {
				got = AbsMaxBits(tc.in)
				keep := make([]bool, len(tc.in))
				for i := range keep {
					keep[i] = true
				}
				assert.Equal(t, got, AbsMaxBitsMasked(tc.in, keep), "masked with all kept")
			} else {
				got = AbsMaxBitsMasked(tc.in, tc.keep)
			}
			if tc.want != tc.want {
				assert.Greater(t, got, uint32(0x7f800000))
				return
			}
			assert.Equal(t, math.Float32bits(tc.want), got)
		})
	}
}

func TestMinMax(t *testing.T) {
	nan := float32(math.NaN())
	lo, hi, nf := MinMax([]float32{0.5, -1, 2, 0.25}, nil)
	assert.Equal(t, []any{float32(-1), float32(2), false}, []any{lo, hi, nf})
	lo, hi, nf = MinMax([]float32{3, nan, -2}, []bool{true, true, false})
	assert.Equal(t, []any{float32(3), float32(3), true}, []any{lo, hi, nf})
	lo, hi, nf = MinMax([]float32{nan}, nil)
	assert.Equal(t, []any{float32(0), float32(0), true}, []any{lo, hi, nf})
	lo, hi, nf = MinMax(nil, nil)
	assert.Equal(t, []any{float32(0), float32(0), false}, []any{lo, hi, nf})
}
