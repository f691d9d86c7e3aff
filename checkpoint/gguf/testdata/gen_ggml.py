#!/usr/bin/python3
"""Golden files of ggml's block quantizers and dequantizers, for package gguf.

ggml itself is the oracle: libggml-base.so of the npm package
@node-llama-cpp/linux-x64 3.22.1 (a prebuilt llama.cpp CPU build), called
through ctypes. Install it with

    NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --ignore-scripts --omit=optional \\
        --prefix DIR node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1

and point TCAST_GGML_LIB at DIR/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so
(or pass --lib). Needs /usr/bin/python3 with numpy. Run from anywhere:

    /usr/bin/python3 checkpoint/gguf/testdata/gen_ggml.py            # write the goldens
    /usr/bin/python3 checkpoint/gguf/testdata/gen_ggml.py --check D  # check our blocks in D
    /usr/bin/python3 checkpoint/gguf/testdata/gen_ggml.py --bench    # time ggml's quantizers

Generating writes checkpoint/gguf/testdata/ggml/manifest.json and data.bin. The
inputs are "tensors" of float32 rows (row lengths multiples of 256): random
ones drawn with numpy (seeded; their float32 values are stored, so the Go side
never needs numpy's generator) and real ones, rows of the BF16 weights of the
repository's fixture testdata/iris.bf16.safetensors. Every tensor has an
importance vector (one positive weight per column, log-normal with a few
zeros, like an imatrix). For every tensor, type and importance (none, or the
vector) the manifest records:

    blocks        ggml_quantize_chunk's blocks (type traits' from_float_ref
                  for Q8_K, which ggml_quantize_chunk does not take and which
                  ignores the importance), stored in data.bin
    floats_sha256 the SHA-256 of the float32 little-endian bytes that ggml's
                  to_float (dequantize_row_q8_K for Q8_K) gives for them
    sqnr          10·log10(Σx² / Σ(x−y)²) of those floats y against the input x
    wsqnr         the same with every term weighted by its column's importance

The IQ1, IQ2 and IQ3 grid types need ggml_quantize_init, which is called
before each; IQ2_XXS, IQ2_XS and IQ1_S (NEEDS_IMATRIX) have only the cases
with the importance vector, as ggml quantizes them only with one.

The Go tests (ggml_golden_test.go) read these files and check that our
decoders give ggml's floats for ggml's blocks, bit for bit, and that our
quantizers' SQNR is at least ggml's minus 0.05 dB per tensor and type, with
and without the importance vector.

--check D reads D/manifest.json and D/data.bin written by the Go test
TestGGMLWriteOurs (go test ./checkpoint/gguf -run TestGGMLWriteOurs
-ggml-out D): our blocks for the same cases with the SHA-256 of our decoder's
floats; it decodes our blocks with ggml's to_float, requires the same floats
bit for bit, and prints our SQNR beside ggml's.
"""

import argparse
import ctypes
import hashlib
import json
import os
import struct
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
OUT = os.path.join(HERE, "ggml")

# ggml type ids (include/ggml.h) and block geometry.
TYPES = {
    "Q4_0": (2, 32, 18),
    "Q4_1": (3, 32, 20),
    "Q5_0": (6, 32, 22),
    "Q5_1": (7, 32, 24),
    "Q2_K": (10, 256, 84),
    "Q3_K": (11, 256, 110),
    "Q4_K": (12, 256, 144),
    "Q5_K": (13, 256, 176),
    "Q6_K": (14, 256, 210),
    "Q8_K": (15, 256, 292),
    "IQ2_XXS": (16, 256, 66),
    "IQ2_XS": (17, 256, 74),
    "IQ3_XXS": (18, 256, 98),
    "IQ1_S": (19, 256, 50),
    "IQ4_NL": (20, 32, 18),
    "IQ3_S": (21, 256, 110),
    "IQ2_S": (22, 256, 82),
    "IQ4_XS": (23, 256, 136),
    "IQ1_M": (29, 256, 56),
    "TQ1_0": (34, 256, 54),
    "TQ2_0": (35, 256, 66),
    "Q1_0": (41, 128, 18),
    "Q2_0": (42, 64, 18),
}


