package imatrix

import (
	"encoding/binary"
	"math"
)

// le is a little-endian byte builder for hand-made test files: each
// method appends one field exactly as the formats define it.
type le []byte

func (b le) i32(v int32) le   { return binary.LittleEndian.AppendUint32(b, uint32(v)) }
func (b le) u32(v uint32) le  { return binary.LittleEndian.AppendUint32(b, v) }
func (b le) u64(v uint64) le  { return binary.LittleEndian.AppendUint64(b, v) }
func (b le) f32(v float32) le { return b.u32(math.Float32bits(v)) }
func (b le) raw(s string) le  { return append(b, s...) }

// str appends a GGUF string: uint64 length, then the bytes.
func (b le) str(s string) le { return b.u64(uint64(len(s))).raw(s) }

func (b le) f32s(vs ...float32) le {
	for _, v := range vs {
		b = b.f32(v)
	}
	return b
}

// datEntry appends one .dat entry: int32 name length, name, int32 ncall,
// int32 nval, nval float32 values.
func (b le) datEntry(name string, ncall int32, vals ...float32) le {
	return b.i32(int32(len(name))).raw(name).i32(ncall).i32(int32(len(vals))).f32s(vals...)
}

// GGUF metadata value type ids (gguf_type in ggml's gguf.h).
const (
	gtUint32 = 4
	gtInt32  = 5
	gtString = 8
	gtArray  = 9
)

// ggufKV is one metadata pair; enc appends the value type and the value.
type ggufKV struct {
	key string
	enc func(le) le
}

func kvU32(key string, v uint32) ggufKV {
	return ggufKV{key, func(b le) le { return b.u32(gtUint32).u32(v) }}
}

func kvI32(key string, v int32) ggufKV {
	return ggufKV{key, func(b le) le { return b.u32(gtInt32).i32(v) }}
}

func kvStr(key, v string) ggufKV {
	return ggufKV{key, func(b le) le { return b.u32(gtString).str(v) }}
}

func kvStrs(key string, vs ...string) ggufKV {
	return ggufKV{key, func(b le) le {
		b = b.u32(gtArray).u32(gtString).u64(uint64(len(vs)))
		for _, v := range vs {
			b = b.str(v)
		}
		return b
	}}
}

// ggufTensor is one tensor: ggml dimensions (innermost first), a type id
// and its data (float32 values for F32, raw bytes otherwise).
type ggufTensor struct {
	name string
	dims []uint64
	typ  uint32
	vals []float32
	raw  []byte
}

func f32t(name string, dims []uint64, vals ...float32) ggufTensor {
	return ggufTensor{name: name, dims: dims, typ: 0, vals: vals}
}

// ggufFile lays out a GGUF v3 file by the format's definition: magic,
// version, tensor count, kv count, the pairs, the tensor infos (name,
// n_dims, dims, type, offset), zero padding to 32, and each tensor's data
// padded to 32.
func ggufFile(kvs []ggufKV, ts []ggufTensor) []byte {
	b := le(nil).raw("GGUF").u32(3).u64(uint64(len(ts))).u64(uint64(len(kvs)))
	for _, kv := range kvs {
		b = kv.enc(b.str(kv.key))
	}
	var data le
	for _, t := range ts {
		b = b.str(t.name).u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			b = b.u64(d)
		}
		b = b.u32(t.typ).u64(uint64(len(data)))
		if t.raw != nil {
			data = append(data, t.raw...)
		} else {
			data = data.f32s(t.vals...)
		}
		for len(data)%32 != 0 {
			data = append(data, 0)
		}
	}
	for len(b)%32 != 0 {
		b = append(b, 0)
	}
	return append(b, data...)
}

// imatrixKVs are the metadata keys llama-imatrix writes.
func imatrixKVs() []ggufKV {
	return []ggufKV{
		kvStr("general.type", "imatrix"),
		kvStrs("imatrix.datasets", "wiki.train.raw"),
		kvU32("imatrix.chunk_count", 10),
		kvU32("imatrix.chunk_size", 512),
	}
}
