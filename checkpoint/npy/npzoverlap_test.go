package npy

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overlappingNPZ is an archive of one deflated member w0.npy (a float32
// vector of n zeros) whose central directory lists it k times under the
// names w0.npy ... w{k-1}.npy, every entry pointing at the same local header
// and data: each member's sizes are plausible on its own, but together they
// expand to k times the data.
func overlappingNPZ(tb testing.TB, n, k int) []byte {
	tb.Helper()
	raw := f32NPY(tb, uint64(n), 4*n)
	crc := crc32.ChecksumIEEE(raw)
	var c bytes.Buffer
	fw, err := flate.NewWriter(&c, flate.BestCompression)
	require.NoError(tb, err)
	_, err = fw.Write(raw)
	require.NoError(tb, err)
	require.NoError(tb, fw.Close())

	// The local header and data, written once.
	const name0 = "w0.npy"
	var z bytes.Buffer
	le := func(v any) { require.NoError(tb, binary.Write(&z, binary.LittleEndian, v)) }
	le(uint32(0x04034b50))
	le(uint16(20))
	le(uint16(0))
	le(uint16(zip.Deflate))
	le(uint32(0)) // time, date
	le(crc)
	le(uint32(c.Len()))
	le(uint32(len(raw)))
	le(uint16(len(name0)))
	le(uint16(0))
	z.WriteString(name0)
	z.Write(c.Bytes())
	cdStart := z.Len()
	for i := range k {
		name := fmt.Sprintf("w%d.npy", i)
		le(uint32(0x02014b50))
		le(uint16(20))
		le(uint16(20))
		le(uint16(0))
		le(uint16(zip.Deflate))
		le(uint32(0))
		le(crc)
		le(uint32(c.Len()))
		le(uint32(len(raw)))
		le(uint16(len(name)))
		le(uint16(0)) // extra
		le(uint16(0)) // comment
		le(uint16(0)) // disk
		le(uint16(0)) // internal attributes
		le(uint32(0)) // external attributes
		le(uint32(0)) // local header offset: the one member
		z.WriteString(name)
	}
	cdEnd := z.Len()
	le(uint32(0x06054b50))
	le(uint16(0))
	le(uint16(0))
	le(uint16(k))
	le(uint16(k))
	le(uint32(cdEnd - cdStart))
	le(uint32(cdStart))
	le(uint16(0))
	return z.Bytes()
}

// TestNPZOverlappingMembers: members whose data overlap (a zip bomb of
// central-directory entries sharing one deflate stream) are refused with a
// *FormatError naming the archive and the member, before their total
// expansion is allocated.
func TestNPZOverlappingMembers(t *testing.T) {
	const n, k = 1 << 20, 200 // 4 MiB per member, 800 MiB in all, from a few KB
	b := overlappingNPZ(t, n, k)
	require.Less(t, len(b), 64<<10)

	// One entry alone is a good archive.
	one := overlappingNPZ(t, 1000, 1)
	arrays, err := ReadNPZFrom(bytes.NewReader(one), int64(len(one)), "one.npz")
	require.NoError(t, err)
	require.Len(t, arrays, 1)
	assert.Equal(t, []int{1000}, arrays[0].Shape)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = ReadNPZFrom(bytes.NewReader(b), int64(len(b)), "bomb.npz")
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "bomb.npz", fe.Path)
	assert.Contains(t, err.Error(), `"w1.npy"`)
	assert.Contains(t, err.Error(), "overlap")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "allocated before refusing")
}
