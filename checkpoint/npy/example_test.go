package npy_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
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
