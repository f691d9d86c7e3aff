package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// tiers returns every tier this CPU and build support, lowest first.
func tiers() []tier {
	var ts []tier
	for t := tierGeneric; t <= hwTier; t++ {
		ts = append(ts, t)
	}
	return ts
}

// forEachTier runs f as a subtest once per tier the machine has, with the
// kernels forced to that tier.
func forEachTier(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, tr := range tiers() {
		t.Run(tr.String(), func(t *testing.T) {
			defer useTier(tr)()
			f(t)
		})
	}
}

// forEachStore runs f as a subtest with ordinary stores for outputs below
// the non-temporal threshold (the default), and with the non-temporal kernels
// forced at every size.
func forEachStore(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	t.Run("cached", f)
	t.Run("nontemporal", func(t *testing.T) {
		defer alwaysNonTemporal()()
		f(t)
	})
}

// edgeBits returns float32 bits drawn to hit the special cases often: NaNs
// with random payloads and signs, infinities, zeros, subnormals, values next to
// the largest finite, and otherwise any bit pattern.
func edgeBits(r *rand.Rand) uint32 {
	s := r.Uint32() & 0x80000000
	switch r.IntN(12) {
	case 0:
		return s | 0x7f800000 | (1 + r.Uint32N(0x7fffff)) // NaN, quiet or signalling
	case 1:
		return s | 0x7f800000
	case 2:
		return s
	case 3:
		return s | r.Uint32N(0x800000) // subnormal
	case 4:
		return s | (0x7f7fffff - r.Uint32N(0x20000)) // near max finite
	}
	return r.Uint32()
}

func edgeFloats(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = math.Float32frombits(edgeBits(r))
	}
	return s
}

// testLengths are the slice lengths the differential tests use: every length
// up to three 512-bit vectors of 64 floats plus one, and lengths around whole
// groups of 16 blocks of 32.
func testLengths() []int {
	var ns []int
	for n := 0; n <= 3*64+1; n++ {
		ns = append(ns, n)
	}
	for _, n := range []int{255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 3*512 + 17, 16*32*5 + 31, 4099} {
		ns = append(ns, n)
	}
	return ns
}

// TestTierEnv runs this test binary again with TCAST_KERNELS set to each tier
// name and checks the tier the kernels chose at start-up: the named one, or
// the CPU's best when that is lower.
func TestTierEnv(t *testing.T) {
	if os.Getenv("TCAST_KERNELS_TEST_CHILD") == "1" {
		fmt.Printf("tier=%s\n", Tier())
		return
	}
	for _, name := range []string{"generic", "avx2", "avx512", ""} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTierEnv$")
		cmd.Env = append(os.Environ(), "TCAST_KERNELS_TEST_CHILD=1", "TCAST_KERNELS="+name)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		want := hwTier
		if name != "" {
			want = min(hwTier, capTier(tierAVX512, name))
		}
		require.Contains(t, string(out), "tier="+want.String()+"\n", "TCAST_KERNELS=%q", name)
	}
}

func TestTierCap(t *testing.T) {
	tests := []struct {
		hw   tier
		env  string
		want tier
	}{
		{tierAVX512, "", tierAVX512},
		{tierAVX512, "generic", tierGeneric},
		{tierAVX512, " AVX2 ", tierAVX2},
		{tierAVX512, "avx512", tierAVX512},
		{tierAVX2, "avx512", tierAVX2},
		{tierGeneric, "avx2", tierGeneric},
		{tierAVX2, "sse9", tierAVX2},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, capTier(tc.hw, tc.env), "hw %v env %q", tc.hw, tc.env)
	}
	require.Contains(t, []string{"generic", "avx2", "avx512"}, Tier())
}

// requireSame fails t at the first index where got differs from want (both
// compared as bits by the caller's choice of element type), naming it and the
// number of differences; unlike require.Equal it stays fast on long slices.
func requireSame[T ~uint16 | ~uint32](t *testing.T, want, got []T, format string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), append([]any{format}, args...)...)
	first, diffs := -1, 0
	for i := range want {
		if want[i] != got[i] {
			if first < 0 {
				first = i
			}
			diffs++
		}
	}
	if first >= 0 {
		t.Fatalf("%s: %d of %d differ, first at %d: got %#x, want %#x",
			fmt.Sprintf(format, args...), diffs, len(want), first, got[first], want[first])
	}
}
