#!/usr/bin/python3
"""NumPy's decodes of checkpoints converted with `tcast convert -scale-search`.

The scale search only changes which block scales are stored, so every loader
must read a searched file with its unchanged decoder. This script is such a
loader, written from the layouts' definitions (docs/LAYOUTS.md, docs/FORMAT.md
and the loaders' own dequantization arithmetic), with NumPy and Python's json
and struct only: no torch, no compressed-tensors package, nothing of ours.

Run it on the files the Go test writes (needs NumPy, e.g. Debian's
python3-numpy for /usr/bin/python3), from the repository's root:

    go test -count=1 -run TestScaleSearchNumPyDecode ./cmd/tcast/ -npdecode-out /tmp/npdecode
    /usr/bin/python3 cmd/tcast/testdata/npdecode/gen_golden.py /tmp/npdecode

It writes cmd/tcast/testdata/npdecode/golden.npz (or the path given with -o),
which cmd/tcast/npdecode_test.go reads; the Go tests never run Python. .ci/run
does both steps on every run, so a change in the converter or in this decoder
fails CI.

The directory holds src/ (the synth checkpoint the Go test converts) and,
per case, CASE/rule/ and CASE/search/ (the conversion without and with
-scale-search):

  ct_nvfp4           compressed-tensors nvfp4-pack-quantized
  ct_int4_g128       compressed-tensors pack-quantized, int4, groups of 128
  ct_fp8e4_block128  compressed-tensors float-quantized, 128x128 blocks
  modelopt_nvfp4     ModelOpt NVFP4
  gptoss_mxfp4       Hugging Face gpt-oss MXFP4 (_blocks/_scales)
  tcast_mxfp4        our tcast layout, mxfp4e2

How each weight is decoded (float32 arithmetic, each step rounded to nearest
even, as NumPy's float32 operations are):

  E2M1 nibble      sign = bit 3, magnitude = [0, .5, 1, 1.5, 2, 3, 4, 6][bits 2:0]
  F8_E4M3 (e4m3fn) sign bit 7, exponent bits 6:3 (bias 7), mantissa bits 2:0;
                   exponent 0 is subnormal (m/8 * 2^-6); S.1111.111 is NaN
  E8M0             2^(code - 127); 0xFF is NaN
  ct nvfp4         compressed-tensors' dequantize: m = float32(scale) / global_scale
                   (one float32 division per block), value = e2m1 * m
  ct int4          words of I32 hold 8 nibbles, value i of a row at bits 4*(i mod 8)
                   of word i/8; q = nibble - 8 (offset binary); value = q * scale,
                   group size from config.json (exact in float32: a 3-bit integer
                   times a float16; compressed-tensors returns it in the scale's
                   dtype, float16, the same product rounded once more)
  ct fp8 block     value = e4m3(w) * scale of the element's block, block size from
                   config.json's block_structure, partial last blocks
  modelopt nvfp4   ModelOpt's dequantize: m = float32(weight_scale) * weight_scale_2,
                   value = e2m1 * m
  gpt-oss mxfp4    transformers' dequantize: value = ldexp(e2m1, scale - 127)
                   over [out, in/32, 16] bytes, element 2k in the low nibble of byte k
  tcast mxfp4      tcast.weight.W metadata: parts as LSB-first bit streams,
                   value = element * 2^(scale - 127) per tile of the datatype

The archive holds, per case and cast weight W (NAME = "CASE/W"):

  NAME             float32, NumPy's decode of the searched file
  NAME/sqnr        float64 [rule, search]: 10 log10(sum x^2 / sum (x - y)^2) of
                   the decodes of the rule's and the searched file against the
                   source x (BF16 read as float32), in float64
  NAME/scalediff   int64 [2]: [entries of the weight's block-scale tensor that
                   differ between the rule's and the searched file, all its entries]
  NAME/rulesha256  uint8 [32]: SHA-256 of the decode of the rule's file, its
                   float32 values little-endian in row-major order

The loaders then convert the float32 values to their compute dtype
(compressed-tensors' NVFP4 decompressor to bfloat16, ModelOpt to the model's
dtype); the archive holds the float32 values before that conversion.
"""

