#!/usr/bin/env python3
"""Quantize tensors with ggml's own quantizers, for the output-quality test (TestOutputQuality).

Usage: python3 ggml_quantize.py IN.npz OUT.npz

IN.npz holds "manifest" (uint8: JSON text, a list of {"name", "type", "rows", "cols",
"importance"}) and, for each entry i, "x<i>" (float32 [rows, cols]: the tensor as the quantizer
sees it) and, where "importance" is true, "imp<i>" (float32 [cols]: the importance vector
llama-quantize would pass, the matrix's mean squared activations per column). OUT.npz gets "b<i>"
(uint8): the blocks ggml_quantize_chunk writes for x<i> in ggml's type named "type" (Q4_K, IQ4_XS,
...), with imp<i> as its quant_weights when given, exactly as llama-quantize calls it.

TCAST_GGML_LIB names libggml-base.so (node-llama-cpp's prebuilt CPU build, as in .ci/run); the
library is called through ctypes, so ggml's code runs, not a copy of it.
"""

import ctypes
import json
import os
import sys

import numpy as np

# ggml type ids (include/ggml.h).
TYPES = {"Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q2_K": 10, "Q3_K": 11, "Q4_K": 12,
         "Q5_K": 13, "Q6_K": 14, "IQ2_XXS": 16, "IQ2_XS": 17, "IQ3_XXS": 18, "IQ1_S": 19, "IQ4_NL": 20,
         "IQ3_S": 21, "IQ2_S": 22, "IQ4_XS": 23, "IQ1_M": 29, "MXFP4": 39}


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    lib = ctypes.CDLL(os.environ["TCAST_GGML_LIB"])
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                        ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    lib.ggml_row_size.restype = ctypes.c_size_t
    lib.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    lib.ggml_quantize_init.argtypes = [ctypes.c_int]
    src = np.load(sys.argv[1])
    manifest = json.loads(bytes(src["manifest"]).decode())
    out = {}
    for i, e in enumerate(manifest):
        tid = TYPES[e["type"]]
        x = np.ascontiguousarray(src[f"x{i}"], dtype=np.float32)
        rows, cols = e["rows"], e["cols"]
        if x.shape != (rows, cols):
            raise SystemExit(f"{e['name']}: x{i} has shape {x.shape}, want {(rows, cols)}")
        imp = None
        if e["importance"]:
            w = np.ascontiguousarray(src[f"imp{i}"], dtype=np.float32)
            imp = w.ctypes.data
        size = lib.ggml_row_size(tid, cols) * rows
        blocks = np.zeros(size, dtype=np.uint8)
        lib.ggml_quantize_init(tid)
        n = lib.ggml_quantize_chunk(tid, x.ctypes.data, blocks.ctypes.data, 0, rows, cols, imp)
        if n != size:
            raise SystemExit(f"{e['name']}: ggml_quantize_chunk wrote {n} bytes, want {size}")
        out[f"b{i}"] = blocks
    np.savez(sys.argv[2], **out)


if __name__ == "__main__":
    main()
