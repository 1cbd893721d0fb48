#include "workload/memory.h"

#include <algorithm>

#include "workload/model_size.h"
#include "workload/operators.h"

namespace stepcast::workload {
namespace {

using spec::Recompute;

constexpr double kBf16 = 2, kFp32 = 4;
// Master FP32 weights + Adam first and second moments (ZeRO §3).
constexpr double kOptimizerBytesPerParam = 12;
// CUDA context (~0.5 GiB on Ampere/Hopper), cuBLAS/cuDNN workspaces and NCCL channel buffers:
// an allowance of 1 GiB, the order nvidia-smi shows for an idle PyTorch process with NCCL
// initialised. An estimate, not a measurement of any validation run.
constexpr double kRuntimeBytes = 1024.0 * 1024 * 1024;
// DeepSpeed ZeRO-3's stage3_max_live_parameters default.
constexpr double kDeepSpeedMaxLiveParams = 1e9;
// PyTorch caching-allocator slack, as a fraction of everything else. An estimate.
constexpr double kFragmentation = 0.05;

// Micro-batches whose activations the first stage holds at its peak.
double in_flight_micro_batches(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  const double m = st.micro_batches();
  switch (st.schedule) {
    case spec::Schedule::kGpipe: return m;
    case spec::Schedule::k1F1B:
    case spec::Schedule::kZeroBubbleH1:  // ZB-H1 keeps 1F1B's peak (Qi et al. 2024, §3.1)
      return std::min<double>(st.pp, m);
    case spec::Schedule::kInterleaved:
      // Korthikanti et al. 2022, §4.2.3: the first stage holds pp * (1 + (pp-1)/(pp*vp))
      // micro-batches' worth of its layers' activations. Its warm-up runs at most all m * vp
      // chunk forwards, each holding 1/vp of the stage: m micro-batches' worth.
      return std::min<double>(st.pp * (1.0 + (st.pp - 1.0) / (st.pp * st.vp)), m);
  }
  return m;
}

// torchtitan's op-level policy keeps, per checkpointed block, the block's input and the outputs
// of the ops it saves: the matmuls less the share it recomputes (Op::op_checkpoint_recompute) and
// the attention kernel (its output and FP32 logsumexp). Everything else is recomputed in backward
// (torchtitan parallelize_llama.py, _apply_ac_to_transformer_block: _save_list).
double op_checkpoint_bytes(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  const double e = activation_bytes(st);
  const double rep = st.sequence_parallel ? local_tokens(s) / st.tp : local_tokens(s);
  double bytes = e * rep * s.model.hidden;
  for (const Op& op : layer_ops(s, s.model.is_moe())) {
    if (op.kind == OpKind::kGemm && !op.core_attention) {
      bytes += e * op.m * op.n * op.instances * (1 - op.op_checkpoint_recompute);
    } else if (op.kind == OpKind::kAttention) {
      bytes += e * op.m * s.model.value_head_dim() * op.instances + kFp32 * op.m * op.instances;
    }
  }
  return bytes;
}

// Parameters of the n consecutive layers that hold the most on one GPU: a MoE layer's experts
// make it the larger (Llama 4 alternates the kinds, DeepSeek-V3 runs MoE layers back to back).
// A model of fewer layers holds them all.
double largest_consecutive_layers(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st, int n) {
  n = std::min(n, m.layers);
  const double dense = layer_params_per_gpu(p, st, false);
  if (!m.is_moe()) return n * dense;
  const double moe = layer_params_per_gpu(p, st, true);
  const auto of = [&](int layer) { return m.is_moe_layer(layer) ? moe : dense; };
  // Past the leading dense layers the kinds repeat every layer_interval layers, and so do the
  // windows' sums (the same terms in the same order): each phase's first window is enough.
  const long long last =
      std::min<long long>(m.layers - n, static_cast<long long>(m.moe.dense_layers) + m.moe.layer_interval - 1);
  double most = 0;
  for (int l = 0; l <= last; ++l) {
    double sum = 0;
    for (int k = 0; k < n; ++k) sum += of(l + k);
    most = std::max(most, sum);
  }
  return most;
}

// Parameters ZeRO-3 holds gathered at once.
// - FSDP1 (flat-parameter), and DeepSpeed's coalesced fetch (layer), gather a unit into its flat
//   parameter's own storage and prefetch the next (at most two all-gathers in flight,
//   limit_all_gathers): two units.
// - FSDP2 (parameter) gathers into a flat output buffer and copies it out into the unsharded
//   parameters (FSDPParamGroup.wait_for_unshard). In forward the output's free is deferred to the
//   next layer's wait_for_unshard (AllGatherState, "to allow for overlap of this copy-out with next
//   all-gather"): while layer l computes from its unsharded parameters, l's gather output is still
//   held and l+1's is being gathered, on the copy-in stream's pool, which the compute stream's
//   allocations cannot reuse. Three units (backward frees the output after its copy-out: two).
//   On a group of one there is no gather: unshard returns and wait_for_unshard copies the shard
//   into the unsharded parameters at the layer's own turn, after the previous layer's reshard
//   freed its copy: one unit.
// - DeepSpeed 0.3.x gathers a module at a time and releases gathered parameters once more than
//   stage3_max_live_parameters (default 1e9, DeepSpeed's config documentation) are resident: at
//   most that plus the largest tensor being gathered.
double gathered_params(const spec::Scenario& s, const ParamCounts& p) {
  const spec::Strategy& st = s.strategy;
  switch (st.sharded_collectives) {
    case spec::ShardedCollectives::kPerLayer:
    case spec::ShardedCollectives::kFlatParameter: return largest_consecutive_layers(p, s.model, st, 2);
    case spec::ShardedCollectives::kPerParameter:
      return largest_consecutive_layers(p, s.model, st, st.dp * st.cp > 1 ? 3 : 1);
    case spec::ShardedCollectives::kPerTensorBlocking: break;
  }
  double largest = 0;
  for (const Op& op : layer_ops(s, s.model.is_moe())) {
    for_each_trained_tensor(op, [&](double elements) { largest = std::max(largest, elements); });
  }
  return std::min(largest_consecutive_layers(p, s.model, st, 2), kDeepSpeedMaxLiveParams + largest);
}

}  // namespace

double layer_activation_bytes(const spec::Scenario& s, Recompute mode) {
  const spec::ModelSpec& m = s.model;
  const spec::Strategy& st = s.strategy;
  const double e = activation_bytes(st);
  const double t = st.tp;
  const double tokens = local_tokens(s);
  const double rep = st.sequence_parallel ? tokens / t : tokens;  // outside the TP region
  const double h = m.hidden, hd = m.effective_head_dim(), vd = m.value_head_dim();
  if (mode == Recompute::kFull) return e * rep * h;  // the layer input checkpoint only
  if (mode == Recompute::kOp) return op_checkpoint_bytes(s);

  // The MLP's inner width per token, averaged over the dense and MoE layers: a MoE layer's token
  // passes through top_k routed experts and the shared ones.
  const double moe = m.moe_layer_fraction();
  const double ffn_width = (1 - moe) * m.ffn + moe * static_cast<double>(m.moe.expert_ffn) *
                                                   (m.moe.top_k + m.moe.shared_experts);
  const double act_inputs = m.gated_mlp() ? 2 : 1;
  // Attention block: norm input, QKV input (sharded with SP), Q K V, attention output.
  double bytes = e * rep * h + e * rep * h;
  bytes += e * tokens * (m.heads * hd + m.kv_heads * (hd + vd)) / t;
  if (m.qk_norm)
    bytes += e * tokens * (m.heads + m.kv_heads) * hd / t;  // Q and K before their norms
  if (m.is_mla()) {
    // Each down projection's output (its norm's input) and the normed latent (the up
    // projection's input), whole on every TP rank; the key-value one carries the RoPE head too.
    const spec::MlaSpec& a = m.mla;
    bytes += e * tokens * (2.0 * a.q_lora_rank + 2.0 * a.kv_lora_rank + a.qk_rope_head_dim);
  }
  bytes += e * tokens * m.heads * vd / t;
  if (st.attention == spec::AttentionKernel::kUnfused && mode == Recompute::kNone) {
    // Softmax output, dropout mask and dropout output: 5 a s^2 b / t (Korthikanti eq. 1 with
    // the 1-byte mask).
    const double scores = st.micro_batch * (m.heads / t) * (st.seq_len / st.cp) * st.seq_len;
    bytes += (2 * e + 1) * scores;
  } else if (st.attention != spec::AttentionKernel::kUnfused) {
    bytes += kFp32 * tokens * m.heads / t;  // logsumexp
  }
  // MLP block: norm input, up-projection input, activation input(s), down-projection input.
  bytes += e * rep * h + e * rep * h;
  bytes += e * tokens * ffn_width * (act_inputs + 1) / t;
  // The two residual dropout masks, a byte per element each (Korthikanti et al. 2022, eq. 1).
  if (m.hidden_dropout > 0) bytes += 2 * rep * h;
  if (m.sandwich_norm) bytes += 2 * e * rep * h;  // the inputs of the norms after attention and MLP
  return bytes;
}

double stored_layer_activation_bytes(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (st.recompute != Recompute::kFull || st.recompute_interval == 1) return layer_activation_bytes(s, st.recompute);
  const double recomputed = 1.0 / st.recompute_interval;
  return recomputed * layer_activation_bytes(s, Recompute::kFull) +
         (1 - recomputed) * layer_activation_bytes(s, Recompute::kNone);
}

double in_flight_activation_bytes(const spec::Scenario& s) {
  const double per_layer = stored_layer_activation_bytes(s);
  return per_layer * (static_cast<double>(s.model.layers) / s.strategy.pp) * in_flight_micro_batches(s);
}

MemoryBreakdown memory_per_gpu(const spec::Scenario& s) {
  return memory_per_gpu(s, param_counts(s.model), in_flight_activation_bytes(s));
}

MemoryBreakdown memory_per_gpu(const spec::Scenario& s, const ParamCounts& p, double stored_activations_bytes) {
  const spec::ModelSpec& m = s.model;
  const spec::Strategy& st = s.strategy;
  MemoryBreakdown mem;

  const double params = stage_params_per_gpu(p, m, st);

  const double shard = static_cast<double>(st.dp) * st.cp;  // ZeRO shards over DP x CP ranks
  // A 16-bit copy of the weights beside the optimizer's FP32 masters, except where the FP32
  // parameters are the masters and ZeRO-3 shards them (FSDP, OptimizerStep::kInPlace and
  // kInPlaceLoop): the shard
  // is then the optimizer's FP32 parameter itself, cast to 16 bits only as each layer is gathered
  // (FSDP2's all-gather input; FSDP1's _mp_shard, freed after the gather).
  const bool masters_only =
      st.zero_stage >= 3 && st.optimizer_step != spec::OptimizerStep::kMasterWeights;
  mem.weights_bytes = masters_only ? 0 : kBf16 * params / (st.zero_stage >= 3 ? shard : 1);
  // ZeRO-3's gathered parameters include FSDP's root unit (embeddings, final norm and head),
  // unsharded from before the embedding's forward to after the head's, and from the head's
  // backward to the end of the backward: through the step's peak, beside the layers' units.
  if (st.zero_stage >= 3) mem.weights_bytes += weight_bytes(st) * (gathered_params(s, p) + fsdp_root_params_per_gpu(p, m, st));
  mem.gradients_bytes = gradient_bytes(st) * params / (st.zero_stage >= 2 ? shard : 1);
  mem.optimizer_bytes = kOptimizerBytesPerParam * params / (st.zero_stage >= 1 ? shard : 1);

  mem.activations_bytes = stored_activations_bytes;
  if (st.recompute == Recompute::kFull || st.recompute == Recompute::kOp) {
    // While one layer is recomputed its full activations exist once more.
    mem.activations_bytes += layer_activation_bytes(s, Recompute::kNone);
  }
  // Logits of one micro-batch in BF16 plus their FP32 softmax copy (last stage).
  const double logits = local_tokens(s) * m.vocab / st.tp;
  mem.logits_bytes = (kBf16 + kFp32) * logits;

  mem.runtime_bytes = kRuntimeBytes;
  const double subtotal = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                          mem.activations_bytes + mem.logits_bytes + mem.runtime_bytes;
  mem.fragmentation_bytes = kFragmentation * subtotal;
  mem.total_bytes = subtotal + mem.fragmentation_bytes;
  mem.capacity_bytes = s.cluster.gpu.hbm_bytes;
  mem.fits = mem.total_bytes <= mem.capacity_bytes;
  return mem;
}

}  // namespace stepcast::workload
