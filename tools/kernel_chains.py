#!/usr/bin/env python3
"""GPU time of the eager kernel chains stepcast prices as memory-bound ops, read from a Kineto trace.

Reads a PyTorch profiler trace (trace.json.gz as tools/measure_step.py writes it) and prints, as
CSV, the summed kernel time of:

- each eager RMSNorm (torchtitan's norms.py: x.float(), pow, mean, add, rsqrt, multiply, type_as,
  times the weight), forward and backward, found by its kernel sequence;
- the loss, F.cross_entropy(logits.float()), forward (the cast to FP32, log-softmax, NLL) and
  backward (NLL's zero fill and scatter, log-softmax's backward, the cast back), found by the
  autograd nodes and aten ops that launched each kernel.

Usage: tools/kernel_chains.py CASE_DIR...   (each as tools/measure_step.py writes it: trace.json.gz,
config.json and result.json, whose sizes give each chain's tokens and width)
The output is data/calibration/eager_chains_h100_measured.csv (docs/model.md section 2).
"""
import argparse
import gzip
import json
import os
import sys
from bisect import bisect_right

NORM_FORWARD = ['copy', 'pow', 'mean', 'add_eps', 'rsqrt', 'binary', 'to_bf16', 'binary']
NORM_BACKWARD = ['binary', 'binary', 'reduce', 'copy', 'binary', 'binary', 'reduce', 'pow', 'a_unary',
                 'binary', 'b_unary', 'memcpy', 'a_unary', 'binary', 'add_fp32', 'to_bf16']
TAGS = [('direct_copy', 'copy'), ('pow_tensor', 'pow'), ('MeanOps', 'mean'), ('rsqrt', 'rsqrt'),
        ('CUDAFunctorOnSelf_add', 'add_eps'), ('bfloat16_copy', 'to_bf16'), ('Memcpy DtoD', 'memcpy'),
        ('AUnaryFunctor', 'a_unary'), ('BUnaryFunctor', 'b_unary'), ('CUDAFunctor_add<float>', 'add_fp32'),
        ('reduce_kernel', 'reduce'), ('BinaryFunctor', 'binary')]
LOSS_BACKWARD_NODES = ('NllLossBackward0', 'LogSoftmaxBackward0')


def tag(name):
    for key, t in TAGS:
        if key in name:
            return t
    return None


def load(path):
    try:
        with gzip.open(path, 'rt') if path.endswith('.gz') else open(path) as f:
            return json.load(f)
    except (OSError, ValueError, EOFError) as e:
        sys.exit(f'{path}: not a readable Kineto trace ({e})')


def sizes(case_dir):
    """Tokens per step, hidden width and vocabulary of a measured case."""
    try:
        with open(os.path.join(case_dir, 'config.json')) as f:
            config = json.load(f)
        with open(os.path.join(case_dir, 'result.json')) as f:
            result = json.load(f)
        hidden = config.get('hidden_size', config.get('n_embd'))
        return result['batch'] * result['seq'], int(hidden), int(config['vocab_size'])
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f'{case_dir}: config.json and result.json must give hidden_size (or n_embd), '
                 f'vocab_size, batch and seq ({e!r})')


def chains_of(case_dir):
    """(chain, ms, kernels) for every chain found in the case's trace."""
    path = os.path.join(case_dir, 'trace.json.gz')
    events = load(path).get('traceEvents')
    if not isinstance(events, list):
        sys.exit(f'{path}: no traceEvents list')
    kernels = sorted((e for e in events if e.get('cat') in ('kernel', 'gpu_memcpy')), key=lambda e: e['ts'])
    if not kernels:
        sys.exit(f'{path}: no GPU kernels (was the trace recorded with CUDA activities?)')

    # The CPU ops and annotations of each thread, to find what launched a kernel and inside what.
    cpu = [e for e in events if e.get('cat') in ('cpu_op', 'user_annotation') and 'dur' in e]
    by_external = {e['args'].get('External id'): e for e in cpu if e.get('cat') == 'cpu_op'}
    by_thread = {}
    for e in cpu:
        by_thread.setdefault(e['tid'], []).append(e)
    starts = {}
    for tid, evs in by_thread.items():
        evs.sort(key=lambda e: e['ts'])
        starts[tid] = [e['ts'] for e in evs]

    def context(kernel):
        op = by_external.get(kernel.get('args', {}).get('External id'))
        if op is None:
            return ''
        evs, ts = by_thread[op['tid']], starts[op['tid']]
        names = [op['name']]
        i = bisect_right(ts, op['ts'])
        # Enclosing events start no later and end no earlier; scan back a bounded window.
        for e in evs[max(0, i - 400):i]:
            if e is not op and e['ts'] + e['dur'] >= op['ts'] + op['dur']:
                names.append(e['name'])
        return ' | '.join(names)

    tags = [tag(k['name']) for k in kernels]
    rows = []

    def chains(pattern, label):
        n = len(pattern)
        i = 0
        while i + n <= len(kernels):
            if tags[i:i + n] == pattern:
                rows.append((label, sum(k['dur'] for k in kernels[i:i + n]) / 1e3, n))
                i += n
            else:
                i += 1

    chains(NORM_FORWARD, 'rmsnorm_forward')
    chains(NORM_BACKWARD, 'rmsnorm_backward')

    # The loss: log-softmax forward and the FP32 casts launched just before it; backward, every
    # kernel launched under the NLL and log-softmax backward nodes, and the cast back that the
    # autograd node of .float() launches after them.
    softmax = [i for i, k in enumerate(kernels) if 'SoftMaxForward' in k['name']]
    if softmax:
        s = softmax[0]
        first = s
        while first > 0 and tags[first - 1] == 'copy':
            first -= 1
        forward = kernels[first:s + 1] + [k for k in kernels[s + 1:s + 3] if 'nll_loss_forward' in k['name']]
        rows.append(('cross_entropy_forward', sum(k['dur'] for k in forward) / 1e3, len(forward)))
        backward, after = [], False
        for k in kernels[s + 1:]:
            ctx = context(k)
            if any(node in ctx for node in LOSS_BACKWARD_NODES):
                backward.append(k)
                after = 'SoftMaxBackward' in k['name'] or after
            elif after and 'ToCopyBackward0' in ctx:
                backward.append(k)
            elif after:
                break
        rows.append(('cross_entropy_backward', sum(k['dur'] for k in backward) / 1e3, len(backward)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('cases', nargs='+', metavar='CASE_DIR')
    args = ap.parse_args()
    print('case,chain,instance,tokens,width,ms,kernels')
    for case_dir in args.cases:
        tokens, hidden, vocab = sizes(case_dir)
        case = os.path.basename(os.path.normpath(case_dir))
        seen = {}
        for label, ms, n in chains_of(case_dir):
            seen[label] = seen.get(label, 0) + 1
            width = hidden if label.startswith('rmsnorm') else vocab
            print(f'{case},{label},{seen[label]},{tokens},{width},{ms:.4f},{n}')


if __name__ == '__main__':
    main()
