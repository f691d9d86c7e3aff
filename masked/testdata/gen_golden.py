#!/usr/bin/python3
"""Golden cases for package masked, computed by torch.masked (PyTorch 1.13).

Run by hand or through `go generate ./masked/` (needs Debian's python3-torch,
i.e. /usr/bin/python3 with torch 1.13):

    /usr/bin/python3 masked/testdata/gen_golden.py

It writes masked/testdata/golden/<op>.json, one JSON case per line. The Go tests
(golden_test.go) read those files; they never run Python.

Every case draws a random shape (rank 0 to 4), a mask shape that broadcasts to
it ([3,1,1] or [5] against [3,4,5], or the full shape), a random mask, random
reduction dimensions (one, several, all, negative ones) and keepdim, data of one
of three kinds:

    int     multiples of 1/2 in [-8, 8]: sums and means are exact in float32
    pow2    0 and ±2^k, k in -2..2: sums and products are exact
    normal  3 × standard normal: nothing is exact, compared with a tolerance

and then puts NaN, +Inf or -Inf at about 40% of the masked-out positions (they
must never leak into a result) and, in a quarter of the cases, at a few kept
positions (where they must propagate as torch propagates them). Data are
float32 or float64; float32 cases also run with dtype=torch.float64 (the Go
side's AccFloat64).

The expected output is torch.masked._ops.<op> called with mask=..., and the
expected output mask is torch.masked._ops._output_mask, i.e. torch's own
definition: the any of the broadcast mask over the reduced dimensions for a
reduction, the broadcast mask for a normalization. torch 1.13 lacks or gets
wrong a few things; there the expected value is computed with plain torch on
the masked-in values of each slice, and the case's "source" field says so:

  * median, argmax, argmin over several dimensions or all of them: torch.masked
    takes one dimension only (median with dim=None even reduces dimension 0).
    Derived: torch.nanmedian / torch.argmax / torch.argmin of the kept values of
    each slice (in row-major order of the reduced dimensions).
  * argmax / argmin where torch.masked points at a masked-out element: it fills
    masked-out elements with -inf (+inf) and torch.argmax picks the first of
    equal values, so a kept -inf (+inf) maximum (minimum) loses to a masked-out
    filler before it. Derived as above for those slices.
  * norm and normalize of a negative finite order: torch.masked fills
    masked-out elements with 0, whose |0|^p is +inf, so every slice with a
    masked-out element gets norm 0. Derived: torch.linalg.vector_norm of the
    kept values (a fully masked slice has no value in torch; the Go side
    documents +Inf, and the output mask is false there).
  * logaddexp has no output mask in torch; a masked-out operand is filled with
    -inf (the identity), so the golden mask is input_mask | other_mask.

Values of fully masked outputs are compared where torch defines them (see the
Go test); argmax/argmin there are undefined in torch (it returns 0).
"""

import json
import math
import os
import random
import warnings

import torch
import torch.masked._ops as M

warnings.filterwarnings("ignore")

SEED = 1113
CASES = 72  # per op, before the dtype/accumulation variants
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin", "argmax", "argmin", "median",
              "var", "std", "norm", "logsumexp"]
SCANS = ["cumsum", "cumprod", "softmax", "log_softmax", "softmin", "normalize"]
ONE_DIM = {"argmax", "argmin", "median"}  # torch.masked takes an int dim
# Ops whose result depends on the accumulation type (run with dtype=float64 too).
ACCUMULATING = {"sum", "prod", "mean", "var", "std", "norm", "logsumexp", "cumsum",
                "cumprod", "softmax", "log_softmax", "softmin", "normalize", "logaddexp"}
KINDS = {
    "prod": ["pow2", "normal"],
    "cumprod": ["pow2", "normal"],
}
DEFAULT_KINDS = ["int", "pow2", "normal"]
NORM_ORDS = [2.0, 1.0, 0.0, math.inf, -math.inf, 3.0, 0.5, -1.0, -2.5]


def jnum(v):
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Inf" if v > 0 else "-Inf"
    return v


def rand_shape(rng):
    r = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
    return [rng.randint(1, 4 if r == 4 else 5) for _ in range(r)]


def rand_mask_shape(rng, shape):
    u = rng.random()
    if u < 0.5 or not shape:
        return list(shape)
    k = rng.randint(0 if u < 0.6 else 1, len(shape))
    ms = list(shape[len(shape) - k:])
    for i in range(len(ms)):
        if rng.random() < 0.4:
            ms[i] = 1
    return ms


