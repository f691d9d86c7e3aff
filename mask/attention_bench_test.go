package mask

import "testing"

// BenchmarkAttentionPairwise builds the boolean mask of 4 rows of 2048
// tokens, up to 8 packed sequences each, causal with a sliding window
// (fresh values, so nothing is cached). Bytes are the mask's packed bits.
func BenchmarkAttentionPairwise(b *testing.B) {
	base, err := random(1, randomOptions{Batch: 4, Len: 2048, MaxSegments: 8})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * 2048 * 2048 / 8)
	for b.Loop() {
		a, _ := base.Causal(nil)
		a, _ = a.SlidingWindow(511, 0, nil)
		if _, err := a.Pairwise(0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAttentionBiasBFloat16 is the bfloat16 bias of the same mask.
func BenchmarkAttentionBiasBFloat16(b *testing.B) {
	a, err := random(1, randomOptions{Batch: 4, Len: 2048, MaxSegments: 8})
	if err != nil {
		b.Fatal(err)
	}
	a, _ = a.Causal(nil)
	b.SetBytes(4 * 2048 * 2048 * 2)
	for b.Loop() {
		if _, _, err := a.BiasBFloat16(BiasOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
