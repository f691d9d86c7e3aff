package layout

import (
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The schemes only pruned weights are written in (ctsparse.go): their
// values go whole into a sparse format's P.compressed, or into P.weight
// with the dense format.

// ctIntCodec is compressed-tensors' "int-quantized": symmetric int8 codes
// with a float tensor, channel or group scale (int8Whole maps datatypes to
// it).
var ctIntCodec = ctCodec{
	format: "int-quantized",
	whole:  safetensors.I8,
	derive: func(_ Source, _ string, out, in int, sinfo safetensors.TensorInfo) (
		*tcast.DataType, error) {
		return scaleDerive(fmtInt8, false, out, in, sinfo)
	},
}

// ctNoneCodec stands for no quantization: the pruned weights keep their
// float dtype (plainFloatDType maps datatypes to it; ctScheme.scaleDT is the
// values' dtype).
var ctNoneCodec = ctCodec{
	format: "dense",
	derive: func(src Source, p string, _, _ int, _ safetensors.TensorInfo) (*tcast.DataType, error) {
		cinfo, _, _ := src.Tensor(p + ".compressed")
		return tcast.MustLookup(floatFormatName[cinfo.DType]), nil
	},
}
