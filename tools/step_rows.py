#!/usr/bin/env python3
"""Validation rows, in data/validation's CSV format, from what tools/measure_step.py wrote.

Why: a measured step becomes a row `stepcast validate` predicts. Written by hand, thirteen rows of
thirty columns invite a typo in a layer count or a step time; this reads every figure from the
case's config.json and result.json, so a row says only what was measured.

Usage: tools/step_rows.py STEPS_DIR --gpu LABEL --cluster PRESET [--case NAME ...] > rows.csv
       tools/step_rows.py STEPS_DIR --check TABLE.csv
  STEPS_DIR  the --out folder of tools/measure_step.py (one folder per case)
  --gpu      the GPU as the row names it, e.g. "H200 (700 W)"
  --cluster  the cluster preset whose GPU the step ran on, e.g. dgx-h200
Prints the header and one row per case, in the order of --case (default: sorted case names).
--check compares each row of a table with the row written again from its case (named first in
its notes, with the row's source, gpu and cluster), every column but the notes, and exits 1 naming
each difference (ctest: the shipped tables against their measurements).
"""
import argparse
import csv
import json
import os
import sys

HEADER = ["source", "model", "params_b", "layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq_len", "gpu",
          "cluster", "num_gpus", "tp", "pp", "dp", "cp", "ep", "vp", "global_batch_seqs", "micro_batch", "recompute",
          "seq_parallel", "measured_tflops_per_gpu", "measured_mfu", "measured_tokens_per_s", "measured_iter_s",
          "verified", "notes"]


def model_name(config, layers_of_whole, result):
    """The row's model: the family's name, the layers kept, and the software that changes the step
    (stepcast reads "compile" and "FlashAttention-2" from it, src/validate/read_table.cpp)."""
    family = config["_name"]
    whole = layers_of_whole.get(family)
    layers = config.get("num_hidden_layers", config.get("n_layer"))
    name = family if whole in (None, layers) else f"{family}, {layers} of {whole} layers"
    if result["compiled"]:
        name += " [compile]"
    elif "aten::_scaled_dot_product_flash_attention" in result.get("sdpa_ops", []):
        name += " [FlashAttention-2]"
    return name


def family_of(config):
    """The published model whose layer and vocabulary the case has."""
    if config["model_type"] == "gpt2":
        return "GPT 1.3B (GPT-2 architecture)"
    hidden, vocab = config["hidden_size"], config["vocab_size"]
    return {(4096, 128256): "Llama 3.1 8B", (3072, 128256): "Llama 3.2 3B", (2048, 128256): "Llama 3.2 1B",
            (3584, 152064): "Qwen2.5 7B"}[(hidden, vocab)]


RESULT_FIELDS = ["case", "params", "batch", "seq", "compiled", "full_activation_checkpointing", "steps_timed",
                 "step_s_mean", "step_s_median", "step_s_max", "sm_mhz_mean", "power_w_mean", "peak_allocated_gib",
                 "peak_reserved_gib"]

LAYERS_OF_WHOLE = {"Llama 3.1 8B": 32, "Llama 3.2 3B": 28, "Llama 3.2 1B": 16, "Qwen2.5 7B": 28}


def row(case_dir, gpu, cluster, source):
    with open(os.path.join(case_dir, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(case_dir, "result.json")) as f:
        result = json.load(f)
    missing = [k for k in RESULT_FIELDS if k not in result]
    if missing:
        raise ValueError(f"{os.path.join(case_dir, 'result.json')}: no field {', '.join(missing)} "
                         "(tools/measure_step.py writes every one)")
    config["_name"] = family_of(config)
    gpt = config["model_type"] == "gpt2"
    get = (lambda k: config[{"num_hidden_layers": "n_layer", "hidden_size": "n_embd", "intermediate_size": "n_inner",
                             "num_attention_heads": "n_head", "num_key_value_heads": "n_head"}[k]]) if gpt else config.get
    batch = result["batch"]
    notes = [f"case {result['case']} ({case_dir})",
             f"median of {result['steps_timed']} steps after 3 warm-up steps (mean {result['step_s_mean'] * 1e3:.1f} ms,"
             f" max {result['step_s_max'] * 1e3:.1f} ms)",
             "FSDP2 on one rank, BF16 parameters, FP32 reduce, fused AdamW, gradient norm clipped to 1.0",
             f"SM clock {result['sm_mhz_mean']:.0f} MHz, {result['power_w_mean']:.0f} W mean",
             f"peak {result['peak_allocated_gib']:.1f} GiB allocated, {result['peak_reserved_gib']:.1f} GiB reserved"]
    if result["compiled"]:
        notes.append("each block compiled (torch.compile fullgraph)")
    if result["full_activation_checkpointing"]:
        notes.append("full activation checkpointing of every block (checkpoint_wrapper)")
    return [source, model_name(config, LAYERS_OF_WHOLE, result), f"{result['params'] / 1e9:.3f}",
            get("num_hidden_layers"), get("hidden_size"), get("intermediate_size"), get("num_attention_heads"),
            get("num_key_value_heads"), config["vocab_size"], result["seq"], gpu, cluster, 1, 1, 1, 1, 1, 1, 1, batch,
            batch, "full" if result["full_activation_checkpointing"] else "none", "no", "", "", "",
            f"{result['step_s_median']:.5f}", "yes", "; ".join(notes)]


def check(steps_dir, table):
    """0 if every row of `table` is what its case's files give, else a message naming each difference."""
    differences = []
    with open(table) as f:
        rows = list(csv.DictReader(f))
    for line, shipped in enumerate(rows, start=2):
        case = shipped["notes"].split(" ")[1]
        written = dict(zip(HEADER, row(os.path.join(steps_dir, case), shipped["gpu"], shipped["cluster"],
                                       shipped["source"])))
        differences += [f"{table}:{line}: {column}: {shipped[column]!r}, but {case} gives {str(written[column])!r}"
                        for column in HEADER if column != "notes" and shipped[column] != str(written[column])]
    print(f"{table}: {len(rows)} rows, {len(differences)} differences")
    return "\n".join(differences) if differences else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("steps_dir")
    p.add_argument("--gpu")
    p.add_argument("--cluster")
    p.add_argument("--source", default="stepcast tools/measure_step.py")
    p.add_argument("--case", action="append")
    p.add_argument("--check", metavar="TABLE")
    a = p.parse_args()
    if a.check:
        raise SystemExit(check(a.steps_dir, a.check))
    if not (a.gpu and a.cluster):
        p.error("--gpu and --cluster are needed to write rows")
    cases = a.case or sorted(d for d in os.listdir(a.steps_dir) if os.path.isdir(os.path.join(a.steps_dir, d)))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(HEADER)
    for case in cases:
        out.writerow(row(os.path.join(a.steps_dir, case), a.gpu, a.cluster, a.source))


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError, KeyError) as e:  # a case folder missing, unreadable or incomplete
        raise SystemExit(f"step_rows.py: error: {e.filename + ': ' if getattr(e, 'filename', None) else ''}"
                         f"{e.strerror if isinstance(e, OSError) and e.strerror else e}")