def rand_data(rng, gen, shape, kind, dtype):
    n = math.prod(shape)
    if kind == "int":
        vals = [rng.randint(-16, 16) / 2 for _ in range(n)]
        t = torch.tensor(vals, dtype=torch.float64)
    elif kind == "pow2":
        vals = [rng.choice([0.0, 0.25, 0.5, 1.0, 2.0, 4.0]) * rng.choice([1, -1]) for _ in range(n)]
        t = torch.tensor(vals, dtype=torch.float64)
    else:
        t = torch.randn(n, generator=gen, dtype=torch.float64) * 3
    return t.reshape(shape).to(dtype)


def put_specials(rng, data, bmask, kept_too):
    flat = data.reshape(-1).clone()
    m = bmask.reshape(-1)
    for i in range(flat.numel()):
        if not m[i]:
            if rng.random() < 0.4:
                flat[i] = rng.choice([math.nan, math.inf, -math.inf])
        elif kept_too and rng.random() < 0.06:
            flat[i] = rng.choice([math.nan, math.inf, -math.inf])
    return flat.reshape(data.shape)


def rand_mask(rng, gen, mshape):
    p = rng.choice([0.15, 0.5, 0.5, 0.85, 1.0])
    m = torch.rand(mshape, generator=gen, dtype=torch.float64) < p
    if rng.random() < 0.05:
        m = torch.zeros(mshape, dtype=torch.bool)
    return m


def rand_dims(rng, rank, one):
    """Returns (dims for the Go side: None or a list, torch argument)."""
    if one:
        if rank == 0 or rng.random() < 0.15:
            return None, None
        d = rng.randrange(rank)
        if rng.random() < 0.3:
            d -= rank
        return [d], d
    u = rng.random()
    if u < 0.2 or rank == 0:
        return None, None
    k = rng.randint(1, rank)
    ds = sorted(rng.sample(range(rank), k))
    ds = [d - rank if rng.random() < 0.3 else d for d in ds]
    if len(ds) == 1 and rng.random() < 0.5:
        return ds, ds[0]
    return ds, tuple(ds)


def canonical(dims, rank):
    if dims is None:
        return list(range(rank))
    return sorted(d % max(rank, 1) for d in dims if rank > 0)


def slices_of(x, bmask, dims):
    """Moves the reduced dims last: (values [nOut, nRed], mask [nOut, nRed], kept dims)."""
    rank = x.dim()
    red = canonical(dims, rank)
    kept = [d for d in range(rank) if d not in red]
    perm = kept + red
    n_out = math.prod(x.shape[d] for d in kept)
    xv = x.permute(perm).reshape(n_out, -1) if rank else x.reshape(1, 1)
    mv = bmask.permute(perm).reshape(n_out, -1) if rank else bmask.reshape(1, 1)
    return xv, mv, kept, red


def derive_reduction(x, bmask, dims, keepdim, fn, dtype):
    """Plain torch on the kept values of each slice: fn(kept_values, positions)."""
    xv, mv, kept, red = slices_of(x, bmask, dims)
    out = []
    for r in range(xv.shape[0]):
        pos = mv[r].nonzero().reshape(-1)
        out.append(fn(xv[r][pos], pos))
    shape = [x.shape[d] if d in kept else 1 for d in range(x.dim())] if keepdim else [x.shape[d] for d in kept]
    return torch.tensor(out, dtype=dtype).reshape(shape)


def kept_arg(vals, pos, largest):
    if vals.numel() == 0:
        return 0  # undefined (output mask false)
    i = torch.argmax(vals) if largest else torch.argmin(vals)
    return int(pos[i])


def kept_median(vals, pos):
    vals = vals[~torch.isnan(vals)]
    if vals.numel() == 0:
        return math.nan
    return float(torch.nanmedian(vals))


def kept_norm(vals, pos, ord):
    if vals.numel() == 0:
        return math.inf if ord < 0 else 0.0  # no value in torch; output mask false
    return float(torch.linalg.vector_norm(vals, ord))


def tensor_json(t):
    return [jnum(v) for v in t.reshape(-1).tolist()]


def mask_json(m):
    return [1 if b else 0 for b in m.reshape(-1).tolist()]


def make_case(rng, gen, op, kind, dtype):
    shape = rand_shape(rng)
    mshape = rand_mask_shape(rng, shape)
    mask = rand_mask(rng, gen, mshape)
    bmask = torch.broadcast_to(mask, shape)
    data = rand_data(rng, gen, shape, kind, dtype)
    specials = rng.random() < 0.25
    data = put_specials(rng, data, bmask, specials)
    case = {
        "op": op, "dtype": str(dtype).replace("torch.", ""), "kind": kind, "specials": specials,
        "shape": shape, "data": tensor_json(data), "mask_shape": mshape, "mask": mask_json(mask),
    }
    return case, data, mask, bmask


