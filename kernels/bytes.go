package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// nativeLittleEndian reports whether the machine stores words
// little-endian, the byte order of safetensors, GGUF and most .npy files.
var nativeLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// ViewLE returns the little-endian bytes b as elements of T without
// copying, when this machine is little-endian and b is aligned for T; false
// otherwise, or when b is empty. Trailing bytes short of an element are
// left out.
func ViewLE[T uint16 | float32](b []byte) ([]T, bool) {
	var z T
	size := int(unsafe.Sizeof(z))
	p := unsafe.SliceData(b)
	if !nativeLittleEndian || len(b) == 0 || uintptr(unsafe.Pointer(p))%uintptr(size) != 0 {
		return nil, false
	}
	return unsafe.Slice((*T)(unsafe.Pointer(p)), len(b)/size), true
}

// Float32BytesToFloat32 decodes len(dst) little-endian binary32 values from
// src, which must hold 4·len(dst) bytes: a copy on a little-endian machine.
func Float32BytesToFloat32(dst []float32, src []byte) {
	src = bytesFor("Float32BytesToFloat32", src, 4*len(dst))
	if nativeLittleEndian {
		if len(dst) > 0 {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), len(src)), src)
		}
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

// Float64BytesToFloat32 decodes len(dst) little-endian binary64 values from
// src, which must hold 8·len(dst) bytes, rounding each to the nearest
// float32 (ties to even), as a Go conversion does.
func Float64BytesToFloat32(dst []float32, src []byte) {
	src = bytesFor("Float64BytesToFloat32", src, 8*len(dst))
	for i := range dst {
		dst[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])))
	}
}

// bytesFor returns the first n bytes of src, and panics when src is shorter
// (a slice with room beyond its length included): a programmer error.
func bytesFor(kernel string, src []byte, n int) []byte {
	if len(src) < n {
		panic(fmt.Sprintf("kernels: %s: %d bytes for %d", kernel, len(src), n))
	}
	return src[:n]
}
