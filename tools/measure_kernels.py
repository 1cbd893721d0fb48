#!/usr/bin/env python3
"""Measure on one NVIDIA GPU the kernel rates stepcast's cost model takes from published
microbenchmarks, on an idle GPU and under sustained load, in the formats stepcast reads.

Why: every validation source is predicted too fast (README, Known gaps). The GEMM rates in
data/gpus/ come from OpenXLA's table and mamf-finder, timed in short loops; a training step keeps
every SM busy for seconds, at the clock its power limit allows. This script times the same
kernels both ways, so that the difference can be measured instead of guessed.

Writes into OUT:
  gemm.csv          arch,b,m,n,k,dtype,flops (tools/gemm_grid_yaml.py reads it), the grid
                    m, n, k in {256 .. 4096} twice: arch ARCH-idle (a quarter second of idle before
                    each shape, a short loop) and ARCH-loaded (after a heat soak, each shape
                    right after 0.2 s of the largest GEMM)
  attention.csv     backend,batch,heads,seq,head_dim,pass,seconds,tflops: causal
                    scaled_dot_product_attention, FlashAttention and cuDNN backends, 4,096 wide
                    (32 heads of 128, or 64 of 64 with --head-dims 64)
  memory.csv        kernel,bytes,seconds,gbps: bandwidth-bound kernels of a transformer layer
  clocks.csv        seconds,sm_mhz,power_w,temperature_c during the heat soak (needs pynvml)
  environment.json  GPU, power limit, PyTorch, CUDA and cuDNN versions
Then, for a GPU preset's measured grid under load:
  tools/gemm_grid_yaml.py sm_90-loaded 989 --table OUT/gemm.csv

Usage: tools/measure_kernels.py --out DIR [--arch sm_90] [--soak-s 60] [--head-dims 128 ...]
       [--attention-only]
About 4 minutes on an H100 with the default soak, 2 with --soak-s 20. Needs PyTorch with CUDA;
pynvml (nvidia-ml-py) for the clocks and the power limit, optional. data/measurements/h100-kernels
holds what it wrote on an H100 80GB HBM3 on 2026-11-27 (--soak-s 20).
"""
import argparse
import csv
import json
import os
import statistics
import threading
import time

import torch
import torch.nn.functional as F

SIZES = [256, 512, 1024, 2048, 4096]
DTYPE = "bf16xbf16->bf16"


def timed(fn, min_seconds):
    """Median seconds of one call of fn, over 5 timed loops of at least min_seconds each."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    calls = max(1, int(min_seconds / max(start.elapsed_time(end) / 1e3, 1e-7)))
    samples = []
    for _ in range(5):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 1e3 / calls)
    return statistics.median(samples)


def gemm(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    return lambda: torch.matmul(a, b, out=c)


def nvml_handle():
    """pynvml and the GPU's handle, or (None, None) without pynvml."""
    try:
        import pynvml
    except ImportError:
        return None, None
    pynvml.nvmlInit()
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())


def load(fn, seconds):
    """Runs fn back to back for about `seconds`, keeping the GPU at its loaded clock."""
    t0 = time.time()
    while time.time() - t0 < seconds:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()


def clock_log(stop, rows, t0):
    """Appends (seconds, SM MHz, W, C) every half second until stop is set; nothing without pynvml."""
    pynvml, h = nvml_handle()
    if pynvml is None:
        return
    while not stop.is_set():
        rows.append((round(time.time() - t0, 2), pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                     pynvml.nvmlDeviceGetPowerUsage(h) / 1e3, pynvml.nvmlDeviceGetTemperature(h, 0)))
        time.sleep(0.5)


def measure_gemms(arch, soak_s, clocks):
    rows = []
    for m in SIZES:
        for n in SIZES:
            for k in SIZES:
                fn = gemm(m, n, k)
                time.sleep(0.25)
                rows.append((f"{arch}-idle", 1, m, n, k, DTYPE, 2 * m * n * k / timed(fn, 0.002)))
    heavy = gemm(8192, 8192, 8192)
    stop, t0 = threading.Event(), time.time()
    logger = threading.Thread(target=clock_log, args=(stop, clocks, t0))
    logger.start()
    load(heavy, soak_s)
    for m in SIZES:
        for n in SIZES:
            for k in SIZES:
                fn = gemm(m, n, k)
                load(heavy, 0.2)
                rows.append((f"{arch}-loaded", 1, m, n, k, DTYPE, 2 * m * n * k / timed(fn, 0.02)))
    stop.set()
    logger.join()
    return rows