def run_reduction(rng, case, op, data, mask, bmask, acc, fixed=None):
    rank = data.dim()
    dims, targ = rand_dims(rng, rank, op in ONE_DIM)
    keepdim = rng.random() < 0.4
    if fixed is not None:
        dims, targ, keepdim = [fixed["dim"]], fixed["dim"], False
    case.update(dims=dims, keepdim=keepdim)
    fn = getattr(M, op)
    kw = dict(keepdim=keepdim, mask=mask)
    if acc is not None:
        kw["dtype"] = acc
    args = []
    if op == "norm":
        ord = rng.choice(NORM_ORDS) if fixed is None else fixed.get("ord", 2.0)
        case["ord"] = jnum(ord)
        args = [ord]
    if op in ("var", "std"):
        unbiased = rng.random() < 0.5
        case["correction"] = 1 if unbiased else 0
    source = "torch.masked._ops." + op
    one_dim = dims is not None and len(dims) == 1
    if op in ONE_DIM and not one_dim:
        # Several or all dimensions: plain torch on the kept values.
        source = "plain torch on masked-in values (torch.masked takes one dim)"
        if op == "median":
            out = derive_reduction(data, bmask, dims, keepdim, kept_median, data.dtype)
        else:
            out = derive_reduction(data, bmask, dims, keepdim,
                                   lambda v, p: kept_arg(v, p, op == "argmax"), torch.int64)
    elif op in ("var", "std"):
        out = fn(data, targ, case["correction"] == 1, **kw)
    elif op in ONE_DIM:
        out = fn(data, targ, **kw)
    elif op == "norm" and ord < 0 and not math.isinf(ord):
        source = "plain torch on masked-in values (torch.masked norm counts masked-out zeros for ord < 0)"
        out = derive_reduction(data.to(acc or data.dtype), bmask, dims, keepdim,
                               lambda v, p: kept_norm(v, p, ord), acc or data.dtype)
    else:
        out = fn(data, *args, targ, **kw)
    if op in ("argmax", "argmin") and one_dim:
        out = out.to(torch.int64)
        # Where torch.masked points at a masked-out element of a slice that has
        # kept ones (a kept ∓inf tying with the ∓inf filler), derive the slice.
        fixed = derive_reduction(data, bmask, dims, keepdim,
                                 lambda v, p: kept_arg(v, p, op == "argmax"), torch.int64)
        if not torch.equal(fixed, out):
            omask = M._output_mask(fn, data, targ, keepdim=keepdim, mask=mask)
            bad = omask & (fixed != out)
            if bad.any():
                out = torch.where(bad, fixed, out)
                source += " (slices where it picks a masked-out -inf/+inf filler: plain torch on masked-in values)"
    if op in ONE_DIM and not one_dim:
        omask = M._any(bmask, tuple(canonical(dims, rank)), keepdim)
    elif op in ("var", "std"):
        omask = M._output_mask(fn, data, targ, keepdim=keepdim, mask=mask)
    elif op == "norm":
        omask = M._output_mask(fn, data, ord, targ, keepdim=keepdim, mask=mask)
    else:
        omask = M._output_mask(fn, data, targ, keepdim=keepdim, mask=mask)
    case.update(out_shape=list(out.shape), out_mask=mask_json(omask), source=source)
    if op in ("argmax", "argmin"):
        case["out"] = [int(v) for v in out.reshape(-1).tolist()]
    else:
        case["out"] = tensor_json(out)
    assert list(omask.shape) == list(out.shape), (op, omask.shape, out.shape)


def run_scan(rng, case, op, data, mask, bmask, acc, fixed=None):
    rank = data.dim()
    dim = rng.randrange(max(rank, 1))
    if rng.random() < 0.3:
        dim -= max(rank, 1)
    if fixed is not None:
        dim = fixed["dim"]
    case["dim"] = dim
    fn = getattr(M, op)
    kw = dict(mask=mask)
    if acc is not None:
        kw["dtype"] = acc
    source = "torch.masked._ops." + op
    if op == "normalize":
        ord = rng.choice(NORM_ORDS) if fixed is None else fixed.get("ord", 2.0)
        eps = rng.choice([1e-12, 1e-12, 0.5, 0.0]) if fixed is None else 1e-12
        case.update(ord=jnum(ord), eps=eps)
        if ord < 0 and not math.isinf(ord):
            source = "plain torch on masked-in values (torch.masked norm counts masked-out zeros for ord < 0)"
            nrm = derive_reduction(data.to(acc or data.dtype), bmask, [dim], True,
                                   lambda v, p: kept_norm(v, p, ord), acc or data.dtype)
            denom = torch.maximum(nrm, torch.tensor(eps, dtype=nrm.dtype))
            out = torch.where(bmask, data.to(nrm.dtype), torch.zeros((), dtype=nrm.dtype)) / denom
        else:
            out = fn(data, ord, dim, eps=eps, **kw)
    else:
        out = fn(data, dim, **kw)
    omask = M._output_mask(fn, data, dim, mask=mask)
    case.update(out_shape=list(out.shape), out=tensor_json(out), out_mask=mask_json(omask), source=source)


