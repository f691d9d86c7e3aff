package rotate_test

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tensorcast-go/tensorcast/rotate"
)

// A rotation is written "hadamard" or "hadamard:BLOCK", BLOCK a power of
// two from 2 to MaxBlock.
func ExampleParse() {
	for _, s := range []string{"hadamard:32", "none", "hadamard:48",
		"hadamard:" + strconv.Itoa(2*rotate.MaxBlock)} {
		r, err := rotate.Parse(s)
		fmt.Printf("%q %v\n", r, errors.Is(err, rotate.ErrSyntax))
	}
	// Output:
	// "hadamard:32" false
	// "" false
	// "" true
	// "" true
}

// A rotation without a block takes the datatype's block along the rotated
// axis, or DefaultBlock for a datatype scaled per tensor or channel.
func ExampleRotation_WithDefaultBlock() {
	r := rotate.Rotation{Kind: rotate.Hadamard}
	mx, _ := r.WithDefaultBlock(32)
	perChannel, _ := r.WithDefaultBlock(0)
	fmt.Println(mx, perChannel, perChannel.Block == rotate.DefaultBlock)
	// Output:
	// hadamard:32 hadamard:128 true
}

// The normalised Hadamard matrix of order 4 has rows of ±1/2: it maps a
// unit vector to a row of it, and a row back to a unit vector.
func ExampleTransform() {
	x := []float64{1, 0, 0, 0}
	rotate.Transform(x)
	fmt.Println(x)
	rotate.Transform(x)
	fmt.Println(x)
	// Output:
	// [0.5 0.5 0.5 0.5]
	// [1 0 0 0]
}