def measure_attention(head_dim):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    rows = []
    heads = 4096 // head_dim  # a 4,096-wide attention, as Llama 3.1 8B's
    for seq in [1024, 2048, 4096, 8192, 16384, 32768]:
        batch = max(1, 16384 // seq)
        q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16,
                               requires_grad=True) for _ in range(3))
        grad = torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16)
        fwd_flops = 4 * batch * heads * seq * seq * head_dim / 2  # causal: half the scores
        for name, backend in [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
            try:
                with sdpa_kernel(backend):
                    fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    both = lambda: torch.autograd.grad(fwd(), (q, k, v), grad)
                    t_fwd, t_both = timed(fwd, 0.05), timed(both, 0.05)
            except RuntimeError as e:  # a backend this build or GPU does not have
                print(f"attention {name} seq {seq}: {e}".splitlines()[0])
                continue
            # FlashAttention's backward recomputes the scores: 2.5 forwards of matmul work.
            rows.append((name, batch, heads, seq, head_dim, "fwd", t_fwd, fwd_flops / t_fwd / 1e12))
            rows.append((name, batch, heads, seq, head_dim, "fwd+bwd", t_both, 3.5 * fwd_flops / t_both / 1e12))
    return rows


def measure_memory():
    tokens, hidden, vocab = 16384, 4096, 32768
    x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)
    logits = torch.randn(4096, vocab, device="cuda", dtype=torch.bfloat16)
    labels = torch.randint(0, vocab, (4096,), device="cuda")

    def rmsnorm_eager():  # torchtitan's Llama reference RMSNorm
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).type_as(x) * w

    e = x.numel() * 2
    cases = [
        ("copy", lambda: y.copy_(x), 2 * e),
        ("add", lambda: torch.add(x, x, out=y), 3 * e),
        ("silu_mul", lambda: torch.mul(F.silu(x), x, out=y), 5 * e),  # silu writes its result
        ("softmax_bf16", lambda: torch.softmax(x, dim=-1), 2 * e),
        # x.float() 6 B an element, pow 8, mean 4, the product 8, type_as 6, the weight's 4: read
        # and written (the per-token mean and rsqrt are small beside them)
        ("rmsnorm_eager", rmsnorm_eager, e * (3 + 4 + 2 + 4 + 3 + 2)),
        # log-softmax reads the logits and writes its result; the loss gathers one per token
        ("cross_entropy", lambda: F.cross_entropy(logits, labels), 2 * logits.numel() * 2),
    ]
    rows = []
    for name, fn, nbytes in cases:
        t = timed(fn, 0.05)
        rows.append((name, nbytes, t, nbytes / t / 1e9))
    return rows


def write(path, header, rows):
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(header)
        out.writerows(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--arch", default="sm_90", help="arch name for gemm.csv (OpenXLA's: sm_90 for the H100)")
    p.add_argument("--soak-s", type=float, default=60, help="seconds of the largest GEMM before the loaded grid")
    p.add_argument("--head-dims", type=int, nargs="+", default=[128], help="attention head widths to time")
    p.add_argument("--attention-only", action="store_true", help="time the attention kernels alone")
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU: this script measures one")
    os.makedirs(a.out, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    env = {"gpu": props.name, "sm_count": props.multi_processor_count, "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()}
    pynvml, h = nvml_handle()
    if pynvml is not None:
        env["power_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1e3
    with open(os.path.join(a.out, "environment.json"), "w") as f:
        json.dump(env, f, indent=2)
    write(os.path.join(a.out, "attention.csv"), ["backend", "batch", "heads", "seq", "head_dim", "pass", "seconds", "tflops"],
          [row for head_dim in a.head_dims for row in measure_attention(head_dim)])
    if a.attention_only:
        return
    write(os.path.join(a.out, "memory.csv"), ["kernel", "bytes", "seconds", "gbps"], measure_memory())
    clocks = []
    gemms = measure_gemms(a.arch, a.soak_s, clocks)
    with open(os.path.join(a.out, "gemm.csv"), "w", newline="") as f:
        f.write(f"# Measured by tools/measure_kernels.py on {props.name}, torch {torch.__version__}\n")
        out = csv.writer(f)
        out.writerow(["arch", "b", "m", "n", "k", "dtype", "flops"])
        out.writerows(gemms)
    write(os.path.join(a.out, "clocks.csv"), ["seconds", "sm_mhz", "power_w", "temperature_c"], clocks)
    print(f"wrote {a.out}: {len(gemms)} GEMMs, {len(clocks)} clock readings")


if __name__ == "__main__":
    main()
