package imatrix_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// stats are the statistics of one weight of 4 input columns over 2
// activation rows: its importance is Σx² / count, 4 1 9 0.
func stats() *imatrix.Stats {
	return &imatrix.Stats{ChunkCount: 1, ChunkSize: 2, Datasets: []string{"calib.txt"},
		Entries: []imatrix.Stat{
			{Name: "blk.0.attn_q.weight", Sum2: []float32{8, 2, 18, 0}, Counts: []int64{2}},
		}}
}

// Write llama-imatrix's GGUF format and read it back. Statistics the format
// cannot hold are a *StatsError.
func ExampleWrite() {
	var b bytes.Buffer
	if _, err := imatrix.Write(&b, stats(), imatrix.FormatGGUF); err != nil {
		log.Fatal(err)
	}
	m, err := imatrix.Parse(bytes.NewReader(b.Bytes()), int64(b.Len()), "im.gguf")
	if err != nil {
		log.Fatal(err)
	}
	v, err := m.Vector("blk.0.attn_q.weight", 4, 1)
	fmt.Println(m.Format, m.Datasets, v, err)

	// Three sums do not divide into two matrices.
	bad := &imatrix.Stats{Entries: []imatrix.Stat{
		{Name: "w", Sum2: []float32{1, 2, 3}, Counts: []int64{1, 1}},
	}}
	_, err = imatrix.Write(io.Discard, bad, imatrix.FormatGGUF)
	var se *imatrix.StatsError
	fmt.Println(errors.As(err, &se), se.Entry)
	// Output:
	// gguf [calib.txt] [4 1 9 0] <nil>
	// true w
}

// WriteFile replaces the file atomically; here in the legacy .dat format,
// which Read tells from its first bytes.
func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "imatrix-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "imatrix.dat")
	if err := imatrix.WriteFile(path, stats(), imatrix.FormatDat); err != nil {
		log.Fatal(err)
	}
	m, err := imatrix.Read(path)
	if err != nil {
		log.Fatal(err)
	}
	v, _ := m.Vector("blk.0.attn_q.weight", 4, 1)
	fmt.Println(m.Format, v)
	// Output:
	// dat [4 1 9 0]
}

// array returns data of the given shape as a NumPy array.
func array[T npy.Element](shape []int, data []T) *npy.Array {
	var b bytes.Buffer
	if err := npy.WriteSlice(&b, shape, data); err != nil {
		log.Fatal(err)
	}
	a, err := npy.Read(&b)
	if err != nil {
		log.Fatal(err)
	}
	return a
}

// The statistics of a calibration script, saved with numpy.savez under the
// GGUF format's names.
func ExampleReadNPZ() {
	dir, err := os.MkdirTemp("", "imatrix-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "stats.npz")
	err = npy.WriteNPZ(path, []npy.Named{
		{Name: "imatrix.datasets", Array: array([]int{10}, []uint8("calib.txt\n"))},
		{Name: "imatrix.chunk_count", Array: array([]int{1}, []int64{1})},
		{Name: "imatrix.chunk_size", Array: array([]int{1}, []int64{2})},
		{Name: "blk.0.attn_q.weight.in_sum2", Array: array([]int{4}, []float32{8, 2, 18, 0})},
		{Name: "blk.0.attn_q.weight.counts", Array: array([]int{1}, []int64{2})},
	})
	if err != nil {
		log.Fatal(err)
	}
	s, err := imatrix.ReadNPZ(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Datasets, s.ChunkSize, s.Entries[0].Name, s.Entries[0].Sum2, s.Entries[0].Counts)
	// Output:
	// [calib.txt] 2 blk.0.attn_q.weight [8 2 18 0] [2]
}

// A name the matrix has no entry for is a *LookupError with the closest
// names it has.
func ExampleLookupError() {
	var b bytes.Buffer
	if _, err := imatrix.Write(&b, stats(), imatrix.FormatGGUF); err != nil {
		log.Fatal(err)
	}
	m, _ := imatrix.Parse(bytes.NewReader(b.Bytes()), int64(b.Len()), "im.gguf")
	_, err := m.Vector("blk.0.attn_q.weigth", 4, 1)
	var le *imatrix.LookupError
	fmt.Println(errors.Is(err, imatrix.ErrNoEntry), errors.As(err, &le), le.Closest)
	// Output:
	// true true [blk.0.attn_q.weight]
}

// A .dat entry that claims -3 values breaks the format: a *FormatError of
// kind ErrInvalid naming the entry and the offset.
func ExampleFormatError() {
	// entry count 1; name "w"; ncall 1; nval -3 at offset 13; what follows.
	dat := "\x01\x00\x00\x00" + "\x01\x00\x00\x00w" + "\x01\x00\x00\x00" + "\xfd\xff\xff\xff" +
		strings.Repeat("\x00", 12)
	_, err := imatrix.Parse(strings.NewReader(dat), int64(len(dat)), "im.dat")
	var fe *imatrix.FormatError
	fmt.Println(errors.Is(err, imatrix.ErrInvalid), errors.As(err, &fe), fe.Tensor, fe.Offset)
	// Output:
	// true true w 13
}