def run_logaddexp(rng, gen, case, data, mask, bmask, acc, kind, dtype):
    shape = case["shape"]
    mshape2 = rand_mask_shape(rng, shape)
    mask2 = rand_mask(rng, gen, mshape2)
    bmask2 = torch.broadcast_to(mask2, shape)
    other = put_specials(rng, rand_data(rng, gen, shape, kind, dtype), bmask2, case["specials"])
    kw = {}
    if acc is not None:
        kw["dtype"] = acc
    out = M.logaddexp(data, other, input_mask=mask, other_mask=mask2, **kw)
    case.update(data2=tensor_json(other), mask2_shape=mshape2, mask2=mask_json(mask2),
                out_shape=list(out.shape), out=tensor_json(out), out_mask=mask_json(bmask | bmask2),
                source="torch.masked._ops.logaddexp; output mask input_mask | other_mask (torch defines none)")


# Fixed cases, run for every op (along dim 1, keepdim off, ord 2, eps 1e-12,
# the biased variance): torch.masked's own documentation example (the input
# and mask of every docstring in torch/masked/_docs.py), and slices whose kept
# elements are all -inf or +inf after a masked-out element (where torch.masked's
# argmax/argmin pick the masked-out filler).
FIXED = [
    ("docs", [[-3.0, -2.0, -1.0], [0.0, 1.0, 2.0]], [[True, False, True], [False, False, False]]),
    ("infs", [[math.nan, -math.inf, 1.0, -math.inf], [math.inf, math.inf, 2.0, -math.inf]],
     [[False, True, False, True], [False, True, False, False]]),
]


def fixed_cases(rng, gen, op):
    out = []
    for name, d, m in FIXED:
        for dtype in (torch.float32, torch.float64):
            data = torch.tensor(d, dtype=dtype)
            mask = torch.tensor(m)
            case = {"op": op, "dtype": str(dtype).replace("torch.", ""), "kind": "fixed:" + name,
                    "specials": name == "infs", "shape": list(data.shape), "data": tensor_json(data),
                    "mask_shape": list(mask.shape), "mask": mask_json(mask), "acc": None}
            fixed = {"dim": 1}
            if op in REDUCTIONS:
                if op in ("var", "std"):
                    fixed_var(case, op, data, mask)
                    out.append(case)
                    continue
                run_reduction(rng, case, op, data, mask, mask, None, fixed)
            elif op in SCANS:
                run_scan(rng, case, op, data, mask, mask, None, fixed)
            else:
                run_logaddexp(rng, gen, case, data, mask, mask, None, "int", dtype)
            out.append(case)
    return out


def fixed_var(case, op, data, mask):
    fn = getattr(M, op)
    out = fn(data, 1, False, mask=mask)
    case.update(dims=[1], keepdim=False, correction=0, out_shape=list(out.shape), out=tensor_json(out),
                out_mask=mask_json(M._output_mask(fn, data, 1, mask=mask)), source="torch.masked._ops." + op)


def main():
    rng = random.Random(SEED)
    gen = torch.Generator().manual_seed(SEED)
    os.makedirs(OUT, exist_ok=True)
    for op in REDUCTIONS + SCANS + ["logaddexp"]:
        cases = fixed_cases(rng, gen, op)
        kinds = KINDS.get(op, DEFAULT_KINDS)
        for i in range(CASES):
            kind = kinds[i % len(kinds)]
            dtype = torch.float32 if i % 3 != 2 else torch.float64
            accs = [None]
            if dtype == torch.float32 and op in ACCUMULATING and i % 2 == 0:
                accs.append(torch.float64)
            for acc in accs:
                case, data, mask, bmask = make_case(rng, gen, op, kind, dtype)
                case["acc"] = "float64" if acc is not None else None
                if op in REDUCTIONS:
                    run_reduction(rng, case, op, data, mask, bmask, acc)
                elif op in SCANS:
                    run_scan(rng, case, op, data, mask, bmask, acc)
                else:
                    run_logaddexp(rng, gen, case, data, mask, bmask, acc, kind, dtype)
                cases.append(case)
        path = os.path.join(OUT, op + ".json")
        with open(path, "w") as f:
            f.write("[\n")
            f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
            f.write("\n]\n")
        print(f"{path}: {len(cases)} cases")


if __name__ == "__main__":
    main()
