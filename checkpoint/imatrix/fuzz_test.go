package imatrix

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// checkParsed holds for every file Parse accepts.
func checkParsed(t *testing.T, m *Imatrix) {
	for i, e := range m.Entries {
		if i > 0 && m.Entries[i-1].Name >= e.Name {
			t.Fatalf("entries not sorted and unique: %q then %q", m.Entries[i-1].Name, e.Name)
		}
		if e.Matrices < 1 || len(e.Importance) == 0 || len(e.Importance)%e.Matrices != 0 || len(e.Counts) != e.Matrices {
			t.Fatalf("entry %q: %d values, %d matrices, %d counts", e.Name, len(e.Importance), e.Matrices, len(e.Counts))
		}
		for j, v := range e.Importance {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0 {
				t.Fatalf("entry %q: importance %d is %v", e.Name, j, v)
			}
		}
		cols := len(e.Importance) / e.Matrices
		vs, err := m.Importance(e.Name, cols, e.Matrices)
		if err != nil || len(vs) != e.Matrices {
			t.Fatalf("entry %q: Importance(%d, %d): %d vectors, %v", e.Name, cols, e.Matrices, len(vs), err)
		}
	}
	// What was read writes back (or is refused with a *StatsError: a .dat
	// name too long for GGUF, a sum that overflows float32) and reads
	// again with the same entries.
	for _, f := range []Format{FormatGGUF, FormatDat} {
		s := m.Stats()
		s.ChunkSize = max(s.ChunkSize, 1)
		var buf bytes.Buffer
		if _, err := Write(&buf, s, f); err != nil {
			var se *StatsError
			if !errors.As(err, &se) {
				t.Fatalf("Write(%v): %v is not a *StatsError", f, err)
			}
			continue
		}
		back, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "back")
		if err != nil {
			t.Fatalf("Write(%v) wrote a file Parse refuses: %v", f, err)
		}
		if f == FormatGGUF && !slices.Equal(back.Names(), m.Names()) {
			t.Fatalf("Write(%v): names %q, want %q", f, back.Names(), m.Names())
		}
	}
}

func FuzzReadGGUF(f *testing.F) {
	f.Add(handGGUF())
	f.Add(ggufFile(imatrixKVs(), []ggufTensor{
		f32t("w.in_sum2", []uint64{2, 2}, 1, 2, 3, 4),
		f32t("w.counts", []uint64{1, 2}, 1, 0),
		f32t("w.in_sum", []uint64{2, 2}, 1, 2, 3, 4),
	}))
	f.Add(ggufFile(imatrixKVs(), []ggufTensor{f32t("w.in_sum2", []uint64{2}, 1, 2)}))
	if b, err := os.ReadFile("testdata/golden.imatrix.gguf"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		checkParsed(t, m)
	})
}

func FuzzReadDat(f *testing.F) {
	f.Add([]byte(handDat()))
	f.Add([]byte(handDat().i32(7).i32(9).raw("calib.txt")))
	f.Add([]byte(le(nil).i32(1).datEntry("blk.1.ffn_up_exps.weight", 2, 2, 4, 6, 8).i32(3)))
	if b, err := os.ReadFile("testdata/golden.imatrix.dat"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		checkParsed(t, m)
	})
}

// FuzzReadNPZ reads arbitrary bytes as the .npz importance matrix of
// docs/GGUF.md §2.6 (written to a file: ReadNPZ takes a path). Seeds: the
// golden archive of npz_test.go, one without its chunk size, and the
// matrix of cmd/tcast/testdata computed by llama_imatrix.py. It is refused
// with a *FormatError or *NotImatrixError naming the file, or what it read
// writes as llama-imatrix's GGUF (or is refused with a *StatsError) and
// that file parses and holds up (checkParsed).
func FuzzReadNPZ(f *testing.F) {
	dir := f.TempDir() // one per fuzzing process; calls in a process are sequential
	seed := func(arrays []npy.Named) {
		p := filepath.Join(dir, "seed.npz")
		if err := npy.WriteNPZ(p, arrays); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seed(goldenNPZ())
	seed(goldenNPZ()[:2])
	if b, err := os.ReadFile(filepath.Join("..", "..", "cmd", "tcast", "testdata", "llama_imatrix.npz")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	path := filepath.Join(dir, "fuzz.npz")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadNPZ(path)
		if err != nil {
			var fe *FormatError
			var ne *NotImatrixError
			if !errors.As(err, &fe) && !errors.As(err, &ne) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		s.ChunkSize = max(s.ChunkSize, 1)
		var buf bytes.Buffer
		if _, err := Write(&buf, s, FormatGGUF); err != nil {
			var se *StatsError
			if !errors.As(err, &se) {
				t.Fatalf("Write: %v is not a *StatsError", err)
			}
			return
		}
		m, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "back")
		if err != nil {
			t.Fatalf("Write wrote a file Parse refuses: %v", err)
		}
		checkParsed(t, m)
	})
}
