package rotate

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: Parse never panics, refuses with an error matching ErrSyntax,
// and what it accepts prints back (String) to the same rotation.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "none", "hadamard", "hadamard:32", "Hadamard:65536", "hadamard:0", "hadamard:-2",
		"hadamard:1e3", "none:4", " hadamard:16 ", "givens", "hadamard:131072", "hadamard:9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			require.True(t, errors.Is(err, ErrSyntax), "%q: %v", s, err)
			require.True(t, r.IsZero(), "%q", s)
			return
		}
		back, err := Parse(r.String())
		require.NoError(t, err, "%q prints as %q", s, r.String())
		require.Equal(t, r, back, "%q", s)
		if !r.IsZero() && r.Block != 0 {
			require.True(t, validBlock(r.Block), "%q", s)
		}
	})
}
