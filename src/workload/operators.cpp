#include "workload/operators.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/error.h"
#include "cost/compute.h"

namespace stepcast::workload {
namespace {

using spec::AttentionKernel;
using spec::Elementwise;
using spec::MlpKind;
using spec::PositionKind;
using spec::Scenario;

constexpr double kMaskBytes = 1;  // dropout masks are stored as bytes (Megatron, PyTorch)
// The first FlashAttention generation's rate as a fraction of FlashAttention-2's: "around 2x
// speedup compared to FlashAttention", FlashAttention reaching 25-40% of the A100's peak and
// FlashAttention-2 50-73% (Dao 2023, FlashAttention-2, abstract). The Triton kernel of that time
// (llm-foundry's flash_attn_triton.py, by the same author) says of itself that its forward and
// backward together are "slightly slower than CUDA forward + backward", FlashAttention 1.
constexpr double kFlashV1RelativeRate = 0.5;

Op gemm(const char* name, double m, double n, double k, double instances, double e) {
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.instances = instances;
  op.flops = 2 * m * n * k * instances;
  op.bytes = e * (m * k + k * n + m * n) * instances;
  op.bwd_flops = 2;  // dX = dY W^T and dW = X^T dY, each as large as the forward
  op.bwd_bytes = 2;
  op.fp8_capable = true;
  return op;
}

Op memory_op(const char* name, double bytes, double bwd_bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = bytes;
  op.bwd_flops = 0;
  op.bwd_bytes = bwd_bytes;
  return op;
}

// Tokens an op outside the tensor-parallel region sees: all of them, or 1/tp with sequence
// parallelism (Korthikanti et al. 2022, §4.2.2).
double replicated_tokens(const Scenario& s) {
  const double t = local_tokens(s);
  return s.strategy.sequence_parallel ? t / s.strategy.tp : t;
}

// A memory-bound op run as a chain of `launches` kernels forward and `bwd_launches` backward.
Op kernel_chain(const char* name, double bytes, double bwd_bytes, double launches, double bwd_launches) {
  Op op = memory_op(name, bytes, bwd_bytes / bytes);
  op.launches = launches;
  op.bwd_launches = bwd_launches;
  return op;
}

bool eager(const Scenario& s) { return s.strategy.elementwise == Elementwise::kEager; }

// A norm reads x and writes y (forward); backward reads x and dy and writes dx. It trains a
// scale, and LayerNorm a shift too. Eager RMSNorm (torchtitan norms.py, Hugging Face
// LlamaRMSNorm) is x.float(), pow(2), mean, rsqrt, multiply, type_as, times the weight: per
// element 6 + 8 + 4 + 8 + 6 + 4 = 36 bytes in 8 kernels; its autograd backward reads and writes
// FP32 gradients through the same chain and sums the two paths into dx, about 64 bytes in 16
// (with the weight's gradient and its sum over the tokens).
// Measured, the chain takes longer than those bytes at streaming bandwidth, by the GPU's own
// measurement (GpuSpec::eager_rmsnorm_bytes): on the A100-SXM4-80GB, Liger-Kernel's benchmark
// of Hugging Face's LlamaRMSNorm (2,048 tokens of 4,096, BF16: 0.280 ms forward, 0.740 ms
// backward; benchmark/data/all_benchmark_data.csv @0400d313, liger 0.2.1), 58 and 155 bytes per
// element at the A100 preset's bandwidth, the default for GPUs not measured; on the H100, inside
// real training steps, 45.7-46.0 and 107.2-108.3 at its measured bandwidth (48 norms of widths
// 2,048 to 4,096 over 8,192 tokens, GPU time from the Kineto traces; data/calibration/
// eager_chains_h100_measured.csv, tools/kernel_chains.py), which also counts 16 kernels in the
// backward. The two timings differ in method too (docs/accuracy.md, Known gaps).
// Eager LayerNorm is PyTorch's native kernel, one each way, which Liger-Kernel's benchmark data
// times (FP32, 4,096 tokens of 4,096) at 0.122 and 0.310 ms on the A100-SXM4-80GB and 0.066 and
// 0.179 ms on the H100 80GB HBM3: 3 and 8 elements' bytes per element at the presets'
// bandwidth (its backward reads x and dy again for the weight's gradient and reduces over the
// tokens), where one pass each way would move 2 and 3. Hand-fused norms (Megatron, apex,
// Transformer Engine) keep those 2 and 3, which no measurement here covers; their backward is
// three kernels: the input gradient, per-block partial weight gradients and their reduction
// (apex layer_norm_cuda_kernel.cu: cuComputeGradInput, cuComputePartGradGammaBeta,
// cuComputeGradGammaBeta).
// A norm over rows of `width` elements: the hidden size, or a head's for Qwen3's query and key
// norms. Its trained scale (and a LayerNorm's shift) is `width` wide.
constexpr double kNativeLayerNormElements = 3, kNativeLayerNormBwdElements = 8;  // per element
// `eager_code`: the norm runs as PyTorch reference code, not fused or compiled.
Op norm(const char* name, double rows, double width, double e, const Scenario& s, bool eager_code) {
  const double elements = rows * width;
  Op op = !eager_code ? kernel_chain(name, 2 * e * elements, 3 * e * elements, 1, 3)
          : s.model.norm == spec::NormKind::kRmsNorm
              ? kernel_chain(name, s.cluster.gpu.eager_rmsnorm_bytes * elements,
                             s.cluster.gpu.eager_rmsnorm_backward_bytes * elements, 8, 16)
              : kernel_chain(name, kNativeLayerNormElements * e * elements,
                             kNativeLayerNormBwdElements * e * elements, 1, 3);
  op.n = width;
  op.weights = 1;
  op.biases = s.model.norm == spec::NormKind::kLayerNorm ? 1 : 0;
  return op;
}

Op norm(const char* name, double rows, double width, double e, const Scenario& s) {
  return norm(name, rows, width, e, s, eager(s));
}

// torch.compile as torchtitan applies it compiles each transformer block; the final norm and the
// loss after the blocks run eagerly (the Kineto trace of data/measurements/h100-steps/
// llama8b-4l-compiled: aten's softmax kernels and FP32 casts around the loss, no Triton).
bool eager_head(const Scenario& s) { return s.strategy.elementwise != Elementwise::kFusedKernels; }

// RoPE on q and k. Fused: read and write each element once. Eager (torchtitan
// apply_rotary_emb): x.float(), complex multiply, type_as per tensor, 6 + 8 + 6 = 20 bytes per
// element in 3 kernels, and the same backward.
Op rope(double elements, double e, const Scenario& s, double tensors) {
  if (eager(s)) return kernel_chain("rope", 20 * elements, 20 * elements, 3 * tensors, 3 * tensors);
  return memory_op("rope", 2 * e * elements, 1.0);
}

// The attention output copied from head-major back to token-major order for the output
// projection: Megatron's permute(...).contiguous() after unfused attention, torchtitan's
// transpose(1, 2).contiguous() after SDPA. Reads and writes `bytes`, forward and backward.
Op attention_transpose(double bytes) { return kernel_chain("attention_transpose", bytes, bytes, 1, 1); }

// Gemma 2's final logit soft-capping, cap * tanh(logits / cap) (transformers Gemma2ForCausalLM):
// eagerly a divide, a tanh and a multiply, each reading and writing the logits, 6e bytes per logit;
// backward the three gradients, tanh's reading its saved output too, 7e. Fused or compiled, one
// kernel: 2e forward, 3e backward.
Op logit_softcap(double logits, double e, const Scenario& s) {
  if (eager(s)) return kernel_chain("logit_softcap", 6 * e * logits, 7 * e * logits, 3, 3);
  return memory_op("logit_softcap", 2 * e * logits, 1.5);
}

// The loss over `logits` local logits.
// - Megatron-LM's vocab-parallel cross entropy (mpu/cross_entropy.py, on output.float()): cast,
//   max, subtract, exp, sum and divide each pass over the logits, 6 + 4 + 8 + 8 + 4 + 8 = 38 bytes
//   per logit, among about 26 kernels with the target masking, three all-reduces and the loss
//   mask; backward multiplies the saved softmax by the loss gradient and casts it back, 14 bytes
//   in 9 kernels.
// - eager F.cross_entropy(logits.float()): the cast (6 bytes) and log-softmax, whose kernel for
//   rows too long to keep on chip (cunn_SoftMaxForward) reads each row three times, for its
//   maximum, for the sum of exponentials and to write the output (16 bytes): 22 bytes in 3
//   kernels; backward NLL's zero fill (4), log-softmax's backward, which reads the gradient for
//   its sum and then the gradient and the output to write (16), and the cast back (6): 26 bytes
//   in 4. Measured inside training steps on an H100 (data/calibration/
//   eager_chains_h100_measured.csv: vocabularies of 50,257 to 152,064 over 8,192 tokens) they
//   take 24.0-25.1 and 25.3-25.7 bytes per logit at streaming bandwidth, the forward's cast
//   running on PyTorch's unvectorized copy kernel; they are priced at those measured 25 and 25.5.
// - a fused kernel (Transformer Engine, flash-attn, Megatron-Core's loss fusion):
//   reads the BF16 logits and writes FP32 row statistics and the loss; backward writes the BF16
//   gradient from the saved FP32 softmax.
constexpr double kEagerCrossEntropyBytes = 25, kEagerCrossEntropyBwdBytes = 25.5;  // per logit
Op cross_entropy(double logits, double e, const Scenario& s) {
  if (eager_head(s))
    return kernel_chain("cross_entropy", kEagerCrossEntropyBytes * logits, kEagerCrossEntropyBwdBytes * logits, 3, 4);
  if (!s.strategy.fused_cross_entropy) {
    return kernel_chain("cross_entropy", 38 * logits, 14 * logits, 26, 9);
  }
  return memory_op("cross_entropy", (e + 2 * kFp32Bytes) * logits, (kFp32Bytes + e) / (e + 2 * kFp32Bytes));
}

// A linear layer: one weight per instance, and a bias where the model has them.
Op linear(const char* name, double m, double n, double k, double instances, double e, bool bias) {
  Op op = gemm(name, m, n, k, instances, e);
  op.weights = instances;
  op.biases = bias ? instances : 0;
  return op;
}

// Residual add: reads two tensors, writes one; backward passes the gradient through. A compiler
// (torch.compile) fuses it into the following norm, which then reads x and the residual and
// writes their sum and the normalised output: one extra read and write instead of three.
// With hidden dropout (Megatron's fused bias-dropout-add) the add also writes a 1-byte mask, and
// backward adds a kernel that multiplies the gradient by the mask (reads e + 1, writes e).
Op residual(const char* name, double tokens, double hidden, double e, bool fused, bool dropout) {
  const double elements = tokens * hidden;
  const double add = (fused ? 2 : 3) * e * elements;
  if (!dropout) return memory_op(name, add, 1.0);
  return kernel_chain(name, add + kMaskBytes * elements, 3 * e * elements + (2 * e + kMaskBytes) * elements, 1, 2);
}

// Megatron's scale-mask-softmax over `elements` scores. Its fused kernel reads and writes each
// score once (backward reads two, writes one). Where it cannot run (megatron_softmax_fused)
// Megatron falls back to PyTorch in FP32 (softmax in FP32 with query-key layer scaling, its
// default): float(), times the scale, masked_fill_, softmax, back to 16 bits, e + 4 + 8 + 8 + 8 +
// 4 + e bytes per score in 5 kernels, and backward the same chain's gradients, e + 4 + 12 + 8 + 8
// + 4 + e in 5.
Op scaled_masked_softmax(double elements, double e, bool fused) {
  if (fused) return memory_op("softmax", 2 * e * elements, 1.5);
  return kernel_chain("softmax", (2 * e + 32) * elements, (2 * e + 36) * elements, 5, 5);
}

// The head width FlashAttention's kernel computes over: a head runs on the kernel built for the
// next width the library compiled, its tiles that wide, so the padding costs math (its loads are
// predicated off and cost no traffic). FlashAttention 1 has kernels for 32, 64 and 128
// (run_fmha_fwd dispatches on d <= 32, <= 64, <= 128, each kernel's traits fixed at that width;
// the Triton kernel of its time pads to the next power of two, the same above 16);
// FlashAttention-2 rounds up to a multiple of 32, of 64 above 128 (flash_api.cpp,
// head_size_rounded). Heads wider than FlashAttention 1's 128 are left as they are. cuDNN's
// kernels take any width that is a multiple of 8 (its SDPA's support matrix), padded so.
double kernel_head_width(AttentionKernel kernel, double width) {
  if (kernel == AttentionKernel::kCudnn) return std::ceil(width / 8) * 8;
  if (kernel == AttentionKernel::kFlashV1) {
    for (const double compiled : {32.0, 64.0, 128.0}) {
      if (width <= compiled) return compiled;
    }
    return width;
  }
  const double step = width <= 128 ? 32 : 64;
  return std::ceil(width / step) * step;
}

// Keys a query multiplies on average under causal masking: half the sequence; within a sliding
// window of w < s positions w - w^2 / (2s) (the first w queries see fewer than w); within chunks
// of w positions w / 2.
double causal_keys_seen(double seq, double window, bool chunked) {
  if (window <= 0 || window >= seq) return seq / 2;
  return chunked ? window / 2 : window - window * window / (2 * seq);
}

void add_attention(const Scenario& s, LayerOps& out) {
  const spec::ModelSpec& m = s.model;
  const spec::Strategy& st = s.strategy;
  const double e = activation_bytes(st);
  const double hd = m.effective_head_dim();  // queries' and keys' width per head
  const double vd = m.value_head_dim();      // values' and the output's (MLA: narrower)
  const double queries = st.seq_len / static_cast<double>(st.cp);  // local query positions
  const double keys = st.seq_len;                                   // context each query can see
  const double instances = attention_matrices(s);
  if (st.attention != AttentionKernel::kUnfused) {
    // FlashAttention skips the masked upper triangle: on average a query sees half the keys (with
    // context parallelism the load-balanced chunks keep that average). QK^T and PV: 2 FLOPs per
    // (query, key) and query-key or value dim. Backward recomputes QK^T: 5 matmuls vs 2 (Dao
    // 2023, FA2 §3.1.2).
    Op op;
    op.name = "attention";
    op.kind = OpKind::kAttention;
    // One op stands for every layer: with sliding windows on some layers, the layers' average
    // keys per query, and as the context length that sets the kernel's efficiency the FLOP-weighted
    // harmonic mean of the layers' (the time that takes is the sum of theirs, cost/compute.h).
    const double local = m.local_layer_fraction();
    const double local_seen = causal_keys_seen(keys, m.attention_window, m.attention_chunked);
    const double seen = (1 - local) * (keys / 2) + local * local_seen;
    op.m = queries;
    op.n =
        local > 0
            ? seen / ((1 - local) / 2 +
                      local * local_seen / std::min(keys, static_cast<double>(m.attention_window)))
            : keys;
    op.k = hd;
    op.instances = instances;
    op.flops = 2 * queries * seen * (hd + vd) * instances;
    const double q_and_o = queries * (hd + vd) * instances;
    const double kv = keys * (hd + vd) * st.micro_batch * static_cast<double>(m.kv_heads) / st.tp;
    op.bytes = e * (q_and_o + kv) + kFp32Bytes * queries * instances;  // + logsumexp
    op.bwd_flops = 2.5;
    op.bwd_bytes = 2;
    op.core_attention = true;
    const double kernel_hd = kernel_head_width(st.attention, hd);
    const double padded = kernel_hd + kernel_head_width(st.attention, vd);
    // Narrow heads give each tile less work per load: the GPU's measured rate at 64 wide.
    const double narrow = kernel_hd > 64 ? 1 : cost::attention_curve(s.cluster.gpu, st.attention).head64_rate;
    op.relative_rate =
        (st.attention == AttentionKernel::kFlashV1 ? kFlashV1RelativeRate : 1) * narrow * (hd + vd) / padded;
    out.add(op);
    return;
  }
  // Unfused attention (Megatron-LM before FlashAttention): the full s x s score matrix is
  // written to HBM, softmaxed, dropped out and multiplied by V. No causal skipping.
  const double elements = queries * keys * instances;
  // Megatron computes the scores with baddbmm(alpha = 1/sqrt(hd)); PyTorch's baddbmm backward
  // multiplies both operand gradients by alpha in kernels of their own (derivatives.yaml,
  // maybe_multiply), reading and writing Q- and K-sized tensors.
  Op scores = gemm("attention_scores", queries, keys, hd, instances, e);
  scores.grad_scale_bytes = 2 * e * (queries + keys) * hd * instances;
  Op ops[] = {scores, scaled_masked_softmax(elements, e, megatron_softmax_fused(s)),
              memory_op("attention_dropout", (2 * e + kMaskBytes) * elements, 1.0),
              gemm("attention_values", queries, vd, keys, instances, e),
              attention_transpose(2 * e * queries * vd * instances)};
  for (Op& op : ops) {
    op.fp8_capable = false;
    op.core_attention = true;
    out.add(op);
  }
}

// Appends the MLP's up projection, activation and down projection; returns the index of the up
// projection (the down projection is the last op added).
std::size_t add_dense_mlp(const Scenario& s, double tokens, double ffn, const char* up_name,
                          const char* act_name, const char* down_name, double instances,
                          LayerOps& out) {
  const spec::ModelSpec& m = s.model;
  const double e = activation_bytes(s.strategy);
  const double f = ffn / s.strategy.tp;
  const std::size_t up = out.size();
  if (m.gated_mlp()) {
    out.add(linear(up_name, tokens, 2 * f, m.hidden, instances, e, m.bias));
    // silu(gate) * up (GeGLU: gelu(gate) * up, the same traffic): reads two tensors, writes one;
    // backward reads both and dy, writes two. Eager (F.silu(w1(x)) * w3(x)): silu writes its
    // output and the product reads it back, 5e bytes per element in 2 kernels; backward 9e in 3
    // (both products and silu's derivative).
    const double elements = tokens * f * instances;
    out.add(eager(s) ? kernel_chain(act_name, 5 * e * elements, 9 * e * elements, 2, 3)
                     : memory_op(act_name, 3 * e * elements, 5.0 / 3.0));
  } else {
    out.add(linear(up_name, tokens, f, m.hidden, instances, e, m.bias));
    out.add(memory_op(act_name, 2 * e * tokens * f * instances, 1.5));
  }
  out.add(linear(down_name, tokens, m.hidden, f, instances, e, m.bias));
  return up;
}

}  // namespace

const char* name(OpKind kind) {
  constexpr const char* kNames[] = {"gemm", "attention", "memory"};
  return kNames[static_cast<int>(kind)];
}

void LayerOps::add(const Op& op) {
  STEPCAST_ASSERT(count_ < kMaxOps, "a layer has more operators than LayerOps can hold");
  std::construct_at(&slots_[count_++].op, op);
}

double weight_bytes(const spec::Strategy& st) { return st.autocast_fp32_weights ? kFp32Bytes : 2.0; }

double attention_matrices(const Scenario& s) {
  return s.strategy.micro_batch * static_cast<double>(s.model.heads) / s.strategy.tp;
}

bool megatron_softmax_fused(const Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (st.attention != AttentionKernel::kUnfused) return true;
  const double queries = st.seq_len / static_cast<double>(st.cp), keys = st.seq_len;
  const double attention_batches = attention_matrices(s);
  // The kernel's batches per block: above 16 keys, 4 warps of 32 lanes per block, each warp
  // taking two rows of up to 128 keys or one longer row. Megatron's own "multiple of 4" follows.
  const double batches_per_block = keys <= 128 ? 8 : 4;
  const auto whole_multiple = [](double x, double of) { return std::fmod(x, of) == 0; };
  return keys > 16 && keys <= 4096 && whole_multiple(queries, 4) && whole_multiple(keys, 4) &&
         whole_multiple(attention_batches, batches_per_block);
}

namespace {

// Q, K and V from the attention block's input, ready for the attention kernel: one fused
// projection (wq, wk, wv), the optional query and key norms and RoPE. Returns the matmuls it
// counts in torchtitan's op-level checkpointing order (wq, wk, wv).
int add_qkv_projection(const Scenario& s, LayerOps& out) {
  const spec::ModelSpec& m = s.model;
  const spec::Strategy& st = s.strategy;
  const double e = activation_bytes(st);
  const double tokens = local_tokens(s);
  const double hd = m.effective_head_dim();
  out.add(linear("qkv_projection", tokens, (m.heads + 2.0 * m.kv_heads) * hd / st.tp, m.hidden, 1, e, m.bias));
  out.back().tp_edge = BlockEdge::kStart;
  // Megatron's ParallelAttention builds query_key_value as a ColumnParallelLinear with
  // skip_bias_add=False, so the linear adds the bias; dense, dense_h_to_4h and dense_4h_to_h pass
  // skip_bias_add=True to bias_dropout_add and bias_gelu (megatron/model/transformer.py).
  out.back().linear_adds_bias = m.bias;
  out.back().tp_input_gemms = 3;  // wq, wk, wv: three nn.Linear (torchtitan's Attention)
  out.back().op_checkpoint_recompute = m.kv_heads / (m.heads + 2.0 * m.kv_heads);
  if (m.qk_norm) {
    // Qwen3: q_norm and k_norm, RMSNorms over each head's head_dim, between the projections and
    // RoPE (transformers Qwen3Attention).
    out.add(norm("q_norm", tokens * m.heads / st.tp, hd, e, s));
    out.add(norm("k_norm", tokens * m.kv_heads / st.tp, hd, e, s));
  }
  if (m.position == PositionKind::kRope) out.add(rope(tokens * (m.heads + m.kv_heads) * hd / st.tp, e, s, 2));
  if (eager(s) && m.kv_heads < m.heads) {
    // repeat_kv: expand + reshape copies k and v out to every query head; backward sums them back.
    const double bytes = 2 * e * tokens * (m.heads + m.kv_heads) * hd / st.tp;
    out.add(kernel_chain("repeat_kv", bytes, bytes, 2, 2));
  }
  return 3;
}

// MLA (transformers DeepseekV3Attention, Megatron-Core MultiLatentAttention): the queries through
// a down projection, its norm and an up projection (or one projection where q_lora_rank is 0);
// keys and values through a shared down projection, which also yields the keys' RoPE head, its
// norm and an up projection; RoPE on the queries' and that one key head's rotary parts. The down
// projections and their norms are not split over TP ranks: every rank runs them whole
// (Megatron-Core builds them "duplicated"), the up projections split by heads. Returns the
// matmuls in torchtitan's op-level checkpointing order (wq_a, wq_b or wq; wkv_a, wkv_b).
int add_mla_projections(const Scenario& s, LayerOps& out) {
  const spec::ModelSpec& m = s.model;
  const spec::MlaSpec& a = m.mla;
  const spec::Strategy& st = s.strategy;
  const double e = activation_bytes(st);
  const double tokens = local_tokens(s);
  const double heads = m.heads / static_cast<double>(st.tp), qk = m.effective_head_dim();
  int matmuls = 0;
  // torchtitan's policy recomputes every second matmul of the block.
  const auto matmul = [&](Op op) {
    op.op_checkpoint_recompute = ++matmuls % 2 == 0 ? 1 : 0;
    out.add(op);
  };
  const std::size_t start = out.size();
  if (a.q_lora_rank > 0) {
    matmul(linear("q_down_projection", tokens, a.q_lora_rank, m.hidden, 1, e, false));
    out.add(norm("q_down_norm", tokens, a.q_lora_rank, e, s));
    matmul(linear("q_up_projection", tokens, heads * qk, a.q_lora_rank, 1, e, false));
  } else {
    matmul(linear("q_projection", tokens, heads * qk, m.hidden, 1, e, false));
  }
  out[start].tp_edge = BlockEdge::kStart;
  out[start].tp_input_gemms = 2;  // the queries' first projection and kv_down_projection
  matmul(linear("kv_down_projection", tokens, a.kv_lora_rank + a.qk_rope_head_dim, m.hidden, 1, e,
                false));
  out.add(norm("kv_down_norm", tokens, a.kv_lora_rank, e, s));
  matmul(linear("kv_up_projection", tokens, heads * (qk - a.qk_rope_head_dim + m.value_head_dim()),
                a.kv_lora_rank, 1, e, false));
  if (m.position == PositionKind::kRope)
    out.add(rope(tokens * (heads + 1) * a.qk_rope_head_dim, e, s, 2));
  return matmuls;
}

}  // namespace

LayerOps layer_ops(const Scenario& s, bool moe_layer) {
  const spec::ModelSpec& m = s.model;
  const spec::Strategy& st = s.strategy;
  const double e = activation_bytes(st);
  const double tokens = local_tokens(s);
  const double rep = replicated_tokens(s);
  LayerOps out;

  out.add(norm("attention_norm", rep, m.hidden, e, s));
  const int input_matmuls = m.is_mla() ? add_mla_projections(s, out) : add_qkv_projection(s, out);
  add_attention(s, out);
  const double values = m.heads * static_cast<double>(m.value_head_dim()) / st.tp;  // output width
  // Unfused attention copies its output back itself; eager code after a fused kernel does too.
  if (eager(s) && st.attention != AttentionKernel::kUnfused) {
    out.add(attention_transpose(2 * e * tokens * values));
  }
  out.add(linear("output_projection", tokens, m.hidden, values, 1, e, m.bias));
  out.back().tp_edge = BlockEdge::kEnd;
  // torchtitan recomputes every second matmul of the block: wo is the fourth after wq, wk, wv.
  const int attention_matmuls = input_matmuls + 1;
  out.back().op_checkpoint_recompute = attention_matmuls % 2 == 0 ? 1 : 0;
  if (m.sandwich_norm) out.add(norm("attention_post_norm", rep, m.hidden, e, s));
  const bool fused = st.elementwise == Elementwise::kCompiled;
  const bool dropout = m.hidden_dropout > 0;
  out.add(residual("attention_residual", rep, m.hidden, e, fused, dropout));
  out.add(norm("mlp_norm", rep, m.hidden, e, s));
  const std::size_t mlp_start = out.size();

  if (moe_layer) {
    const spec::MoeSpec& moe = m.moe;
    Op router = linear("router", tokens, moe.experts, m.hidden, 1, e, false);
    router.fp8_capable = false;
    out.add(router);
    // Each GPU holds experts/ep experts; the EP group's tokens are spread over them, so a GPU
    // computes tokens * top_k * capacity_factor token-expert pairs, split over its experts.
    const double local_experts = static_cast<double>(moe.experts) / st.ep;
    const double per_expert = tokens * moe.top_k * moe.capacity_factor / local_experts;
    const std::size_t expert_up = add_dense_mlp(s, per_expert, moe.expert_ffn, "expert_up",
                                                "expert_activation", "expert_down", local_experts, out);
    out[expert_up].ep_edge = BlockEdge::kStart;
    out.back().ep_edge = BlockEdge::kEnd;
    // The local experts' weights of each projection are one grouped tensor, as their grouped GEMM
    // reads them (Megatron-Core's GroupedMLP, torchtitan's GroupedExperts): one gradient
    // accumulation per projection, not one per expert.
    for (Op* projection : {&out[expert_up], &out.back()}) {
      projection->weights = 1;
      projection->biases = m.bias ? 1 : 0;
    }
    if (moe.shared_experts > 0) {
      add_dense_mlp(s, tokens, static_cast<double>(moe.expert_ffn) * moe.shared_experts,
                    "shared_expert_up", "shared_expert_activation", "shared_expert_down", 1, out);
    }
  } else {
    const std::size_t up = add_dense_mlp(s, tokens, m.ffn, "mlp_up", "mlp_activation", "mlp_down", 1, out);
    // The count goes on through the MLP's w1, w3, w2 (SwiGLU) or w1, w2 (GELU): after four
    // attention matmuls w3 of the fused w1|w3 re-runs, or the GELU down projection.
    const bool gated = m.gated_mlp();
    const bool odd = attention_matmuls % 2 == 1;
    out[up].op_checkpoint_recompute = gated ? 0.5 : odd ? 1 : 0;
    out.back().op_checkpoint_recompute = (gated == odd) ? 1 : 0;
  }
  out[mlp_start].tp_edge = BlockEdge::kStart;
  // w1 and w3 (SwiGLU), or the router and the experts, read the MLP's gathered input.
  out[mlp_start].tp_input_gemms = moe_layer || m.gated_mlp() ? 2 : 1;
  out[mlp_start].starts_mlp = true;
  out.back().tp_edge = BlockEdge::kEnd;
  if (m.sandwich_norm) out.add(norm("mlp_post_norm", rep, m.hidden, e, s));
  out.add(residual("mlp_residual", rep, m.hidden, e, fused, dropout));
  return out;
}

LayerOps embedding_ops(const Scenario& s) {
  const double e = activation_bytes(s.strategy);
  LayerOps out;
  // Gather one row per token; backward scatter-adds the rows into the FP32 gradient.
  const double tokens = local_tokens(s);
  Op op = memory_op("embedding", 2 * e * tokens * s.model.hidden, (e + 2 * kFp32Bytes) / (2 * e));
  op.weights = s.model.position == PositionKind::kLearned ? 2 : 1;  // + learned position table
  out.add(op);
  return out;
}

LayerOps head_ops(const Scenario& s) {
  const spec::ModelSpec& m = s.model;
  const double e = activation_bytes(s.strategy);
  const double tokens = local_tokens(s);
  const double vocab = static_cast<double>(m.vocab) / s.strategy.tp;
  LayerOps out;
  out.add(norm("final_norm", replicated_tokens(s), m.hidden, e, s, eager_head(s)));
  Op projection = linear("vocab_projection", tokens, vocab, m.hidden, 1, e, false);
  // FP8 training leaves the output layer in 16 bits: torchtitan converts every nn.Linear but
  // "output" to torchao's Float8Linear (float8.py, convert_to_float8_training with
  // module_filter_fn=lambda mod, fqn: fqn != "output", since its float8 support of mid-2024), and
  // Megatron-Core's output layer is its own tensor_parallel.ColumnParallelLinear
  // (models/gpt/gpt_model.py), outside Transformer Engine's fp8_autocast.
  projection.fp8_capable = false;
  out.add(projection);
  if (m.logit_softcap > 0) out.add(logit_softcap(tokens * vocab, e, s));
  out.add(cross_entropy(tokens * vocab, e, s));
  return out;
}

}  // namespace stepcast::workload