import argparse
import hashlib
import json
import os
import re
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    "ct_nvfp4",
    "ct_int4_g128",
    "ct_fp8e4_block128",
    "modelopt_nvfp4",
    "gptoss_mxfp4",
    "tcast_mxfp4",
]

RAW = {
    "U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16, "I32": np.int32,
    "U32": np.uint32, "I64": np.int64, "F16": np.float16, "F32": np.float32, "F64": np.float64,
    "BF16": np.uint16, "F8_E4M3": np.uint8,
}


class SafeTensors:
    """A safetensors file: an 8-byte little-endian header length, the JSON
    header, then the tensors' bytes at the header's data_offsets."""

    def __init__(self, path):
        with open(path, "rb") as f:
            raw = f.read()
        (n,) = struct.unpack("<Q", raw[:8])
        self.header = json.loads(raw[8:8 + n])
        self.meta = self.header.pop("__metadata__", {}) or {}
        self.data = raw[8 + n:]

    def names(self):
        return sorted(self.header)

    def raw(self, name):
        """The tensor as stored: its dtype's bits as a NumPy integer or float array."""
        info = self.header[name]
        begin, end = info["data_offsets"]
        a = np.frombuffer(self.data[begin:end], dtype=np.dtype(RAW[info["dtype"]]).newbyteorder("<"))
        return a.reshape(info["shape"])

    def dtype(self, name):
        return self.header[name]["dtype"]

    def float32(self, name):
        """A float tensor as float32 (BF16 is the top half of a float32)."""
        a = self.raw(name)
        if self.dtype(name) == "BF16":
            return (a.astype(np.uint32) << 16).view(np.float32)
        return a.astype(np.float32)


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float32)


def e2m1(nibbles):
    nibbles = np.asarray(nibbles, dtype=np.uint8)
    v = E2M1[nibbles & 7]
    return np.where(nibbles & 8, -v, v).astype(np.float32)


def e4m3fn(codes):
    c = np.asarray(codes, dtype=np.uint8).astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exp = (c >> 3) & 0xF
    man = c & 7
    mag = np.where(exp == 0, man / 8.0 * 2.0 ** -6, (1 + man / 8.0) * np.exp2(exp - 7.0))
    v = sign * mag
    v = np.where((c & 0x7F) == 0x7F, np.nan, v)
    return v.astype(np.float32)  # exact: at most 4 significant bits


def e8m0(codes):
    c = np.asarray(codes, dtype=np.uint8).astype(np.int64)
    v = np.exp2(c - 127.0)
    return np.where(c == 0xFF, np.nan, v).astype(np.float32)  # exact, 2^-127 included


def nibbles_low_first(packed):
    """U8 [..., n] -> [..., 2n]: element 2k in bits 3:0 of byte k, 2k+1 in bits 7:4."""
    p = np.asarray(packed, dtype=np.uint8)
    out = np.empty(p.shape[:-1] + (2 * p.shape[-1],), dtype=np.uint8)
    out[..., 0::2] = p & 0x0F
    out[..., 1::2] = p >> 4
    return out


def bitstream(data, bits, count):
    """An LSB-first bit stream: entry i is stream bits i*bits .. i*bits+bits-1,
    stream bit 8k+j being bit j of byte k."""
    stream = np.unpackbits(np.asarray(data, dtype=np.uint8), bitorder="little")
    stream = stream[: count * bits].reshape(count, bits).astype(np.uint64)
    return (stream << np.arange(bits, dtype=np.uint64)).sum(axis=1)


def quant_args(config):
    qc = config["quantization_config"]
    groups = qc["config_groups"]
    (group,) = groups.values()
    return qc["format"], group["weights"]


