#!/usr/bin/python3
"""Golden cases for the compressed-tensors sparse formats, computed with NumPy.

Run by hand or through `go generate ./checkpoint/layout/` (needs NumPy, e.g.
Debian's python3-numpy for /usr/bin/python3):

    /usr/bin/python3 checkpoint/layout/testdata/ctsparse/gen_golden.py

It writes checkpoint/layout/testdata/ctsparse/golden.npz, which the Go test
ctsparse_numpy_test.go reads; the Go tests never run Python.

Every case is a float32 matrix x of shape [rows, cols], its values drawn from
a few small integers (so that many magnitudes tie) or from a normal
distribution, with some exact zeros. Independently of the Go code, with NumPy
only, the script computes:

  keep24   the 2:4 keep mask along the rows: in every group of four
           consecutive columns the two largest |x|, equal magnitudes going
           to the lower column (a stable argsort of -|x| per group)
  bm24     numpy.packbits(keep24, axis=-1, bitorder="little"): the bitmask
           compressed-tensors writes, ceil(cols/8) bytes per row
  c24      x[keep24] reshaped to [rows, cols/2]: sparse-24-bitmask's values
  keep48, bm48, c48, ro48
           the same for 4:8 (cases whose cols are a multiple of 8), with
           sparse-bitmask's 1-D values and its row offsets
           (cumsum(row counts) - row counts, int64)
  bmnz, cnz, ronz
           sparse-bitmask as compressed-tensors' own writer makes it from x:
           mask x != 0, values x[x != 0], row offsets

Arrays are named "<case>.<array>" in the archive.
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def nm_keep(x, n, m):
    rows, cols = x.shape
    g = np.abs(x).reshape(rows, cols // m, m)
    order = np.argsort(-g, axis=-1, kind="stable")[..., :n]
    keep = np.zeros(g.shape, dtype=bool)
    np.put_along_axis(keep, order, True, axis=-1)
    return keep.reshape(rows, cols)


def offsets(keep):
    counts = keep.sum(axis=-1).astype(np.int64)
    return np.cumsum(counts) - counts


def main():
    rng = np.random.default_rng(20261124)
    shapes = [(1, 8), (2, 8), (3, 12), (5, 20), (4, 36), (7, 64), (6, 100), (16, 128)]
    out = {}
    for i, (rows, cols) in enumerate(shapes):
        for kind in ("ties", "normal"):
            if kind == "ties":
                x = rng.integers(-3, 4, size=(rows, cols)).astype(np.float32)
            else:
                x = (rng.standard_normal((rows, cols)) * 2.0 ** rng.integers(-6, 6)).astype(np.float32)
                x[rng.random((rows, cols)) < 0.1] = 0
            name = f"c{i}_{kind}"
            out[name + ".x"] = x
            keep = nm_keep(x, 2, 4)
            out[name + ".keep24"] = keep.astype(np.uint8)
            out[name + ".bm24"] = np.packbits(keep, axis=-1, bitorder="little")
            out[name + ".c24"] = x[keep].reshape(rows, cols // 2)
            if cols % 8 == 0:
                keep = nm_keep(x, 4, 8)
                out[name + ".keep48"] = keep.astype(np.uint8)
                out[name + ".bm48"] = np.packbits(keep, axis=-1, bitorder="little")
                out[name + ".c48"] = x[keep]
                out[name + ".ro48"] = offsets(keep)
            nz = x != 0
            out[name + ".bmnz"] = np.packbits(nz, axis=-1, bitorder="little")
            out[name + ".cnz"] = x[nz]
            out[name + ".ronz"] = offsets(nz)
    np.savez(os.path.join(HERE, "golden.npz"), **out)


if __name__ == "__main__":
    main()
