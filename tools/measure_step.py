#!/usr/bin/env python3
"""Measure real training steps of Llama-style and GPT-2-style models on one NVIDIA GPU, the way
torchtitan trains them, and write what stepcast needs to predict the same steps and check itself
against them.

Why: the validation tables are other people's runs, each with settings their papers leave out
(docs/accuracy.md). A step we run ourselves has every setting known: the model's config.json, the
batch, the kernels (a Kineto trace of one step) and the peak memory. stepcast's prediction of it is
then a test of the cost model alone, with nothing to guess.

The model is torchtitan's Llama 3 (torchtitan/models/llama/model.py, late 2024) written out here:
RMSNorm in eager PyTorch (x.float(), rsqrt of the mean square, type_as, times the weight), rotary
embeddings through complex multiplication, grouped-query attention with repeated K/V heads and
causal scaled_dot_product_attention, a SwiGLU MLP, and an FP32 cross-entropy over the logits
(with biases on q, k and v for Qwen2.5's layer). The GPT-2-style model has LayerNorm with biases,
learned positions, one QKV projection, a tanh GELU MLP and tied embeddings.
Training as torchtitan does on one data-parallel group of size 1: FSDP2 (fully_shard) on each block
and on the model with BF16 parameters and FP32 gradient reduction, AdamW with fused=True, the
gradient norm clipped to 1.0. Compiled cases compile each block (torch.compile, fullgraph), as
torchtitan's --training.compile does.

Each case runs in its own process (an OOM or a compile failure ends that case only) and writes into
OUT/CASE/: result.json (step times, tokens/s, peak memory, GPU clocks during the timed steps),
config.json (Hugging Face format: `stepcast estimate --model OUT/CASE/config.json` reads it),
trace.json.gz (Kineto trace of one step, as torch.profiler writes it) and, where asked, et.json.gz
(the PyTorch execution trace of that step).

With --loop-trace each case also traces three steps taken back to back (loop_trace.json.gz) and
sets them beside the single profiled step in result.json's `loop`: the GPU's idle time, the part
of it that waited for the host, and the kernels' time by class (tools/loop_table.py prints it).
The clock samples carry NVML's clock event reasons (the power cap among them).

Usage: tools/measure_step.py --out DIR [--case NAME ...] [--steps 10] [--loop-trace]
Needs PyTorch 2.6 or later with CUDA; nvidia-ml-py for the clocks (optional). On an H100 each case
takes 12-40 s (the compiled ones the longest); data/measurements/h100-steps holds what it wrote
there on 2026-11-27.
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

LLAMA_8B_4L = dict(arch="llama", layers=4, hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=128256, tied=False)
LLAMA_1B = dict(arch="llama", layers=16, hidden=2048, ffn=8192, heads=32, kv_heads=8, vocab=128256, tied=True)
# GPT-2's architecture (LayerNorm with biases, learned positions, one QKV projection, tanh GELU,
# tied embeddings) at GPT-3 XL's width and depth, with 128-wide heads
# Llama 3.2 3B's layer and vocabulary with 14 of its 28 layers
LLAMA_3B_14L = dict(arch="llama", layers=14, hidden=3072, ffn=8192, heads=24, kv_heads=8, vocab=128256, tied=True)
# Qwen2.5 7B's layer (biases on q, k and v) and vocabulary with 4 of its 28 layers
QWEN_7B_4L = dict(arch="llama", layers=4, hidden=3584, ffn=18944, heads=28, kv_heads=4, vocab=152064, tied=False,
                  qkv_bias=True, rope_theta=1000000.0)
GPT_1B = dict(arch="gpt2", layers=24, hidden=2048, ffn=8192, heads=16, kv_heads=16, vocab=50257, tied=True)
DEFAULTS = dict(compile=False, full_ac=False, sdpa=None, execution_trace=False, qkv_bias=False,
                rope_theta=500000.0)
CASES = {
    # Llama 3.1 8B's layer and vocabulary with 4 of its 32 layers, at torchtitan's 8,192 tokens a
    # sequence (its rows have 2 a batch: 1 here leaves room on an 80 GB GPU)
    "llama8b-4l-eager": dict(LLAMA_8B_4L, batch=1, seq=8192, execution_trace=True),
    "llama8b-4l-compiled": dict(LLAMA_8B_4L, batch=1, seq=8192, compile=True),
    "llama8b-4l-eager-fullac": dict(LLAMA_8B_4L, batch=1, seq=8192, full_ac=True),
    # SDPA picks cuDNN's attention on an H100 (PyTorch 2.11); this one forces FlashAttention-2
    "llama8b-4l-eager-fa2": dict(LLAMA_8B_4L, batch=1, seq=8192, sdpa="flash"),
    "llama8b-4l-eager-s4096": dict(LLAMA_8B_4L, batch=2, seq=4096),
    # Llama 3.2 1B, whole
    "llama3.2-1b-eager": dict(LLAMA_1B, batch=2, seq=4096),
    "llama3.2-1b-compiled": dict(LLAMA_1B, batch=2, seq=4096, compile=True),
    # Added after the model took figures from the cases above: rows that did not inform it
    "llama8b-4l-compiled-fullac": dict(LLAMA_8B_4L, batch=1, seq=8192, compile=True, full_ac=True),
    "llama3.2-3b-14l-eager": dict(LLAMA_3B_14L, batch=1, seq=8192),
    "llama3.2-3b-14l-compiled": dict(LLAMA_3B_14L, batch=1, seq=8192, compile=True),
    "qwen2.5-7b-4l-eager": dict(QWEN_7B_4L, batch=2, seq=4096),
    "gpt-1.3b-eager": dict(GPT_1B, batch=4, seq=2048),
    "gpt-1.3b-compiled": dict(GPT_1B, batch=4, seq=2048, compile=True),
    # Llama 3.2 3B whole (28 layers): about 90 GB at its peak, so it needs an H200's 141 GB
    "llama3.2-3b-eager": dict(LLAMA_3B_14L, layers=28, batch=1, seq=8192),
}


def hf_config(c):
    if c["arch"] == "gpt2":
        return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": c["hidden"],
                "n_inner": c["ffn"], "n_layer": c["layers"], "n_head": c["heads"], "n_positions": c["seq"],
                "vocab_size": c["vocab"], "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
                "tie_word_embeddings": True}
    if c["qkv_bias"]:
        return {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": c["hidden"],
                "intermediate_size": c["ffn"], "num_hidden_layers": c["layers"],
                "num_attention_heads": c["heads"], "num_key_value_heads": c["kv_heads"], "vocab_size": c["vocab"],
                "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": c["rope_theta"],
                "tie_word_embeddings": c["tied"], "hidden_act": "silu", "torch_dtype": "bfloat16"}
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": c["hidden"],
            "intermediate_size": c["ffn"], "num_hidden_layers": c["layers"], "num_attention_heads": c["heads"],
            "num_key_value_heads": c["kv_heads"], "vocab_size": c["vocab"],
            "max_position_embeddings": max(c["seq"], 8192), "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
            "tie_word_embeddings": c["tied"], "hidden_act": "silu", "torch_dtype": "bfloat16"}


def run_case(name, out, steps, loop_trace):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    c = dict(DEFAULTS, **CASES[name])
    layers, hidden, ffn, heads, kv_heads, vocab = (c[k] for k in ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab"))
    tied, batch, seq, compiled, full_ac = c["tied"], c["batch"], c["seq"], c["compile"], c["full_ac"]
    head_dim = hidden // heads

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-5):
            super().__init__()
            self.eps, self.weight = eps, nn.Parameter(torch.ones(dim))

        def forward(self, x):
            h = x.float()
            return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight

    def rotary(x, freqs_cis):
        x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_ * freqs_cis).flatten(3).type_as(x)

    def repeat_kv(x, n):
        if n == 1:
            return x
        b, s, h, d = x.shape
        return x[:, :, :, None, :].expand(b, s, h, n, d).reshape(b, s, h * n, d)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq = nn.Linear(hidden, heads * head_dim, bias=c["qkv_bias"])
            self.wk = nn.Linear(hidden, kv_heads * head_dim, bias=c["qkv_bias"])
            self.wv = nn.Linear(hidden, kv_heads * head_dim, bias=c["qkv_bias"])
            self.wo = nn.Linear(heads * head_dim, hidden, bias=False)

        def forward(self, x, freqs_cis):
            b, s, _ = x.shape
            q = self.wq(x).view(b, s, heads, head_dim)
            k = self.wk(x).view(b, s, kv_heads, head_dim)
            v = self.wv(x).view(b, s, kv_heads, head_dim)
            q, k = rotary(q, freqs_cis), rotary(k, freqs_cis)
            k, v = repeat_kv(k, heads // kv_heads), repeat_kv(v, heads // kv_heads)
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=True)
            return self.wo(o.transpose(1, 2).contiguous().view(b, s, -1))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(hidden, ffn, bias=False)
            self.w2 = nn.Linear(ffn, hidden, bias=False)
            self.w3 = nn.Linear(hidden, ffn, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention, self.feed_forward = Attention(), FeedForward()
            self.attention_norm, self.ffn_norm = RMSNorm(hidden), RMSNorm(hidden)

        def forward(self, x, freqs_cis):
            h = x + self.attention(self.attention_norm(x), freqs_cis)
            return h + self.feed_forward(self.ffn_norm(h))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(vocab, hidden)
            self.layers = nn.ModuleDict({str(i): Block() for i in range(layers)})
            self.norm = RMSNorm(hidden)
            self.output = nn.Linear(hidden, vocab, bias=False)
            if tied:
                self.output.weight = self.tok_embeddings.weight
            freqs = 1.0 / (c["rope_theta"] ** (torch.arange(0, head_dim, 2).float() / head_dim))
            angles = torch.outer(torch.arange(seq).float(), freqs)
            self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles)[None, :, None, :],
                                 persistent=False)

        def forward(self, tokens):
            h = self.tok_embeddings(tokens)
            for layer in self.layers.values():
                h = layer(h, self.freqs_cis)
            return self.output(self.norm(h))

    class GPTBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.c_attn, self.attn_proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
            self.c_fc, self.mlp_proj = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)

        def forward(self, x, positions):
            b, s, _ = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(hidden, dim=2)
            q, k, v = (t.view(b, s, heads, head_dim).transpose(1, 2) for t in (q, k, v))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.attn_proj(o.transpose(1, 2).contiguous().view(b, s, hidden))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, hidden), nn.Embedding(seq, hidden)
            self.layers = nn.ModuleDict({str(i): GPTBlock() for i in range(layers)})
            self.ln_f = nn.LayerNorm(hidden)
            self.lm_head = nn.Linear(hidden, vocab, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, tokens):
            h = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))
            for layer in self.layers.values():
                h = layer(h, None)
            return self.lm_head(self.ln_f(h))

    port = 29511 + sorted(CASES).index(name)  # a port per case: the last case's may still be closing
    torch.distributed.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    torch.manual_seed(0)
    with torch.device("cuda"):
        model = GPT() if c["arch"] == "gpt2" else Llama()
    params = sum(p.numel() for p in model.parameters())
    if full_ac:
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
        for key, block in list(model.layers.items()):
            model.layers[key] = checkpoint_wrapper(block, preserve_rng_state=False)
    if compiled:
        for key, block in list(model.layers.items()):
            model.layers[key] = torch.compile(block, fullgraph=True)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for i, block in enumerate(model.layers.values()):
        fully_shard(block, mp_policy=mp, reshard_after_forward=i < layers - 1)
    fully_shard(model, mp_policy=mp, reshard_after_forward=True)
    try:
        opt = torch.optim.AdamW(model.parameters(), lr=8e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
        optimizer = "AdamW fused"
    except (RuntimeError, TypeError):
        opt = torch.optim.AdamW(model.parameters(), lr=8e-4, betas=(0.9, 0.95), weight_decay=0.1, foreach=True)
        optimizer = "AdamW foreach"
    tokens = torch.randint(0, vocab, (batch, seq), device="cuda")
    labels = torch.randint(0, vocab, (batch, seq), device="cuda")

    def step():
        pred = model(tokens)
        loss = F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
        del pred
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        opt.zero_grad()
        return loss

    if c["sdpa"] == "flash":
        from torch.nn.attention import SDPBackend, sdpa_kernel
        # Entered for the rest of this process; the context object must outlive the steps, or its
        # collection restores SDPA's default choice (cuDNN on an H100).
        backend = sdpa_kernel(SDPBackend.FLASH_ATTENTION)
        backend.__enter__()
    t0 = time.time()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    warmup_s = time.time() - t0
    torch.cuda.reset_peak_memory_stats()

    clocks, stop = [], threading.Event()
    sampler = threading.Thread(target=sample_clocks, args=(stop, clocks))
    sampler.start()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
    events[0].record()
    for i in range(steps):
        loss = step()
        events[i + 1].record()
    torch.cuda.synchronize()
    stop.set()
    sampler.join()
    times = [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(steps)]
    step_s = events[0].elapsed_time(events[-1]) / 1e3 / steps
    result = {
        "case": name, "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
        "params": params, "arch": c["arch"], "sdpa": c["sdpa"] or "default", "batch": batch, "seq": seq, "compiled": compiled, "full_activation_checkpointing": full_ac,
        "optimizer": optimizer, "steps_timed": steps, "step_s_mean": step_s, "step_s_median": statistics.median(times),
        "step_s_min": min(times), "step_s_max": max(times), "step_s_each": times, "tokens_per_s": batch * seq / step_s,
        "model_tflops_per_s": 6 * params * batch * seq / step_s / 1e12, "warmup_s": warmup_s,
        "peak_allocated_gib": torch.cuda.max_memory_allocated() / 2**30,
        "peak_reserved_gib": torch.cuda.max_memory_reserved() / 2**30, "loss": float(loss),
        **clock_summary(clocks),
    }
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result), flush=True)

    from torch.profiler import ProfilerActivity, profile
    et = None
    if c["execution_trace"]:
        try:
            from torch.profiler import ExecutionTraceObserver
            et = ExecutionTraceObserver().register_callback(os.path.join(out, "et.json"))
            et.start()
        except Exception as e:  # the Kineto trace matters more than the execution trace
            print(f"execution trace not written: {e}", flush=True)
            et = None
    # The profiled step's clocks beside the timed steps': its kernels may run at another clock than
    # theirs (docs/accuracy.md, "Steps measured on one H200").
    profiled_clocks, stop = [], threading.Event()
    sampler = threading.Thread(target=sample_clocks, args=(stop, profiled_clocks))
    sampler.start()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        step()
        torch.cuda.synchronize()
    stop.set()
    sampler.join()
    result.update({"profiled_" + k: v for k, v in clock_summary(profiled_clocks).items()})
    if et is not None:
        et.stop()
        et.unregister_callback()
    prof.export_chrome_trace(os.path.join(out, "trace.json"))
    # Which attention SDPA ran (aten::_scaled_dot_product_flash_attention, ..._cudnn_attention, ...)
    result["sdpa_ops"] = sorted({e.name for e in prof.events() if e.name.startswith("aten::_scaled_dot_product")})
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=2)
    if loop_trace:
        try:
            result["loop"] = profile_loop(step, out)
        except Exception as e:  # the timed steps and the single trace are kept without it
            result["loop_error"] = repr(e)
            print(f"loop trace not taken: {e!r}", flush=True)
        with open(os.path.join(out, "result.json"), "w") as f:
            json.dump(result, f, indent=2)
    for plain in ("trace.json", "et.json", "loop_trace.json"):
        path = os.path.join(out, plain)
        if os.path.exists(path):
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
    torch.distributed.destroy_process_group()


# As many untraced steps first as make about as long a run as the timed steps' (10 after 3)
LOOP_WAIT, LOOP_WARMUP, LOOP_ACTIVE = 8, 1, 3


def profile_loop(step, out):
    """Trace LOOP_ACTIVE steps taken back to back after LOOP_WAIT + LOOP_WARMUP untraced ones, as the
    timed steps are taken, and compare them with the single profiled step of trace.json.gz.

    Why: the timed steps take up to 4% longer than the single profiled step's GPU time. Either the
    host falls behind the GPU between steps taken back to back (gaps in which the GPU waits for a
    launch), or the kernels themselves run longer under sustained load (lower clocks). This trace
    tells the two apart: its gaps, and which of them waited for the host, against its kernels'
    times beside the single step's."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    path = os.path.join(out, "loop_trace.json")
    n = LOOP_WAIT + LOOP_WARMUP + LOOP_ACTIVE
    events = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    clocks, stop = [], threading.Event()
    sampler = threading.Thread(target=sample_clocks, args=(stop, clocks))
    sampler.start()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=LOOP_WAIT, warmup=LOOP_WARMUP, active=LOOP_ACTIVE, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        events[0].record()
        for i in range(n):
            step()
            events[i + 1].record()
            if i == n - 1:  # every kernel of the last traced step ends before the trace is taken
                torch.cuda.synchronize()
            prof.step()
    stop.set()
    sampler.join()
    with open(path) as f:
        loop = json.load(f)["traceEvents"]
    with open(os.path.join(out, "trace.json")) as f:
        single = json.load(f)["traceEvents"]
    first = LOOP_WAIT + LOOP_WARMUP
    summary = {
        "steps_untraced_before": first,
        "step_s_each": [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(first, n)],
        "steps": gpu_steps(loop),
        "single_step": gpu_steps(single),
        **clock_summary(clocks),
    }
    print(json.dumps({"loop": summary}), flush=True)
    return summary


GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def kernel_class(name):
    low = name.lower()
    if "nvjet" in low or "gemm" in low or "cutlass" in low or "xmma" in low:
        return "gemm"
    if "flash" in low or "fmha" in low or "sdpa" in low or "attention" in low:
        return "attention"
    return "other"


def gpu_steps(trace):
    """Per step of a trace (its ProfilerStep#N spans; the whole trace where it has none): the GPU's
    span from the step's first GPU event to the next step's (to its own last for the last step),
    the time the GPU was busy in it, its idle time, the idle time in which the GPU waited for a
    launch the host had not yet made, and the GPU time of its kernels by class."""
    launch_ts = {e["args"]["correlation"]: e["ts"] for e in trace
                 if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in trace
                   if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    gpu = sorted((e for e in trace if e.get("cat") in GPU_CATS), key=lambda e: e["ts"])
    groups = [[] for _ in spans] if spans else [[]]
    for e in gpu:
        launched = launch_ts.get(e.get("args", {}).get("correlation"))
        if not spans:
            groups[0].append(e)
            continue
        k = next((i for i, (a, b) in enumerate(spans) if launched is not None and a <= launched <= b), None)
        if k is not None:
            groups[k].append(e)
    rows = []
    for i, g in enumerate(groups):
        if not g:
            continue
        start = g[0]["ts"]
        end = max(e["ts"] + e["dur"] for e in g)
        later = groups[i + 1] if i + 1 < len(groups) else []
        span_end = later[0]["ts"] if later else end
        busy = idle_host = 0.0
        cursor = start
        by_class = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
        for e in g:
            by_class[kernel_class(e["name"]) if e["cat"] == "kernel" else "other"] += e["dur"]
            if e["ts"] > cursor:
                launched = launch_ts.get(e.get("args", {}).get("correlation"))
                if launched is not None and launched > cursor:  # the GPU ran dry before the launch
                    idle_host += e["ts"] - cursor
            busy += max(0.0, e["ts"] + e["dur"] - max(cursor, e["ts"]))
            cursor = max(cursor, e["ts"] + e["dur"])
        span = span_end - start
        rows.append({"span_ms": span / 1e3, "busy_ms": busy / 1e3, "idle_ms": (span - busy) / 1e3,
                     "idle_waiting_for_launch_ms": idle_host / 1e3,
                     "kernel_ms_by_class": {k: v / 1e3 for k, v in by_class.items()}, "gpu_events": len(g)})
    return rows


# NVML's clock event reasons (nvml.h, nvmlClocksEventReason*): why the clock is below its maximum
CLOCK_REASONS = {0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x20: "sw_thermal", 0x40: "hw_thermal",
                 0x80: "hw_power_brake"}


def clock_summary(rows):
    """Mean SM clock and power of (MHz, W, reasons) samples, and the share of samples in which each
    of CLOCK_REASONS held the clock down."""
    if not rows:
        return {"sm_mhz_mean": None, "power_w_mean": None}
    reasons = [r[2] for r in rows if r[2] is not None]
    return {"sm_mhz_mean": statistics.mean(r[0] for r in rows), "power_w_mean": statistics.mean(r[1] for r in rows),
            "clock_samples": len(rows),
            "clock_held_by": {name: sum(1 for r in reasons if r & bit) / len(reasons)
                              for bit, name in CLOCK_REASONS.items()} if reasons else None}


def sample_clocks(stop, rows):
    """(SM MHz, W, clock event reasons or None) every 50 ms until stop is set; nothing without
    nvidia-ml-py."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:  # no NVML: clocks are optional
        return
    while not stop.is_set():
        try:
            reasons = pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)
        except Exception:  # older nvidia-ml-py names it ...ThrottleReasons; the reasons are optional
            reasons = None
        rows.append((pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM), pynvml.nvmlDeviceGetPowerUsage(h) / 1e3,
                     reasons))
        time.sleep(0.05)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--case", action="append", choices=sorted(CASES), help="default: every case")
    p.add_argument("--steps", type=int, default=10, help="timed steps, after 3 warm-up steps")
    p.add_argument("--loop-trace", action="store_true",
                   help="also trace steps taken back to back (loop_trace.json.gz, result.json's loop)")
    p.add_argument("--one", help=argparse.SUPPRESS)  # a case in this process (the parent's child)
    a = p.parse_args()
    if a.one:
        run_case(a.one, os.path.join(a.out, a.one), a.steps, a.loop_trace)
        return
    failed = []
    for name in a.case or list(CASES):
        case_dir = os.path.join(a.out, name)
        os.makedirs(case_dir, exist_ok=True)
        with open(os.path.join(case_dir, "config.json"), "w") as f:
            json.dump(hf_config(dict(DEFAULTS, **CASES[name])), f, indent=2)
        t0 = time.time()
        rc = subprocess.call([sys.executable, __file__, "--out", a.out, "--steps", str(a.steps), "--one", name]
                             + (["--loop-trace"] if a.loop_trace else []))
        print(f"case {name}: exit {rc} after {time.time() - t0:.0f} s", flush=True)
        if rc != 0:
            failed.append(name)
    if failed:
        raise SystemExit(f"failed cases: {', '.join(failed)}")


if __name__ == "__main__":
    main()