def decode_ct(st, config):
    """compressed-tensors: every P with P.weight_scale beside P.weight_packed or P.weight."""
    fmt, args = quant_args(config)
    out = {}
    for name in st.names():
        if not name.endswith(".weight_scale"):
            continue
        p = name[: -len(".weight_scale")]
        scale_raw = st.raw(name)
        if fmt == "nvfp4-pack-quantized":
            assert st.dtype(p + ".weight_scale") == "F8_E4M3"
            g = st.float32(p + ".weight_global_scale").reshape(())
            m = e4m3fn(scale_raw) / g  # float32 / float32: compressed-tensors' scale / global_scale
            assert m.dtype == np.float32
            e = e2m1(nibbles_low_first(st.raw(p + ".weight_packed")))
            gs = e.shape[1] // m.shape[1]
            assert gs == args["group_size"] == 16
            y = e * np.repeat(m, gs, axis=1)
        elif fmt == "pack-quantized":
            assert args["type"] == "int" and args["symmetric"] and args["num_bits"] == 4
            rows, cols = (int(v) for v in st.raw(p + ".weight_shape"))
            words = st.raw(p + ".weight_packed").view(np.uint32)
            assert words.shape == (rows, -(-cols // 8))
            nib = (words[:, :, None] >> (4 * np.arange(8, dtype=np.uint32))) & 0xF
            q = nib.reshape(rows, -1)[:, :cols].astype(np.int64) - 8
            s = st.float32(name)
            gs = args["group_size"] if args["strategy"] == "group" else cols
            assert s.shape == (rows, cols // gs)
            srep = np.repeat(s, gs, axis=1)
            y = q.astype(np.float32) * srep
            assert np.array_equal(y.astype(np.float64), q * srep.astype(np.float64)), p  # exact
        elif fmt == "float-quantized":
            assert args["type"] == "float" and args["num_bits"] == 8 and args["strategy"] == "block"
            b0, b1 = args["block_structure"]
            w = e4m3fn(st.raw(p + ".weight"))
            s = st.float32(name)
            rows, cols = w.shape
            assert s.shape == (-(-rows // b0), -(-cols // b1))
            srep = np.repeat(np.repeat(s, b0, axis=0), b1, axis=1)[:rows, :cols]
            y = w * srep
        else:
            raise SystemExit(f"compressed-tensors format {fmt!r} is not decoded here")
        assert y.dtype == np.float32
        out[p + ".weight"] = (y, scale_raw)
    return out


def decode_modelopt(st):
    out = {}
    for name in st.names():
        if not name.endswith(".weight_scale_2"):
            continue
        p = name[: -len(".weight_scale_2")]
        s2 = st.float32(name).reshape(())
        scale_raw = st.raw(p + ".weight_scale")
        m = e4m3fn(scale_raw) * s2  # ModelOpt: per_block_scale = scale.float() * double_scale
        e = e2m1(nibbles_low_first(st.raw(p + ".weight")))
        gs = e.shape[1] // m.shape[1]
        assert gs == 16
        y = e * np.repeat(m, gs, axis=1)
        assert y.dtype == np.float32
        out[p + ".weight"] = (y, scale_raw)
    return out


def decode_gptoss(st):
    out = {}
    for name in st.names():
        if not name.endswith("_blocks"):
            continue
        base = name[: -len("_blocks")]
        blocks = st.raw(name)
        scale_raw = st.raw(base + "_scales")
        assert blocks.ndim == 3 and blocks.shape[-1] == 16 and scale_raw.shape == blocks.shape[:2]
        e = e2m1(nibbles_low_first(blocks))  # [out, in/32, 32]
        y = np.ldexp(e, scale_raw.astype(np.int32)[..., None] - 127)
        y = np.where(scale_raw[..., None] == 0xFF, np.float32(np.nan), y)
        y = y.reshape(blocks.shape[0], -1)
        assert y.dtype == np.float32
        out[base + ".weight"] = (y, scale_raw)
    return out


FORMATS = {"float4_e2m1fn": (4, e2m1), "float8_e8m0fnu": (8, e8m0)}


def decode_tcast(st):
    assert st.meta.get("tcast.format") == "2", st.meta.get("tcast.format")
    out = {}
    for key, desc in st.meta.items():
        if not key.startswith("tcast.weight."):
            continue
        w = key[len("tcast.weight."):]
        d = json.loads(desc)
        m = re.fullmatch(r"(float4_e2m1fn)_(float8_e8m0fnu)_t(\d+)", d["datatype"])
        assert m, d["datatype"]
        tile = int(m.group(3))
        parts = d["parts"]
        assert set(parts) == {"data", "scale"}, parts.keys()
        shape, axis = d["shape"], d["axis"]
        assert len(shape) == 2 and axis == 1

        def part(role):
            p = parts[role]
            bits, dec = FORMATS[p["format"]]
            assert p["bits"] == bits and p["packed"] and st.dtype(p["tensor"]) == "U8"
            n = int(np.prod(p["shape"]))
            codes = bitstream(st.raw(p["tensor"]), bits, n).astype(np.uint8)
            return dec(codes).reshape(p["shape"]), codes.reshape(p["shape"])

        elem, _ = part("data")
        scale, scale_codes = part("scale")
        assert scale.shape == (shape[0], -(-shape[1] // tile))
        y = elem * np.repeat(scale, tile, axis=1)[:, : shape[1]]
        assert y.dtype == np.float32
        out[w] = (y, scale_codes)
    return out


def decode(case, path):
    st = SafeTensors(os.path.join(path, "model.safetensors"))
    config = {}
    if os.path.exists(os.path.join(path, "config.json")):
        with open(os.path.join(path, "config.json")) as f:
            config = json.load(f)
    method = config.get("quantization_config", {}).get("quant_method")
    if case.startswith("ct_"):
        assert method == "compressed-tensors", method
        return decode_ct(st, config)
    if case.startswith("modelopt_"):
        assert method == "modelopt", method
        return decode_modelopt(st)
    if case.startswith("gptoss_"):
        assert method == "mxfp4", method
        return decode_gptoss(st)
    if case.startswith("tcast_"):
        return decode_tcast(st)
    raise SystemExit(f"unknown case {case}")


def sqnr(x, y):
    x = x.astype(np.float64)
    err = np.sum((x - y.astype(np.float64)) ** 2)
    return 10 * np.log10(np.sum(x * x) / err)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="the -npdecode-out directory of the Go test")
    ap.add_argument("-o", default=os.path.join(HERE, "golden.npz"), help="the archive to write")
    a = ap.parse_args()

    src = SafeTensors(os.path.join(a.dir, "src", "model.safetensors"))
    out = {}
    for case in CASES:
        rule = decode(case, os.path.join(a.dir, case, "rule"))
        search = decode(case, os.path.join(a.dir, case, "search"))
        assert sorted(rule) == sorted(search) and rule, (case, sorted(rule), sorted(search))
        for w in sorted(search):
            x = src.float32(w)
            (yr, sr), (ys, ss) = rule[w], search[w]
            assert x.shape == yr.shape == ys.shape, (case, w)
            diff = int(np.count_nonzero(sr != ss))
            out[f"{case}/{w}"] = ys
            out[f"{case}/{w}/sqnr"] = np.array([sqnr(x, yr), sqnr(x, ys)])
            out[f"{case}/{w}/scalediff"] = np.array([diff, sr.size], dtype=np.int64)
            digest = hashlib.sha256(yr.astype("<f4").tobytes()).digest()
            out[f"{case}/{w}/rulesha256"] = np.frombuffer(digest, dtype=np.uint8)
            print(f"{case:18s} {w:40s} rule {sqnr(x, yr):7.3f} dB  search {sqnr(x, ys):7.3f} dB  "
                  f"{diff}/{sr.size} scales differ")
    np.savez_compressed(a.o, **out)
    n = sum(1 for k in out if k.count("/") == 1)
    print(f"wrote {a.o}: NumPy's decodes of {n} searched weights in {len(CASES)} layouts")


if __name__ == "__main__":
    sys.exit(main())