# The types ggml quantizes only with an importance matrix (it aborts
# without one): their cases are only those with the importance vector.
NEEDS_IMATRIX = {"IQ2_XXS", "IQ2_XS", "IQ1_S"}


class TypeTraits(ctypes.Structure):
    _fields_ = [
        ("type_name", ctypes.c_char_p),
        ("blck_size", ctypes.c_int64),
        ("blck_size_interleave", ctypes.c_int64),
        ("type_size", ctypes.c_size_t),
        ("is_quantized", ctypes.c_bool),
        ("to_float", ctypes.c_void_p),
        ("from_float_ref", ctypes.c_void_p),
    ]


TO_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
FROM_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)


class GGML:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        lib = self.lib
        lib.ggml_get_type_traits.restype = ctypes.POINTER(TypeTraits)
        lib.ggml_get_type_traits.argtypes = [ctypes.c_int]
        lib.ggml_quantize_chunk.restype = ctypes.c_size_t
        lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                            ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
        lib.ggml_quantize_requires_imatrix.restype = ctypes.c_bool
        lib.ggml_quantize_requires_imatrix.argtypes = [ctypes.c_int]
        lib.ggml_quantize_init.argtypes = [ctypes.c_int]
        for name in ("quantize_row_q8_K_ref", "dequantize_row_q8_K"):
            getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]

    def check_traits(self, name):
        tid, bs, bb = TYPES[name]
        tt = self.lib.ggml_get_type_traits(tid).contents
        if tt.blck_size != bs or tt.type_size != bb:
            sys.exit(f"{name}: ggml says {tt.blck_size} elements in {tt.type_size} bytes, we say {bs} in {bb}")
        if self.lib.ggml_quantize_requires_imatrix(tid) != (name in NEEDS_IMATRIX):
            sys.exit(f"{name}: ggml's ggml_quantize_requires_imatrix disagrees with NEEDS_IMATRIX")

    def quantize(self, name, x, imatrix):
        """ggml's blocks for the rows of x (float32, [rows, cols])."""
        tid, bs, bb = TYPES[name]
        rows, cols = x.shape
        out = np.zeros(rows * cols // bs * bb, dtype=np.uint8)
        x = np.ascontiguousarray(x, dtype=np.float32)
        if name == "Q8_K":  # not in ggml_quantize_chunk; no importance
            self.lib.quantize_row_q8_K_ref(x.ctypes.data, out.ctypes.data, x.size)
            return out
        imp = None
        if imatrix is not None:
            imatrix = np.ascontiguousarray(imatrix, dtype=np.float32)
            imp = imatrix.ctypes.data
        self.lib.ggml_quantize_init(tid)  # the IQ grids' tables
        n = self.lib.ggml_quantize_chunk(tid, x.ctypes.data, out.ctypes.data, 0, rows, cols, imp)
        if n != out.size:
            sys.exit(f"{name}: ggml_quantize_chunk wrote {n} bytes, want {out.size}")
        return out

    def dequantize(self, name, blocks, n):
        tid, bs, bb = TYPES[name]
        if len(blocks) != n // bs * bb:
            sys.exit(f"{name}: {len(blocks)} bytes for {n} elements")
        blocks = np.ascontiguousarray(blocks, dtype=np.uint8)
        y = np.zeros(n, dtype=np.float32)
        if name == "Q8_K":
            self.lib.dequantize_row_q8_K(blocks.ctypes.data, y.ctypes.data, n)
            return y
        tt = self.lib.ggml_get_type_traits(tid).contents
        TO_FLOAT(tt.to_float)(blocks.ctypes.data, y.ctypes.data, n)
        return y


def sqnr(x, y, w=None):
    x = x.astype(np.float64)
    d = y.astype(np.float64) - x
    if w is None:
        s, e = np.sum(x * x), np.sum(d * d)
    else:
        w = np.broadcast_to(w.astype(np.float64), x.shape)
        s, e = np.sum(w * x * x), np.sum(w * d * d)
    if e == 0:
        return None  # exact: infinite
    if s == 0:
        return float("-inf")
    return float(10 * np.log10(s / e))


def read_bf16_safetensors(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "BF16":
            continue
        lo, hi = info["data_offsets"]
        raw = np.frombuffer(b[8 + n + lo:8 + n + hi], dtype="<u2")
        out[name] = (raw.astype(np.uint32) << 16).view(np.float32)
    return out


def make_tensors():
    """The inputs: name → float32 [rows, cols]."""
    rng = np.random.default_rng(20260413)
    t = {}
    t["gauss"] = (0.02 * rng.standard_normal((8, 512))).astype(np.float32)
    t["laplace"] = rng.laplace(0, 0.01, (8, 512)).astype(np.float32)
    x = 0.02 * rng.standard_normal((4, 1024))
    mask = rng.random(x.shape) < 0.005
    x[mask] *= 25
    t["outliers"] = x.astype(np.float32)
    # Rows of very different scales and a few loud columns, as real layers have.
    x = rng.standard_normal((8, 256)) * np.logspace(-3, 1, 8)[:, None]
    x[:, rng.choice(256, 6, replace=False)] *= 8
    t["rowscale"] = x.astype(np.float32)
    t["positive"] = rng.uniform(0.1, 1.0, (4, 256)).astype(np.float32)
    t["shifted"] = (0.3 + 0.05 * rng.standard_normal((4, 256))).astype(np.float32)
    # Edge rows: a zero super-block, tiny values, a constant, a lone element,
    # a block of two values.
    e = np.zeros((4, 512), dtype=np.float64)
    e[0, 256:] = 1e-7 * rng.standard_normal(256)
    e[1, :256] = 0.5
    e[1, 256 + 17] = -3.0
    e[2, :] = np.where(rng.random(512) < 0.5, -1.0, 2.0)
    e[3, :] = rng.standard_normal(512) * np.repeat(np.logspace(-6, 2, 16), 32)
    t["edges"] = e.astype(np.float32)

    # Real weights: rows of the fixture's BF16 tensors.
    real = read_bf16_safetensors(os.path.join(REPO, "testdata", "iris.bf16.safetensors"))
    for name, rows, cols in (("unknown_344", 16, 1024), ("conv2d_44/Conv2D_weights", 16, 512),
                             ("conv2d_9/Conv2D_weights", 32, 256)):
        v = real[name][: rows * cols]
        t["iris:" + name] = v.reshape(rows, cols).astype(np.float32)
    return t


def importance(rng, cols):
    w = np.exp(1.5 * rng.standard_normal(cols))
    w[rng.random(cols) < 0.02] = 0
    return w.astype(np.float32)


def generate(g):
    tensors = make_tensors()
    rng = np.random.default_rng(7)
    data = bytearray()
    manifest = {"oracle": "libggml-base.so of @node-llama-cpp/linux-x64 3.22.1", "tensors": [], "cases": []}

    def put(arr):
        off = len(data)
        data.extend(np.ascontiguousarray(arr).tobytes())
        while len(data) % 16:
            data.append(0)
        return off

    for name, x in tensors.items():
        rows, cols = x.shape
        imp = importance(rng, cols)
        manifest["tensors"].append({"name": name, "rows": rows, "cols": cols,
                                    "offset": put(x.astype("<f4")), "importance_offset": put(imp.astype("<f4"))})
        for tname in TYPES:
            g.check_traits(tname)
            for use_imp in (False, True):
                if tname == "Q8_K" and use_imp or tname in NEEDS_IMATRIX and not use_imp:
                    continue
                blocks = g.quantize(tname, x, imp if use_imp else None)
                y = g.dequantize(tname, blocks, x.size).reshape(x.shape)
                manifest["cases"].append({
                    "tensor": name, "type": tname, "importance": use_imp,
                    "blocks_offset": put(blocks), "blocks_len": len(blocks),
                    "floats_sha256": hashlib.sha256(y.astype("<f4").tobytes()).hexdigest(),
                    "sqnr": sqnr(x, y), "wsqnr": sqnr(x, y, imp),
                })
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "data.bin"), "wb") as f:
        f.write(bytes(data))
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"wrote {len(manifest['cases'])} cases, {len(data)} bytes of data to {OUT}")


