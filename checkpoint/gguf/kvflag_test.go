package gguf

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKV(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want KV
	}{
		{"llama.block_count=int:12", KV{"llama.block_count", Uint32(12)}},
		{"a.b=int:-7", KV{"a.b", Uint32(7)}}, // llama-quantize stores |n| as uint32
		{"a.eps=float:1e-5", KV{"a.eps", Float32(1e-5)}},
		{"a.flag=bool:true", KV{"a.flag", Bool(true)}},
		{"a.flag=bool:false", KV{"a.flag", Bool(false)}},
		{"general.name=str:my model", KV{"general.name", String("my model")}},
		{"general.name=str:", KV{"general.name", String("")}},
		{"k=str:a=b:c", KV{"k", String("a=b:c")}},
	} {
		got, err := ParseKV(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	long := make([]byte, 128)
	for i := range long {
		long[i] = 'x'
	}
	for _, in := range []string{"", "novalue", "=int:1", "k=1", "k=int:x", "k=int:4294967296",
		"k=float:x", "k=bool:yes", "k=u32:1", "k=str:" + string(long), string(long) + "=int:1"} {
		_, err := ParseKV(in)
		var se *KVSyntaxError
		require.True(t, errors.As(err, &se), "%q: %v", in, err)
		assert.Equal(t, in, se.Value)
	}
}

func TestSetKV(t *testing.T) {
	kvs := []KV{{"a", Uint32(1)}, {"b", String("x")}}
	got := SetKV(kvs, KV{"b", String("y")}, KV{"c", Bool(true)}, KV{"a", Uint32(2)})
	assert.Equal(t, []KV{{"a", Uint32(2)}, {"b", String("y")}, {"c", Bool(true)}}, got)
	assert.Equal(t, Uint32(1), kvs[0].Value, "the input is not changed")
}

// FuzzParseKV: any text parses to a key and value of llama-quantize's
// types, or to a *KVSyntaxError naming it, and never panics.
func FuzzParseKV(f *testing.F) {
	for _, s := range []string{"a.b=int:1", "a=float:0.5", "a=bool:true", "a=str:x", "=", "a=int:", "a=str:="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kv, err := ParseKV(s)
		if err != nil {
			var se *KVSyntaxError
			require.True(t, errors.As(err, &se))
			return
		}
		require.NotEmpty(t, kv.Key)
		require.Contains(t, []ValueType{ValueUint32, ValueFloat32, ValueBool, ValueString}, kv.Value.Type())
	})
}
