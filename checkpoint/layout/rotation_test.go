package layout

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/rotate"
)

func f64(v float64) *float64 { return &v }

// TestReadRotated reads records written before the SQNR without rotation
// was recorded (no key), with a null (an exact cast) and with a number.
func TestReadRotated(t *testing.T) {
	h32 := rotate.Rotation{Kind: rotate.Hadamard, Block: 32}
	got, err := ReadRotated(map[string]string{KeyRotated: `{"old":{"rotation":"hadamard:32","axis":1},` +
		`"exact":{"rotation":"hadamard:32","axis":0,"sqnr_unrotated_db":null},` +
		`"w":{"rotation":"hadamard:128","axis":1,"sqnr_unrotated_db":-1.5e-3}}   `})
	require.NoError(t, err)
	assert.Equal(t, map[string]Rotated{
		"old":   {Rotation: h32, Axis: 1},
		"exact": {Rotation: h32, Axis: 0, HasUnrotated: true},
		"w":     {Rotation: rotate.Rotation{Kind: rotate.Hadamard, Block: 128}, Axis: 1, SQNRUnrotated: f64(-0.0015), HasUnrotated: true},
	}, got)

	got, err = ReadRotated(map[string]string{})
	require.NoError(t, err)
	assert.Nil(t, got)

	for _, bad := range []string{
		`{"w":{"rotation":"hadamard:32","axis":1,"sqnr_unrotated_db":"12"}}`,
		`{"w":{"rotation":"hadamard","axis":1}}`,
	} {
		_, err := ReadRotated(map[string]string{KeyRotated: bad})
		var fe *FormatError
		require.True(t, errors.As(err, &fe), bad)
		assert.Equal(t, "w", fe.Weight)
		assert.Contains(t, err.Error(), KeyRotated)
	}
	_, err = ReadRotated(map[string]string{KeyRotated: `{`})
	assert.ErrorContains(t, err, KeyRotated)
}

// TestEncodeRotated writes what ReadRotated reads, with a null for an SQNR
// that is nil or not finite.
func TestEncodeRotated(t *testing.T) {
	infos := map[string]RotationInfo{
		"a": {Rotation: "hadamard:32", Axis: 1, SQNRUnrotated: f64(18.25)},
		"b": {Rotation: "hadamard:64", Axis: 0},
		"c": {Rotation: "hadamard:32", Axis: 1, SQNRUnrotated: f64(math.Inf(1))},
		"d": {Rotation: "hadamard:32", Axis: 1, SQNRUnrotated: f64(math.NaN())},
	}
	assert.Equal(t, `{"a":{"rotation":"hadamard:32","axis":1,"sqnr_unrotated_db":18.25},`+
		`"b":{"rotation":"hadamard:64","axis":0,"sqnr_unrotated_db":null},`+
		`"c":{"rotation":"hadamard:32","axis":1,"sqnr_unrotated_db":null},`+
		`"d":{"rotation":"hadamard:32","axis":1,"sqnr_unrotated_db":null}}`, EncodeRotated(infos))
	assert.True(t, math.IsInf(*infos["c"].SQNRUnrotated, 1), "infos unchanged")
	got, err := ReadRotated(map[string]string{KeyRotated: EncodeRotated(infos)})
	require.NoError(t, err)
	assert.Equal(t, 18.25, *got["a"].SQNRUnrotated)
	for _, w := range []string{"b", "c", "d"} {
		assert.True(t, got[w].HasUnrotated, w)
		assert.Nil(t, got[w].SQNRUnrotated, w)
	}
}

// TestDeclareRotated: the declared value reads as the record with no SQNR
// known, and the final value, with the longest numbers encoding/json
// writes, is no longer and has the same characters that a JSON string
// escapes (quotes, backslashes), so a header of fixed length holds it.
func TestDeclareRotated(t *testing.T) {
	names := []string{"model.layers.0.mlp.down_proj.weight", `odd "name" <&>`, "x"}
	infos := map[string]RotationInfo{}
	for i, n := range names {
		infos[n] = RotationInfo{Rotation: "hadamard:32", Axis: i}
	}
	declared := DeclareRotated(infos)
	got, err := ReadRotated(map[string]string{KeyRotated: declared})
	require.NoError(t, err)
	for i, n := range names {
		assert.Equal(t, Rotated{Rotation: rotate.Rotation{Kind: rotate.Hadamard, Block: 32}, Axis: i, HasUnrotated: true}, got[n], n)
	}
	escaped := func(s string) int {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		return len(b)
	}
	// The longest: a sign, "0.00000" and 17 significant digits; a sign,
	// 17 digits, a point and a three-digit exponent.
	for _, v := range []float64{-1.2345678901234567e-6, -1.2345678901234567e-100, -123456789012345678901, 1e300, 0} {
		final := map[string]RotationInfo{}
		for n, info := range infos {
			info.SQNRUnrotated = f64(v)
			final[n] = info
		}
		enc := EncodeRotated(final)
		assert.LessOrEqual(t, len(enc), len(declared), v)
		padded := enc + strings.Repeat(" ", len(declared)-len(enc))
		assert.Equal(t, escaped(declared), escaped(padded), v)
	}
	assert.Equal(t, 25, len("-0.0000012345678901234567"))
	b, err := json.Marshal(-1.2345678901234567e-6)
	require.NoError(t, err)
	assert.Equal(t, "-0.0000012345678901234567", string(b))
}
