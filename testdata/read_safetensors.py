#!/usr/bin/env python3
"""An independent safetensors reader, for cross-checking tensorcast-go's.

Usage: python3 read_safetensors.py FILE.safetensors

Parses the file with nothing but json, struct and numpy (no safetensors or
torch package): a little-endian u64 header length N, N bytes of JSON, then the
data buffer that each tensor's data_offsets index. Prints one JSON object:

    {name: {"dtype": "BF16", "shape": [..], "sum": S, "first": [v0, v1, v2, v3]}}

where sum is the float64 sum of the values (each converted to float64) and
first holds the first (up to) 4 values in row-major order. BF16 is widened by
shifting its 16 bits into the top of a uint32 viewed as float32. A dtype this
reader does not decode gets "sum": null and "first": null.
"""

import json
import struct
import sys

import numpy as np

# safetensors dtype -> numpy dtype (little-endian); BF16 is handled apart.
NUMPY = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U64": "<u8",
    "U32": "<u4",
    "U16": "<u2",
    "U8": "u1",
    "BOOL": "?",
}


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: {len(raw)} bytes, too short for a header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise ValueError(f"{path}: header length {n} exceeds the file")
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    data = memoryview(raw)[8 + n :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype, shape = info["dtype"], [int(d) for d in info["shape"]]
        begin, end = (int(x) for x in info["data_offsets"])
        buf = data[begin:end]
        count = int(np.prod(shape, dtype=np.int64))
        if dtype == "BF16":
            bits = np.frombuffer(buf, dtype="<u2", count=count)
            arr = (bits.astype(np.uint32) << 16).view(np.float32)
        elif dtype in NUMPY:
            arr = np.frombuffer(buf, dtype=NUMPY[dtype], count=count)
        else:
            out[name] = {"dtype": dtype, "shape": shape, "sum": None, "first": None}
            continue
        arr = arr.reshape(shape)
        flat = arr.reshape(-1)
        first = [v.item() for v in flat[:4]]
        if arr.dtype.kind == "f":
            first = [float(v) for v in first]
        out[name] = {
            "dtype": dtype,
            "shape": list(arr.shape),
            "sum": float(np.sum(flat.astype(np.float64))),
            "first": first,
        }
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: read_safetensors.py FILE.safetensors")
    json.dump(load(sys.argv[1]), sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
