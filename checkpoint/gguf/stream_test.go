package gguf

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamCase is a tensor of a Stream test.
type streamCase struct {
	name  string
	typ   Type
	shape []int
	data  []byte
}

// streamTensors returns tensors of several types and sizes (one without
// data, one large enough to bypass Write's buffer) with random contents.
func streamTensors(r *rand.Rand) []streamCase {
	cs := []streamCase{
		{name: "q", typ: TypeQ8_0, shape: []int{3, 64}},
		{name: "f", typ: TypeF32, shape: []int{5}},
		{name: "empty", typ: TypeF32, shape: []int{0}},
		{name: "big", typ: TypeF16, shape: []int{3, bufSize/2 + 40}},
		{name: "m", typ: TypeMXFP4, shape: []int{2, 96}},
		{name: "last", typ: TypeI8, shape: []int{7}},
	}
	for i := range cs {
		n := int64(1)
		for _, d := range cs[i].shape {
			n *= int64(d)
		}
		size, _ := cs[i].typ.Size(n)
		cs[i].data = make([]byte, size)
		for j := range cs[i].data {
			cs[i].data[j] = byte(r.Uint32())
		}
	}
	return cs
}

// streamWriters returns a Writer holding cs as data (a) and one declaring
// them for a Stream (b), both with alignment 64.
func streamWriters(t *testing.T, cs []streamCase) (a, b *Writer) {
	a, b = &Writer{}, &Writer{}
	for _, w := range []*Writer{a, b} {
		require.NoError(t, w.AddKV(KeyArchitecture, String("test")))
		require.NoError(t, w.AddKV(KeyAlignment, Uint32(64)))
	}
	for _, c := range cs {
		require.NoError(t, a.AddTensor(c.name, c.typ, c.shape, c.data))
		require.NoError(t, b.DeclareTensor(c.name, c.typ, c.shape))
	}
	return a, b
}

// TestStreamWriteAt writes tensors in pieces placed with WriteAt, in random
// orders from several goroutines, some tensors through Write in between,
// and checks that the file equals the one WriteFile makes.
func TestStreamWriteAt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cs := streamTensors(r)
	a, b := streamWriters(t, cs)
	dir := t.TempDir()
	want := filepath.Join(dir, "want.gguf")
	require.NoError(t, a.WriteFile(want))
	wantBytes, err := os.ReadFile(want)
	require.NoError(t, err)

	for _, byWrite := range []map[string]bool{
		{},                         // every tensor through WriteAt: the file ends in a hole
		{"q": true, "last": true},  // Write skips the tensors WriteAt completed
		{"f": true, "big": true},   // Write's large pieces go straight to the file
		{"empty": true, "m": true}, // a tensor without data, named by Write
		{"q": true, "f": true},     // Write runs while WriteAt writes the rest
		{"q": true, "f": true, "empty": true, "big": true, "m": true, "last": true},
	} {
		name := fmt.Sprint(byWrite)
		path := filepath.Join(dir, "got.gguf")
		s, err := b.Create(path)
		require.NoError(t, err)
		type piece struct {
			name string
			off  int
			data []byte
		}
		var ps []piece
		for _, c := range cs {
			if byWrite[c.name] {
				continue
			}
			ps = append(ps, piece{c.name, 0, c.data[:0]}) // names a tensor without data
			for off := 0; off < len(c.data); {
				n := min(1+r.IntN(len(c.data)/3+1), len(c.data)-off)
				ps = append(ps, piece{c.name, off, c.data[off : off+n]})
				off += n
			}
		}
		r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		writes := func() {
			for _, c := range cs {
				if !byWrite[c.name] {
					continue
				}
				for off := 0; ; {
					n := min(1+r.IntN(len(c.data)/2+1), len(c.data)-off)
					assert.NoError(t, s.Write(c.name, c.data[off:off+n]), name)
					if off += n; off >= len(c.data) {
						break
					}
				}
			}
		}
		// Write takes the first tensor not complete: when its tensors come
		// first, it runs while WriteAt writes the others; else after them.
		prefix := true
		for i, c := range cs {
			prefix = prefix && (byWrite[c.name] || i >= len(byWrite))
		}
		var wg sync.WaitGroup
		if prefix {
			wg.Go(writes)
		}
		for g := range 3 {
			wg.Go(func() {
				for i := g; i < len(ps); i += 3 {
					assert.NoError(t, s.WriteAt(ps[i].name, ps[i].data, int64(ps[i].off)), name)
				}
			})
		}
		wg.Wait()
		if !prefix {
			writes()
		}
		require.NoError(t, s.Close(), name)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, len(wantBytes), len(got), name)
		assert.True(t, string(wantBytes) == string(got), name)
		require.NoError(t, os.Remove(path))
	}
	assertOnly(t, dir, "want.gguf")
}

// TestStreamWriteAtFailures checks that misplaced, overlapping, missing and
// mixed pieces fail the Stream and leave no file.
func TestStreamWriteAtFailures(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cs := streamTensors(r)
	_, b := streamWriters(t, cs)
	q, f := cs[0].data, cs[1].data
	for _, c := range []struct {
		name   string
		steps  func(s *Stream) error
		reason string
	}{
		{"unknown", func(s *Stream) error { return s.WriteAt("nope", q, 0) }, `tensor "nope" was not declared`},
		{"negative", func(s *Stream) error { return s.WriteAt("q", q[:1], -1) }, "negative offset -1"},
		{"past the end", func(s *Stream) error { return s.WriteAt("f", f, 1) }, `20 bytes at 1 exceed its 20`},
		{"overlap", func(s *Stream) error {
			require.NoError(t, s.WriteAt("q", q[10:20], 10))
			return s.WriteAt("q", q[:11], 0)
		}, "bytes 0 to 11 overlap bytes written before, from byte 10"},
		{"Write after WriteAt", func(s *Stream) error {
			require.NoError(t, s.WriteAt("q", q[10:], 10))
			return s.Write("q", q[:10])
		}, "Write after WriteAt"},
		{"WriteAt after Write", func(s *Stream) error {
			require.NoError(t, s.Write("q", q[:10]))
			return s.WriteAt("q", q[10:], 10)
		}, "WriteAt after Write appended 10"},
		{"Write before an incomplete tensor", func(s *Stream) error {
			require.NoError(t, s.WriteAt("q", q[1:], 1))
			return s.Write("f", f)
		}, `tensor "f" written, "q" is next`},
	} {
		path := filepath.Join(t.TempDir(), "x.gguf")
		s, err := b.Create(path)
		require.NoError(t, err)
		err = c.steps(s)
		require.ErrorContains(t, err, c.reason, c.name)
		require.Error(t, s.Close(), c.name)
		assertOnly(t, filepath.Dir(path))
	}

	// A hole in a tensor is named at Close.
	path := filepath.Join(t.TempDir(), "x.gguf")
	s, err := b.Create(path)
	require.NoError(t, err)
	for _, c := range cs {
		if c.name == "m" {
			require.NoError(t, s.WriteAt("m", c.data[:5], 0))
			require.NoError(t, s.WriteAt("m", c.data[9:], 9))
			continue
		}
		require.NoError(t, s.WriteAt(c.name, c.data, 0))
	}
	err = s.Close()
	require.ErrorContains(t, err, `tensor "m" received 98 of its 102 bytes (byte 5 is missing)`)
	assertOnly(t, filepath.Dir(path))
}
