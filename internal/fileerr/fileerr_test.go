package fileerr

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestError: the one text, part by part, each left out when empty.
func TestError(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes: clipped at a rune boundary
	for _, tc := range []struct {
		name string
		err  FormatError
		want string
	}{
		{"all", FormatError{Format: "gguf", Path: "m.gguf", Tensor: "blk.0.w", Key: "k", Offset: 120,
			Reason: "n_dims 5 > 4", Err: io.ErrUnexpectedEOF},
			`gguf: m.gguf: tensor "blk.0.w": key "k": offset 120: n_dims 5 > 4: unexpected EOF`},
		{"offset 0 is known", FormatError{Format: "npy", Path: "a.npy", Reason: "bad magic"},
			"npy: a.npy: offset 0: bad magic"},
		{"unknown offset left out", FormatError{Format: "npy", Path: "a.npz", Offset: -1, Reason: "not a zip archive"},
			"npy: a.npz: not a zip archive"},
		{"shard", FormatError{Format: "safetensors", Path: "d/s.safetensors", Index: "d/i.json", Offset: 8, Reason: "r"},
			"safetensors: d/s.safetensors (a shard named by d/i.json): offset 8: r"},
		{"no format, no path", FormatError{Offset: -1, Reason: "r"}, "r"},
		{"cause only", FormatError{Format: "castdir", Path: "c/info.json", Offset: -1, Err: errors.New("cause")},
			"castdir: c/info.json: cause"},
		{"names quoted safely", FormatError{Format: "gguf", Tensor: "a\x00\xff", Key: "\n", Offset: 3, Reason: "r"},
			`gguf: tensor "a\x00\xff": key "\n": offset 3: r`},
		{"long name clipped", FormatError{Format: "safetensors", Tensor: long, Offset: -1, Reason: "r"},
			`safetensors: tensor "` + strings.Repeat("é", 100) + `...": r`},
		{"odd path quoted", FormatError{Format: "npy", Path: "x\x00.npy", Offset: -1, Reason: "r"},
			`npy: "x\x00.npy": r`},
		{"plain path as it is", FormatError{Format: "npy", Path: "dir with space/ü.npy", Offset: -1, Reason: "r"},
			"npy: dir with space/ü.npy: r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.err.Error())
		})
	}
}

// TestIs: errors.Is matches the sentinel of the error's kind, and only it,
// through wrapping; errors.As finds the error.
func TestIs(t *testing.T) {
	sentinels := map[Kind]error{
		Invalid: ErrInvalid, Truncated: ErrTruncated, NotFormat: ErrNotFormat, Unsupported: ErrUnsupported,
		TooLarge: ErrTooLarge, MissingFile: ErrMissingFile, LinkOutside: ErrLinkOutside,
	}
	assert.Len(t, sentinels, len(kindErr))
	for k, s := range sentinels {
		err := fmt.Errorf("wrapped: %w", &FormatError{Format: "x", Offset: -1, Reason: "r", Kind: k})
		assert.ErrorIs(t, err, s, k.String())
		for k2, other := range sentinels {
			if k2 != k {
				assert.NotErrorIs(t, err, other, "%v is not %v", k, k2)
			}
		}
		var fe *FormatError
		assert.ErrorAs(t, err, &fe)
		assert.Equal(t, k, fe.Kind)
		assert.Equal(t, s.Error(), k.String())
	}
	var zero FormatError
	assert.ErrorIs(t, &zero, ErrInvalid, "the zero Kind is Invalid")
	assert.ErrorIs(t, Kind(200).Err(), ErrInvalid, "an unknown Kind reads as Invalid")
	eof := &FormatError{Err: io.ErrUnexpectedEOF, Kind: Truncated}
	assert.ErrorIs(t, eof, io.ErrUnexpectedEOF, "the cause is matched too")
}

// TestNew: a cause of io.ErrUnexpectedEOF makes the error Truncated.
func TestNew(t *testing.T) {
	e := New("npy", 6, nil, "r")
	assert.Equal(t, FormatError{Format: "npy", Offset: 6, Reason: "r"}, *e)
	assert.Equal(t, Truncated, New("npy", 6, io.ErrUnexpectedEOF, "r").Kind)
	assert.Equal(t, Invalid, New("npy", 6, io.EOF, "r").Kind)
}

// TestNested: the inner error's text without its cause, and the cause.
func TestNested(t *testing.T) {
	in := &FormatError{Format: "npy", Offset: 3, Reason: "truncated", Err: io.ErrUnexpectedEOF, Kind: Truncated}
	text, cause := Nested(in)
	assert.Equal(t, "npy: offset 3: truncated", text)
	assert.Equal(t, io.ErrUnexpectedEOF, cause)
	assert.Equal(t, io.ErrUnexpectedEOF, in.Err, "e is not changed")
}

// TestClip: short names are kept, long ones cut at a rune boundary.
func TestClip(t *testing.T) {
	assert.Equal(t, "abc", Clip("abc"))
	s := strings.Repeat("a", 199) + "é" + "tail"
	assert.Equal(t, strings.Repeat("a", 199)+"...", Clip(s), "not inside the two-byte rune")
	assert.Equal(t, strings.Repeat("b", 200), Clip(strings.Repeat("b", 200)))
	assert.Equal(t, strings.Repeat("b", 200)+"...", Clip(strings.Repeat("b", 201)))
}
