package npy

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// npzOf is a zip archive of the given members (name → bytes), stored or
// deflated, in the order given.
func npzOf(tb testing.TB, method uint16, names []string, members [][]byte) []byte {
	tb.Helper()
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	for i, name := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		require.NoError(tb, err)
		_, err = w.Write(members[i])
		require.NoError(tb, err)
	}
	require.NoError(tb, zw.Close())
	return z.Bytes()
}

// FuzzReadNPZ reads arbitrary bytes as an .npz archive through the
// io.ReaderAt variant. Seeds: the .npy fixtures of testdata/ zipped stored
// and deflated, the importance-matrix archive of cmd/tcast/testdata, the
// hostile archives of the repository's testdata/bad/npz,
// archives whose members lie about their sizes or share their data, a
// duplicate member and
// truncations. An archive is refused with a *FormatError naming it, or its
// arrays are consistent (payload = elements × item size) and survive
// WriteNPZ and ReadNPZ unchanged (C-order arrays; WriteNPZ refuses
// Fortran order).
func FuzzReadNPZ(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.npy"))
	require.NoError(f, err)
	require.NotEmpty(f, files)
	var names []string
	var members [][]byte
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		names = append(names, filepath.Base(p))
		members = append(members, b)
		f.Add(npzOf(f, zip.Store, []string{filepath.Base(p)}, [][]byte{b}))
	}
	stored := npzOf(f, zip.Store, names, members)
	f.Add(stored)
	f.Add(npzOf(f, zip.Deflate, names, members))
	f.Add(stored[:len(stored)/2])
	f.Add(npzOf(f, zip.Store, []string{"a.npy", "a"}, [][]byte{members[0], members[0]}))
	if b, err := os.ReadFile(filepath.Join("..", "..", "cmd", "tcast", "testdata", "llama_imatrix.npz")); err == nil {
		f.Add(b)
	}
	dir := f.TempDir()
	for i, c := range []struct {
		method   uint16
		n, claim uint64
	}{{zip.Store, 250, 1 << 34}, {zip.Deflate, 1 << 32, 1 << 33}, {zip.Store, 4, 1016}} {
		p := filepath.Join(dir, "lie"+string(rune('0'+i))+".npz")
		lyingNPZ(f, p, c.method, c.n, c.claim)
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	// The hostile archives of testdata/bad (internal/badinput): every one
	// refused, each a start for the fuzzer.
	bad, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bad", "npz", "*.npz"))
	require.NoError(f, err)
	more, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bad", "npz", "truncated", "*.npz"))
	require.NoError(f, err)
	for _, p := range append(bad, more...) {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add(overlappingNPZ(f, 1000, 3))
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, in []byte) {
		const name = "fuzz.npz"
		arrays, err := ReadNPZFrom(bytes.NewReader(in), int64(len(in)), name)
		if err != nil {
			require.Contains(t, err.Error(), name)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		seen := map[string]bool{}
		for _, a := range arrays {
			require.False(t, seen[a.Name], "member %q twice", a.Name)
			seen[a.Name] = true
			require.Equal(t, a.Len()*a.DType.Size(), len(a.Data), a.Name)
			if a.Header.Fortran {
				return
			}
		}
		// Round trip through the writer. Names the writer would refuse
		// (two members differing only by ".npy") are already excluded.
		p := filepath.Join(t.TempDir(), "back.npz")
		require.NoError(t, WriteNPZ(p, arrays))
		back, err := ReadNPZ(p)
		require.NoError(t, err)
		require.Len(t, back, len(arrays))
		for i, a := range arrays {
			want := a.Header
			want.BigEndian = false
			require.Equal(t, a.Name, back[i].Name)
			require.Equal(t, want, back[i].Header)
			require.Equal(t, a.Data, back[i].Data)
		}
	})
}
