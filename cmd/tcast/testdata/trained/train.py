#!/usr/bin/env python3
"""Train the small Llama of the output-quality test (TestOutputQuality in cmd/tcast).

Usage: python3 train.py MODEL_DIR TRAIN.txt [--steps N] [--batch B] [--ctx C] [--lr LR] [--seed S]

MODEL_DIR holds model.safetensors (F32), config.json and tokenizer.json as `tcast synth -arch llama`
writes them: synth's weights are the starting point. TRAIN.txt is tokenized with the checkpoint's
tokenizer.json (llama_imatrix.py's byte-level BPE) and cut into windows of C tokens, each starting
with the BOS token; every step takes B windows at random positions (seeded) and minimises the mean
cross-entropy of the next token with AdamW (betas 0.9, 0.95; weight decay 0.1 on matrices; the
learning rate warms up over the first 5% of steps, then follows a cosine to a tenth). The forward
pass is llama_ref.py's: the Hugging Face Llama definition in torch, float32. The trained weights
replace MODEL_DIR/model.safetensors, stored as F16 (what llama.cpp's F16 file then holds exactly),
and the last line printed is the mean loss of the last tenth of the steps.

The committed model (cmd/tcast/testdata/trained/) was made so, on two cores with OpenBLAS
(apt-get install libopenblas0-openmp; LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp):

    go run ./cmd/tcast synth -arch llama -o /tmp/tr/model.safetensors -layers 6 -hidden 256 \\
        -intermediate 768 -vocab 1024 -dtype f32 -seed 21 -force
    python3 cmd/tcast/testdata/trained/train.py /tmp/tr cmd/tcast/testdata/trained/train.txt
    cp /tmp/tr/model.safetensors /tmp/tr/config.json /tmp/tr/tokenizer.json \\
        /tmp/tr/tokenizer_config.json cmd/tcast/testdata/trained/

(The defaults: 600 steps, batch 8, windows of 256, learning rate 3e-3, seed 1; mean loss 1.149,
726 s.) Its importance matrix is llama_imatrix.py's over the calibration text:

    python3 cmd/tcast/testdata/llama_imatrix.py cmd/tcast/testdata/trained \\
        cmd/tcast/testdata/calibration.txt cmd/tcast/testdata/trained/imatrix.npz --chunk-size 128
"""

import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
import llama_imatrix  # noqa: E402  (the tokenizer)
import llama_ref  # noqa: E402  (the forward pass)


def write_safetensors(path, tensors, dtype):
    """Writes tensors (name -> torch tensor) as a safetensors file of dtype F16 or F32."""
    np_dtype, st = {"F16": ("<f2", "F16"), "F32": ("<f4", "F32")}[dtype]
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        b = tensors[name].detach().numpy().astype(np_dtype).tobytes()
        header[name] = {"dtype": st, "shape": list(tensors[name].shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def lr_at(step, steps, lr):
    warm = max(1, steps // 20)
    if step < warm:
        return lr * (step + 1) / warm
    p = (step - warm) / max(1, steps - warm)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("train")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    with open(os.path.join(args.model_dir, "config.json")) as f:
        cfg = json.load(f)
    tok = llama_imatrix.Tokenizer(os.path.join(args.model_dir, "tokenizer.json"))
    with open(args.train, encoding="utf-8") as f:
        ids = np.array(tok.encode(f.read()), dtype=np.int64)
    print(f"{args.train}: {len(ids)} tokens", flush=True)
    w = llama_ref.read_safetensors(os.path.join(args.model_dir, "model.safetensors"))
    for t in w.values():
        t.requires_grad_(True)
    decay = [t for n, t in w.items() if t.dim() == 2]
    rest = [t for n, t in w.items() if t.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    losses, start = [], time.time()
    for step in range(args.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args.steps, args.lr)
        starts = rng.integers(0, len(ids) - args.ctx - 1, size=args.batch)
        loss = 0.0
        for s in starts:
            window = ids[s:s + args.ctx + 1].copy()
            window[0] = tok.bos
            x = window[:-1].tolist()
            y = torch.from_numpy(window[1:])
            logits = llama_ref.forward(w, cfg, x)
            loss = loss + torch.nn.functional.cross_entropy(logits, y) / args.batch
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 20 == 0 or step == args.steps - 1:
            print(f"step {step}: loss {losses[-1]:.4f} ({time.time() - start:.0f} s)", flush=True)
    write_safetensors(os.path.join(args.model_dir, "model.safetensors"), w, "F16")
    cfg["torch_dtype"] = "float16"
    with open(os.path.join(args.model_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    tail = losses[-max(1, len(losses) // 10):]
    print(f"mean loss of the last {len(tail)} steps: {sum(tail) / len(tail):.4f}")


if __name__ == "__main__":
    main()
