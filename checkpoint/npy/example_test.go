package npy_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/mask"
)

func ExampleWriteSlice() {
	var buf bytes.Buffer
	err := npy.WriteSlice(&buf, []int{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("file size:", buf.Len())

	a, err := npy.Read(&buf)
	if err != nil {
		log.Fatal(err)
	}
	vals, err := a.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.DType, a.DType.Descr(), a.Shape, a.Len(), a.Fortran)
	fmt.Println(vals)
	// Output:
	// file size: 152
	// float32 <f4 [2 3] 6 false
	// [1 2 3 4 5 6]
}

func ExampleReadMask() {
	keep, _ := mask.FromBools([]int{2, 3}, []bool{true, false, true, false, false, true})
	var f bytes.Buffer
	_ = npy.WriteMask(&f, npy.Bool, keep) // the bytes numpy.save writes for the bool array
	back, _ := npy.ReadMask(&f)
	fmt.Println(back, back.Count())
	// Output:
	// [[1 0 1] [0 0 1]] 3
}

func ExampleRead_errors() {
	// The kinds of problem a file can have are matched with errors.Is.
	object := "\x93NUMPY\x01\x00\x3a\x00{'descr': '|O', 'fortran_order': False, 'shape': (1,), }    \n"
	for _, file := range []string{"PK\x03\x04 a zip archive", object, "\x93NUMPY\x01"} {
		_, err := npy.Read(strings.NewReader(file))
		fmt.Println(errors.Is(err, npy.ErrNotFormat), errors.Is(err, npy.ErrUnsupported),
			errors.Is(err, npy.ErrTruncated))
	}
	// Output:
	// true false false
	// false true false
	// false false true
}
