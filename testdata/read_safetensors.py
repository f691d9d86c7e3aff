#!/usr/bin/env python3
"""An independent safetensors reader, for cross-checking tensorcast-go's.

Usage: python3 read_safetensors.py FILE.safetensors
       python3 read_safetensors.py FILE.npy

A .npy file is read with numpy.load and printed the same way, as one entry
named "array" whose dtype is numpy's (e.g. "<f4", "|u1", "<f2").

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


def e4m3fn(bits):
    """Decodes OCP FP8 E4M3 (torch float8_e4m3fn) codes to float32 by the
    format's definition: bias 7, subnormals below exponent code 1, no
    infinities, S.1111.111 NaN."""
    b = bits.astype(np.int32)
    sign = np.where(b & 0x80, -1.0, 1.0)
    exp = (b >> 3) & 0xF
    man = (b & 0x7).astype(np.float64)
    val = np.where(exp == 0, np.ldexp(man / 8, -6), np.ldexp(1 + man / 8, exp - 7))
    val = np.where((b & 0x7F) == 0x7F, np.nan, val)
    return (sign * val).astype(np.float32)


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
        elif dtype == "F8_E4M3":
            arr = e4m3fn(np.frombuffer(buf, dtype="u1", count=count))
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


def load_npy(path):
    arr = np.load(path, allow_pickle=False)
    flat = arr.reshape(-1)
    first = [v.item() for v in flat[:4]]
    if arr.dtype.kind == "f":
        first = [float(v) for v in first]
    return {
        "array": {
            "dtype": arr.dtype.str,
            "shape": list(arr.shape),
            "sum": float(np.sum(flat.astype(np.float64))),
            "first": first,
        }
    }


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: read_safetensors.py FILE.safetensors|FILE.npy")
    path = sys.argv[1]
    out = load_npy(path) if path.endswith(".npy") else load(path)
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
