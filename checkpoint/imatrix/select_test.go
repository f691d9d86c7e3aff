package imatrix

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelect(t *testing.T) {
	m, err := Read("testdata/golden.imatrix.gguf")
	require.NoError(t, err)
	all := []string{"blk.0.attn_k.weight", "blk.0.ffn_down_exps.weight", "output.weight"}
	for _, tc := range []struct {
		name             string
		include, exclude []string
		want             []string
	}{
		{"nothing asked", nil, nil, all},
		{"exclude substring", nil, []string{"attn_k"}, all[1:]},
		{"exclude two", nil, []string{"output", "ffn_down"}, all[:1]},
		{"include", []string{"blk.0."}, nil, all[:2]},
		{"include and exclude", []string{"blk.0."}, []string{"exps"}, all[:1]},
		{"no pattern syntax", []string{"blk.*"}, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := m.Select(tc.include, tc.exclude)
			assert.Equal(t, tc.want, s.Names())
			for _, n := range all {
				assert.Equal(t, slices.Contains(tc.want, n), s.Has(n), n)
			}
			count, ok := s.Metadata()[2].Value.Uint()
			require.True(t, ok)
			assert.Equal(t, uint64(len(tc.want)), count, "entries_count")
		})
	}
	assert.Len(t, m.Entries, 3, "the original keeps its entries")
}
