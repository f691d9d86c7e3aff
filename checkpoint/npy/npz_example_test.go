package npy_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// ReadHeader reads no further than the header: the payload of a 2×3
// float32 array (NumPy pads the header to 128 bytes) starts at byte 128.
func ExampleReadHeader() {
	var f bytes.Buffer
	if err := npy.WriteSlice(&f, []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}); err != nil {
		log.Fatal(err)
	}
	h, n, err := npy.ReadHeader(&f)
	fmt.Println(h.DType, h.Shape, h.Fortran, n, err, f.Len())
	// Output:
	// float32 [2 3] false 128 <nil> 24
}

// NumPy's descr strings: a byte-order mark and a type code.
func ExampleParseDescr() {
	for _, d := range []string{"<f4", ">u2", "|b1", "<c8"} {
		dt, big, err := npy.ParseDescr(d)
		if err != nil {
			fmt.Println(d, "is refused")
			continue
		}
		fmt.Println(d, dt, big)
	}
	// Output:
	// <f4 float32 false
	// >u2 uint16 true
	// |b1 bool false
	// <c8 is refused
}

// An .npz archive as numpy.savez writes it, read back from a file or from
// any io.ReaderAt.
func ExampleWriteNPZ() {
	var f bytes.Buffer
	if err := npy.WriteSlice(&f, []int{3}, []float64{-1, 0, 0.5}); err != nil {
		log.Fatal(err)
	}
	a, err := npy.Read(&f)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "npz-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "arrays.npz")
	if err := npy.WriteNPZ(path, []npy.Named{{Name: "x", Array: a}}); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	arrays, err := npy.ReadNPZFrom(bytes.NewReader(b), int64(len(b)), "arrays.npz")
	if err != nil {
		log.Fatal(err)
	}
	v, _ := arrays[0].Float32s()
	fmt.Println(arrays[0].Name, arrays[0].DType, v)
	// Output:
	// x float64 [-1 0 0.5]
}

// More kinds of problem: a header that breaks the format, one longer than
// this package reads (here a version 2.0 header claiming 2^31 bytes), and
// a directory where a file is read.
func ExampleReadFile_errors() {
	bad := "\x93NUMPY\x01\x00\x3b\x00{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n"
	_, errInvalid := npy.Read(strings.NewReader(bad))
	_, errTooLarge := npy.Read(strings.NewReader("\x93NUMPY\x02\x00\x00\x00\x00\x80"))
	_, errNotRegular := npy.ReadFile(os.TempDir())
	fmt.Println(errors.Is(errInvalid, npy.ErrInvalid), errors.Is(errTooLarge, npy.ErrTooLarge),
		errors.Is(errNotRegular, npy.ErrNotRegular))
	var fe *npy.FormatError
	fmt.Println(errors.As(errInvalid, &fe), fe.Format, fe.Offset, fe.Reason)
	// Output:
	// true true true
	// true npy 61 invalid header: negative dimension -1
}
