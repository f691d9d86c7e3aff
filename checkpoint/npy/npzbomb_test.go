package npy

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lyingNPZ writes an archive of one member w.npy whose .npy header declares
// n float32 values and whose zip header declares claim uncompressed bytes,
// while the member really holds the header and 1000 zero bytes.
func lyingNPZ(t testing.TB, path string, method uint16, n, claim uint64) {
	t.Helper()
	raw := f32NPY(t, n, 1000)
	crc := crc32.ChecksumIEEE(raw)
	if method == zip.Deflate {
		var c bytes.Buffer
		fw, err := flate.NewWriter(&c, flate.BestCompression)
		require.NoError(t, err)
		_, err = fw.Write(raw)
		require.NoError(t, err)
		require.NoError(t, fw.Close())
		raw = c.Bytes()
	}
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "w.npy", Method: method, CRC32: crc,
		CompressedSize64: uint64(len(raw)), UncompressedSize64: claim})
	require.NoError(t, err)
	_, err = w.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, z.Bytes(), 0o644))
}

// TestNPZLyingSizes: a small archive whose member claims gigabytes is refused
// without allocating what it claims (the allocation is bounded by the bytes
// actually read), with a *FormatError naming the archive and the member.
func TestNPZLyingSizes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		method   uint16
		n, claim uint64
	}{
		{"honest deflate", zip.Deflate, 0, 0},
		{"honest stored", zip.Store, 0, 0},
		{"deflate 1 GiB", zip.Deflate, 1 << 28, 1<<30 + 128},
		{"stored 1 GiB", zip.Store, 1 << 28, 1<<30 + 128},
		{"deflate 16 GiB", zip.Deflate, 1<<32 - 32, 1 << 34},
		{"stored 16 GiB", zip.Store, 1<<32 - 32, 1 << 34},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.n == 0 {
				// An honest member, compressed 1128 bytes to a few dozen: read.
				path := filepath.Join(dir, "ok.npz")
				lyingNPZ(t, path, tc.method, 250, 128+1000)
				a, err := ReadNPZ(path)
				require.NoError(t, err)
				require.Len(t, a, 1)
				assert.Equal(t, []int{250}, a[0].Shape)
				return
			}
			path := filepath.Join(dir, "bomb.npz")
			lyingNPZ(t, path, tc.method, tc.n, tc.claim)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.Less(t, fi.Size(), int64(2000))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = ReadNPZ(path)
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Contains(t, err.Error(), "bomb.npz")
			assert.Contains(t, err.Error(), `"w.npy"`)
		})
	}
}

// f32NPY returns a version 1.0 .npy file whose header declares a float32
// vector of n values, followed by body zero bytes (as many as n needs or
// not: the archives built from it lie about their members).
func f32NPY(tb testing.TB, n uint64, body int) []byte {
	tb.Helper()
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }", n)
	dict += strings.Repeat(" ", 63-(10+len(dict))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	require.NoError(tb, binary.Write(&b, binary.LittleEndian, uint16(len(dict))))
	b.WriteString(dict)
	b.Write(make([]byte, body))
	return b.Bytes()
}
