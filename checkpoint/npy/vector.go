package npy

import (
	"errors"
	"fmt"
)

// Vectors in .npy and .npz files: 1-D float arrays, such as the per-channel
// activation norms that Wanda pruning multiplies weight magnitudes by
// (sparsity.Options.Norms).

// ErrNotVector is wrapped by the errors of arrays that cannot be a vector: a
// rank other than 1, a length other than the one asked for, or a dtype other
// than float16, float32 and float64.
var ErrNotVector = errors.New("npy: not a float vector (want a 1-D float16, float32 or float64 array)")

// Vector returns the array's elements as float32 when it is a 1-D float
// array of n elements (n < 0: any length); otherwise an error wrapping
// ErrNotVector says what the array is.
func (a *Array) Vector(n int) ([]float32, error) {
	switch {
	case len(a.Shape) != 1:
		return nil, fmt.Errorf("array of shape %v: %w", a.Shape, ErrNotVector)
	case n >= 0 && a.Shape[0] != n:
		return nil, fmt.Errorf("%d elements, want %d: %w", a.Shape[0], n, ErrNotVector)
	case a.DType != Float16 && a.DType != Float32 && a.DType != Float64:
		return nil, fmt.Errorf("%s array: %w", a.DType, ErrNotVector)
	}
	return a.Float32s()
}

// ReadVectorFile reads a .npy file holding a vector of n elements (n < 0: any
// length; see [Array.Vector]). Its errors name the file.
func ReadVectorFile(path string, n int) ([]float32, error) {
	a, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := a.Vector(n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// ReadVectorsNPZ reads an .npz file whose arrays are all vectors (see
// [Array.Vector]) and returns them by name. Its errors name the file and the
// array.
func ReadVectorsNPZ(path string) (map[string][]float32, error) {
	arrays, err := ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(arrays))
	for _, a := range arrays {
		v, err := a.Vector(-1)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, a.Name, err)
		}
		out[a.Name] = v
	}
	return out, nil
}
