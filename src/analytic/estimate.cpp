#include "analytic/estimate.h"

#include <algorithm>

#include "cost/collective.h"
#include "cost/compute.h"
#include "workload/model_size.h"
#include "workload/operators.h"
#include "workload/placement.h"

namespace stepcast::analytic {
namespace {

using cost::CollectiveKind;
using spec::Axis;
using spec::Recompute;
using workload::LayerOps;
using workload::Op;
using workload::OpKind;

// Bytes per parameter an Adam step streams: reads FP32 master, gradient, m and v; writes master,
// m, v and the BF16 working copy (4 + 4 + 4 + 4 + 4 + 4 + 4 + 2).
constexpr double kAdamBytesPerParam = 30;
// Dynamic FP8 scaling (torchao Float8Linear): every GEMM operand is read in BF16 and written in
// FP8 (2 + 1 bytes per element) before the GEMM.
constexpr double kFp8CastBytesPerElement = 3;

struct PassTimes {
  double fwd = 0;        // forward kernels
  double bwd = 0;        // backward kernels
  double recompute = 0;  // forward kernels re-run in backward
  double gemm_fwd = 0;   // GEMM share of fwd, for async-TP overlap
  double gemm_bwd = 0;
  double attention_fwd = 0;  // core attention share of fwd, for CP overlap
  double attention_bwd = 0;
};

double grad_bytes(spec::Dtype d) { return d == spec::Dtype::kFp32 ? 4 : 2; }

PassTimes price(const LayerOps& ops, const spec::Scenario& s) {
  const spec::GpuSpec& gpu = s.cluster.gpu;
  const bool fp8 = s.strategy.dtype == spec::Dtype::kFp8;
  const Recompute mode = s.strategy.recompute;
  PassTimes t;
  for (const Op& op : ops) {
    double fwd = 0, bwd = 0;
    if (op.kind == OpKind::kGemm) {
      const bool use_fp8 = fp8 && op.fp8_capable;
      const cost::GemmShape f{op.m, op.n, op.k, op.instances};
      const cost::GemmShape dgrad{op.m, op.k, op.n, op.instances};
      const cost::GemmShape wgrad{op.k, op.n, op.m, op.instances};
      fwd = cost::gemm_time_s(f, op.bytes, use_fp8, gpu);
      bwd = cost::gemm_time_s(dgrad, op.bytes, use_fp8, gpu) +
            cost::gemm_time_s(wgrad, op.bytes, use_fp8, gpu);
      if (use_fp8) {
        fwd += cost::memory_time_s(kFp8CastBytesPerElement * (op.m * op.k + op.k * op.n), gpu);
        bwd += cost::memory_time_s(kFp8CastBytesPerElement * op.m * op.n, gpu);
      }
      t.gemm_fwd += fwd;
      t.gemm_bwd += bwd;
    } else if (op.kind == OpKind::kAttention) {
      fwd = cost::attention_time_s(op.flops, op.bytes, op.n, gpu);
      bwd = cost::attention_time_s(op.flops * op.bwd_flops, op.bytes * op.bwd_bytes, op.n, gpu);
    } else {
      fwd = cost::memory_time_s(op.bytes, gpu);
      bwd = op.bwd_bytes > 0 ? cost::memory_time_s(op.bytes * op.bwd_bytes, gpu) : 0;
    }
    if (op.core_attention) {
      t.attention_fwd += fwd;
      t.attention_bwd += bwd;
    }
    t.fwd += fwd;
    t.bwd += bwd;
    if (mode == Recompute::kFull || (mode == Recompute::kSelective && op.core_attention)) {
      t.recompute += fwd;
    }
  }
  return t;
}

double collective(CollectiveKind kind, double bytes, workload::GroupShape g, const spec::Scenario& s) {
  if (g.size <= 1 || bytes <= 0) return 0;
  return cost::collective_time_s(kind, bytes, cost::GroupLayout{g.size, g.stride}, s.cluster);
}

// Per-layer communication and how much of it the kernels hide, for one micro-batch.
struct LayerComm {
  double fwd = 0, bwd = 0;  // exposed seconds per pass (recompute included in bwd)
};

LayerComm tp_comm(const spec::Scenario& s, const PassTimes& k) {
  const spec::Strategy& st = s.strategy;
  if (st.tp <= 1) return {};
  const double bytes = workload::local_tokens(s) * s.model.hidden * workload::activation_bytes(st);
  const workload::GroupShape g = workload::group_of(st, Axis::kTp);
  // Two per pass (after attention and after the MLP): all-reduce, or with sequence parallelism an
  // all-gather before and a reduce-scatter after each block (Korthikanti §4.2.2).
  const double one = st.sequence_parallel ? collective(CollectiveKind::kAllGather, bytes, g, s) +
                                                collective(CollectiveKind::kReduceScatter, bytes, g, s)
                                          : 2 * collective(CollectiveKind::kAllReduce, bytes, g, s);
  const double recompute_share = st.recompute == Recompute::kFull ? one : 0;
  LayerComm c{one, one + recompute_share};
  if (st.overlap_tp_comm) {  // async TP decomposes the GEMMs and hides the collectives behind them
    c.fwd = std::max(0.0, c.fwd - k.gemm_fwd);
    c.bwd = std::max(0.0, c.bwd - k.gemm_bwd);
  }
  return c;
}

LayerComm cp_comm(const spec::Scenario& s, const PassTimes& k) {
  const spec::Strategy& st = s.strategy;
  if (st.cp <= 1) return {};
  const spec::ModelSpec& m = s.model;
  // Ring attention: cp-1 steps, each passing one rank's K and V chunk to the next; backward also
  // returns dK and dV. Overlapped with the attention kernel of the chunk in hand.
  const double kv = workload::local_tokens(s) * 2.0 * m.kv_heads * m.effective_head_dim() / st.tp *
                    workload::activation_bytes(st);
  const workload::GroupShape g = workload::group_of(st, Axis::kCp);
  const double step = collective(CollectiveKind::kSendRecv, kv, g, s);
  const double fwd = (st.cp - 1) * step;
  return {std::max(0.0, fwd - k.attention_fwd), std::max(0.0, 2 * fwd - k.attention_bwd)};
}

LayerComm ep_comm(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (st.ep <= 1) return {};
  // Dispatch and combine all-to-all per pass, each moving every routed token's hidden vector.
  const double bytes = workload::local_tokens(s) * s.model.moe.top_k * s.model.hidden *
                       workload::activation_bytes(st);
  const double one = 2 * collective(CollectiveKind::kAllToAll, bytes, workload::group_of(st, Axis::kEp), s);
  return {one, one + (st.recompute == Recompute::kFull ? one : 0)};
}

}  // namespace

Estimate estimate(const spec::Scenario& s) {
  const spec::ModelSpec& m = s.model;
  const spec::Strategy& st = s.strategy;
  const spec::GpuSpec& gpu = s.cluster.gpu;
  const workload::ParamCounts params = workload::param_counts(m);
  Estimate out;

  // Layers of the slowest stage, split into dense and MoE layers in proportion.
  const double layers = static_cast<double>(m.layers) / st.pp;
  const double moe_fraction = m.is_moe() ? static_cast<double>(m.layers - m.moe.dense_layers) / m.layers : 0;

  const PassTimes dense = price(workload::layer_ops(s, false), s);
  const PassTimes moe = m.is_moe() ? price(workload::layer_ops(s, true), s) : PassTimes{};
  const PassTimes head = price(workload::head_ops(s), s);
  const PassTimes embed = price(workload::embedding_ops(s), s);
  // The last stage carries the output head, the first the embedding; pp == 1 carries both.
  const double edge_fwd = st.pp == 1 ? head.fwd + embed.fwd : std::max(head.fwd, embed.fwd);
  const double edge_bwd = st.pp == 1 ? head.bwd + embed.bwd : std::max(head.bwd, embed.bwd);

  const auto mix = [&](double d, double e) { return (1 - moe_fraction) * d + moe_fraction * e; };
  const LayerComm tp_d = tp_comm(s, dense), cp_d = cp_comm(s, dense);
  const LayerComm tp_m = m.is_moe() ? tp_comm(s, moe) : LayerComm{};
  const LayerComm cp_m = m.is_moe() ? cp_comm(s, moe) : LayerComm{};
  const LayerComm ep = ep_comm(s);

  const double kernels_fwd = layers * mix(dense.fwd, moe.fwd) + edge_fwd;
  const double kernels_bwd = layers * mix(dense.bwd + dense.recompute, moe.bwd + moe.recompute) + edge_bwd;
  const double tp = layers * (mix(tp_d.fwd, tp_m.fwd) + mix(tp_d.bwd, tp_m.bwd));
  const double cp = layers * (mix(cp_d.fwd, cp_m.fwd) + mix(cp_d.bwd, cp_m.bwd));
  const double epc = layers * moe_fraction * (ep.fwd + ep.bwd);

  // ZeRO-3 / FSDP: per micro-batch and layer, gather the layer's parameters for forward and again
  // for backward, and reduce-scatter its gradients; prefetching hides them behind the layer's
  // kernels, so a layer costs max(kernels, communication).
  const workload::GroupShape grad_group = workload::gradient_group(st);
  const double layer_params = workload::layer_params_per_gpu(params, m, st);
  double fsdp = 0;
  if (st.zero_stage >= 3) {
    const double gather = collective(CollectiveKind::kAllGather, 2 * layer_params, grad_group, s);
    const double scatter = collective(CollectiveKind::kReduceScatter,
                                      grad_bytes(st.grad_reduce_dtype) * layer_params, grad_group, s);
    const double f = mix(dense.fwd, moe.fwd), b = mix(dense.bwd + dense.recompute, moe.bwd + moe.recompute);
    fsdp = layers * (std::max(0.0, gather - f) + std::max(0.0, gather + scatter - b));
  }

  // Pipeline send/receive of one micro-batch's boundary activations, forward and backward, once
  // per virtual stage; with sequence parallelism each TP rank sends its 1/tp slice.
  double p2p = 0;
  if (st.pp > 1) {
    double bytes = workload::local_tokens(s) * m.hidden * workload::activation_bytes(st);
    if (st.sequence_parallel) bytes /= st.tp;
    p2p = 2.0 * st.vp * collective(CollectiveKind::kSendRecv, bytes, workload::group_of(st, Axis::kPp), s);
  }

  const double per_micro_batch = kernels_fwd + kernels_bwd + tp + cp + epc + fsdp + p2p;
  const double micro_batches = st.micro_batches();
  // Fill and drain: (pp-1) micro-batch slots for GPipe and 1F1B, (pp-1)/vp with interleaving
  // (Narayanan et al. 2021, §2.2.1-2.2.2).
  const double bubble_slots = st.schedule == spec::Schedule::kInterleaved
                                  ? (st.pp - 1.0) / st.vp : st.pp - 1.0;
  const double pipeline = (micro_batches + bubble_slots) * per_micro_batch;

  // Data-parallel gradient reduction of the stage's parameters (ZeRO-0/1 all-reduce, ZeRO-2
  // reduce-scatter; ZeRO-3 already scattered per layer). Buckets start as soon as a layer's
  // backward of the last micro-batch finishes, so only what the remaining backward cannot hide is
  // exposed, and never less than the last layer's bucket.
  const double stage_params = workload::stage_params_per_gpu(params, m, st);
  double dp = 0;
  if (grad_group.size > 1 && st.zero_stage < 3) {
    const CollectiveKind kind = st.zero_stage == 2 ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
    const double reduce = collective(kind, grad_bytes(st.grad_reduce_dtype) * stage_params, grad_group, s);
    // Without overlap (Megatron-LM 2021, DeepSpeed without bucketing) nothing hides it.
    const auto exposed = [&](double comm, double window) {
      if (!st.overlap_dp_comm) return comm;
      return std::max(comm / std::max(1.0, layers), comm - (window - window / std::max(1.0, layers)));
    };
    dp = exposed(reduce, kernels_bwd);
    if (st.zero_stage >= 1) {  // updated parameter shards gathered before the next forward
      dp += exposed(collective(CollectiveKind::kAllGather, 2 * stage_params, grad_group, s), kernels_fwd);
    }
  }

  const double optimizer_params = stage_params / (st.zero_stage >= 1 ? grad_group.size : 1);
  const double optimizer = cost::memory_time_s(kAdamBytesPerParam * optimizer_params, gpu);

  Breakdown& b = out.breakdown;
  b.compute_s = micro_batches * (kernels_fwd + kernels_bwd);
  b.tp_comm_s = micro_batches * tp;
  b.cp_comm_s = micro_batches * cp;
  b.ep_comm_s = micro_batches * epc;
  b.pp_comm_s = micro_batches * p2p;
  b.fsdp_comm_s = micro_batches * fsdp;
  b.bubble_s = bubble_slots * per_micro_batch;
  b.dp_comm_s = dp;
  b.optimizer_s = optimizer;
  out.step_time_s = pipeline + dp + optimizer;

  const double tokens = static_cast<double>(st.global_batch) * st.seq_len;
  out.tokens_per_s = tokens / out.step_time_s;
  const double model_flops = workload::model_flops_per_token(m, st.seq_len) * tokens;
  // Recomputation re-runs the forward: a third of the layers' model FLOPs (full) or of the
  // attention term (selective).
  const double attention_flops = 12.0 * m.layers * m.heads * m.effective_head_dim() * st.seq_len * tokens;
  const double layer_flops = model_flops - 6.0 * m.vocab * m.hidden * tokens;
  const double recompute_flops = st.recompute == Recompute::kFull ? layer_flops / 3
                                 : st.recompute == Recompute::kSelective ? attention_flops / 3 : 0;
  const double denominator = out.step_time_s * s.gpus;
  out.tflops_per_gpu = model_flops / denominator / 1e12;
  out.mfu = model_flops / denominator / gpu.peak_bf16_flops;
  out.hfu = (model_flops + recompute_flops) / denominator / gpu.peak_bf16_flops;
  out.megatron_tflops_per_gpu = workload::megatron_eq3_flops(m, st.global_batch, st.seq_len) / denominator / 1e12;
  out.memory = workload::memory_per_gpu(s);
  return out;
}

}  // namespace stepcast::analytic