def check(g, d):
    """Decode our blocks with ggml and compare with our floats."""
    with open(os.path.join(OUT, "manifest.json")) as f:
        golden = json.load(f)
    with open(os.path.join(OUT, "data.bin"), "rb") as f:
        gdata = f.read()
    with open(os.path.join(d, "manifest.json")) as f:
        ours = json.load(f)
    with open(os.path.join(d, "data.bin"), "rb") as f:
        odata = f.read()
    tensors = {}
    for t in golden["tensors"]:
        n = t["rows"] * t["cols"]
        x = np.frombuffer(gdata, dtype="<f4", count=n, offset=t["offset"]).reshape(t["rows"], t["cols"])
        w = np.frombuffer(gdata, dtype="<f4", count=t["cols"], offset=t["importance_offset"])
        tensors[t["name"]] = (x, w)
    theirs = {(c["tensor"], c["type"], c["importance"]): c for c in golden["cases"]}
    bad = 0
    print(f"{'tensor':32} {'type':7} {'imp':3} {'ours':>8} {'ggml':>8} {'diff':>7}")
    for c in ours["cases"]:
        x, w = tensors[c["tensor"]]
        blocks = np.frombuffer(odata, dtype=np.uint8, count=c["blocks_len"], offset=c["blocks_offset"])
        y = g.dequantize(c["type"], blocks, x.size).reshape(x.shape)
        h = hashlib.sha256(y.astype("<f4").tobytes()).hexdigest()
        if h != c["floats_sha256"]:
            print(f"MISMATCH {c['tensor']} {c['type']} importance={c['importance']}: "
                  "ggml's to_float of our blocks differs from our decoder's floats")
            bad += 1
        g_case = theirs.get((c["tensor"], c["type"], c["importance"]))
        if g_case:
            key = "wsqnr" if c["importance"] else "sqnr"
            o = sqnr(x, y, w if c["importance"] else None)
            t = g_case[key]
            if o is not None and t is not None:
                print(f"{c['tensor'][:32]:32} {c['type']:7} {'yes' if c['importance'] else 'no':3} "
                      f"{o:8.3f} {t:8.3f} {o - t:+7.3f}")
    if bad:
        sys.exit(f"{bad} of {len(ours['cases'])} cases: ggml decodes our blocks differently")
    print(f"ggml decodes all {len(ours['cases'])} cases of our blocks to our floats, bit for bit")


def bench(g):
    """ggml's quantizers on one core: 1024×4096 Gaussian float32 (256 rows for IQ4_NL), the grids'
    tables built before the clock starts, in ns per element as BenchmarkKQuant reports them."""
    rng = np.random.default_rng(1)
    rows, cols = 1024, 4096
    x = (0.02 * rng.standard_normal((rows, cols))).astype(np.float32)
    imp = importance(rng, cols)
    for name in TYPES:
        if name != "Q8_K":
            g.lib.ggml_quantize_init(TYPES[name][0])
        for use in (False, True):
            if name == "Q8_K" and use or name in NEEDS_IMATRIX and not use:
                continue
            r = rows if name not in ("IQ4_NL",) else rows // 4
            t0 = time.perf_counter()
            g.quantize(name, x[:r], imp if use else None)
            dt = time.perf_counter() - t0
            print(f"{name:7} importance={'yes' if use else 'no ':3} {dt / (r * cols) * 1e9:9.2f} ns/element")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.environ.get("TCAST_GGML_LIB", ""), help="path of libggml-base.so")
    ap.add_argument("--check", metavar="DIR", help="check our blocks written to DIR by the Go test")
    ap.add_argument("--bench", action="store_true", help="time ggml's quantizers")
    a = ap.parse_args()
    if not a.lib:
        sys.exit("set TCAST_GGML_LIB or pass --lib: the libggml-base.so of @node-llama-cpp/linux-x64 3.22.1")
    g = GGML(a.lib)
    if a.bench:
        bench(g)
    elif a.check:
        check(g, a.check)
    else:
        generate(g)


if __name__ == "__main__":
    main()
