#include "workload/step_costs.h"

#include <algorithm>
#include <cmath>

#include "cost/compute.h"
#include "workload/cp_exchange.h"
#include "workload/model_size.h"

namespace stepcast::workload {
namespace {

using cost::CollectiveKind;
using spec::Axis;

// Bytes per parameter Adam streams (apex's FusedAdam, torch's fused AdamW): reads the FP32
// weight, gradient and both moments; writes the weight and both moments (4 x 4 + 3 x 4).
constexpr double kAdamBytesPerParam = 28;
// Bytes per parameter Composer's DecoupledAdamW streams (composer/optim/decoupled_weight_decay.py,
// DecoupledAdamW.adamw), with the weight decay of 0 of llm-foundry's pretraining YAMLs
// (scripts/train/yamls/pretrain/mpt-*.yaml), which skips its param.mul_: a PyTorch kernel per
// operation, each reading its FP32 operands and writing its result: exp_avg.mul_ (4 + 4),
// .add_(grad) (8 + 4), exp_avg_sq.mul_ (4 + 4), .addcmul_(grad, grad) (12 + 4), sqrt (4 + 4),
// the division by sqrt(bias_correction2) (4 + 4), .add_(eps) (4 + 4), param.addcdiv_(exp_avg,
// denom) (12 + 4).
constexpr double kAdamLoopBytesPerParam = 80;
// A 16-bit model weight (an FP32 master weight or main gradient: kFp32Bytes).
constexpr double k16BitBytes = 2;
// Dynamic FP8 scaling (torchao Float8Linear's tensorwise scaling; Transformer Engine's current
// scaling) casts every GEMM operand from BF16 to FP8 in two kernels: one finds the tensor's
// largest magnitude (torchao's tensor_to_amax, torch.max(torch.abs(x)); TE's nvte_compute_amax),
// reading it (2 bytes per element), and one scales and casts it, reading it again and writing
// FP8 (2 + 1).
constexpr double kFp8AmaxBytesPerElement = 2;
constexpr double kFp8ScaledCastBytesPerElement = 3;
constexpr double kFp8CastKernels = 2;  // the host launches of fp8_cast_s's two kernels
// An FP8 element, E4M3 or E5M2.
constexpr double kFp8Bytes = 1;
// DeepSpeed ZeRO-3's param_persistence_threshold default: tensors of at most this many elements
// are not partitioned (deepspeed/runtime/zero/constants.py, early 2021).
constexpr double kDeepSpeedPersistenceThreshold = 1e5;
// DeepSpeed ZeRO-3's stage3_max_reuse_distance default (its config documentation): a module's
// gathered parameters are kept for their next use when the parameters used in between add up to
// fewer elements than this (PartitionedParameterCoordinator._keep_for_later).
constexpr double kDeepSpeedMaxReuseDistance = 1e9;

// The partial sums overlapped TP's reduce-scatter adds up are 16-bit, as the GEMMs' outputs are
// (FP8 GEMMs too write BF16).
constexpr double kPartialSumBytes = 2;

// Overlapped TP (Strategy::overlap_tp_comm: PyTorch's async TP, Transformer Engine's userbuffers)
// hides each all-gather or reduce-scatter at a block edge behind the GEMM it feeds or drains by
// splitting that GEMM into one GEMM per rank's shard of the tokens: while one shard's piece
// computes, the next shard moves (torch.distributed._symmetric_memory's
// fused_all_gather_matmul and fused_matmul_reduce_scatter; TE's ring-exchange overlap). The
// forward GEMMs of a block's first and last ops are split, and in backward, which mirrors the
// collectives, their input-gradient GEMMs. Returns the number of pieces: tp, or 1 where nothing
// is split.
double tp_overlap_pieces(const Op& op, const spec::Strategy& st) {
  const bool split =
      st.overlap_tp_comm && st.sequence_parallel && st.tp > 1 && op.tp_edge != BlockEdge::kNone;
  return split ? st.tp : 1;
}

// Seconds to cast `elements` BF16 elements to FP8 with a dynamic scale: the amax kernel, then
// the scaled cast, each a kernel of its own.
double fp8_cast_s(double elements, const spec::GpuSpec& gpu) {
  return cost::memory_time_s(kFp8AmaxBytesPerElement * elements, gpu) +
         cost::memory_time_s(kFp8ScaledCastBytesPerElement * elements, gpu);
}

// ZeRO-3 gathers and scatters one layer at a time, of the kind given.
double fsdp_layer_params(const spec::Scenario& s, bool moe_layer) {
  return layer_params_per_gpu(param_counts(s.model), s.strategy, moe_layer);
}

// Host seconds of one PyTorch operator on the slices of a list-form collective: medians over the
// eight ranks of the DLRM Kineto traces in ../shared/traces (param/et_replay, step 12; V100
// hosts): aten::narrow 3 us, aten::view 2 us, aten::select 3 us, and aten::copy_ with its kernel
// launch or cudaMemcpyAsync 12 us. The Python interpreter's own time per call is not counted.
constexpr double kNarrowHostS = 3e-6, kViewHostS = 2e-6, kSelectHostS = 3e-6, kCopyHostS = 12e-6;

// The profiler's own host time per event it records, at least: three steps of GPT 1.3B eager
// traced back to back took 233.9 ms (median), nine untraced ones before them 197.2 ms, while the
// traced ones recorded 15,594 events a step (11,851 operators, 3,356 CUDA runtime and 387 driver
// calls): 36.7 ms / 15,594 (data/measurements/h200-loop/gpt-1.3b-eager; docs/accuracy.md, "Host
// time under the profiler"). A lower bound: the untraced step's host may have had slack.
constexpr double kProfilerHostPerEventS = 2.35e-6;

// Host seconds PyTorch's ProcessGroupNCCL (1.8) spends staging one rank's slice of a list-form
// collective: an at::select of the flat buffer and a copy_(..., non_blocking) to or from the slice,
// a cudaMemcpyAsync on the NCCL stream, in a C++ loop. The traced aten::select and aten::copy_
// above each enclose one event of their own (aten::as_strided; the cudaMemcpyAsync runtime call)
// whose profiler time an unprofiled run does not pay.
constexpr double kC10dSliceHostS = kSelectHostS + kCopyHostS - 2 * kProfilerHostPerEventS;

// DeepSpeed ZeRO-3 0.3.x moves a layer one tensor at a time (Strategy::ShardedCollectives), each
// through torch.distributed's list form after the host has synchronised with the GPU:
// - DeepSpeed builds the n ranks' slices in a Python loop, with the GPU idle: a narrow of the
//   gathered buffer each (partition_parameters.py, _allgather_param), or a view and a narrow of
//   the gradient (_reduce_scatter_gradient);
// - PyTorch stages them in one flat buffer (newLikeFlat: a new allocation even where, as here,
//   the slices are views of one buffer) and copies each slice, selected from it, with a copy of
//   its own (ProcessGroupNCCL, in C++ with no Python): out after the all-gather, the host
//   launching the copies while the collective runs; in before the reduce-scatter, which starts
//   after the last copy.
// Each copy costs the larger of its GPU time and its host time. One tensor of `bytes`:
// `beside`: the seconds of compute an all-gather's collective and copies run beside once the
// host has launched them (prefetched_gathers_s); what they take beyond it is exposed.
double list_collective_s(CollectiveKind kind, double bytes, GroupShape group, const spec::Scenario& s,
                         double beside = 0) {
  const bool gather = kind == CollectiveKind::kAllGather;
  const double slice_views = group.size * (gather ? kNarrowHostS : kViewHostS + kNarrowHostS);
  const double host_copies = group.size * kC10dSliceHostS;
  const double collective = collective_s(kind, bytes, group, s);
  const double gpu_copies = group.size * cost::memory_time_s(2 * bytes / group.size, s.cluster.gpu);
  return slice_views + (gather ? std::max(collective + gpu_copies - beside, host_copies)
                               : std::max(gpu_copies, host_copies) + collective);
}

// The gradients of `layer`'s tensors, each reduce-scattered through list_collective_s. Tensors
// under DeepSpeed's persistence threshold stay whole on every rank and are never gathered, but
// their gradients are reduce-scattered as the others': every parameter's gradient hook adds it to
// the reduction bucket (stage3.py, reduce_independent_p_g_buckets_and_remove_grads), and the
// bucket reduce-scatters each of its parameters on its own (partition_parameters.py,
// _reduce_scatter_gradients, DeepSpeed 0.3.13-0.3.16).
double per_tensor_scatter_s(const LayerOps& layer, const spec::Scenario& s) {
  const GroupShape group = gradient_group(s.strategy);
  if (group.size <= 1) return 0;
  const double bytes_per_element = gradient_bytes(s.strategy);
  double seconds = 0;
  for (const Op& op : layer) {
    for_each_trained_tensor(op, [&](double elements) {
      seconds += list_collective_s(CollectiveKind::kReduceScatter, bytes_per_element * elements, group, s);
    });
  }
  return seconds;
}

// The persistent tensors DeepSpeed 0.3.x gathers again after each optimizer step. The backward
// ends by re-partitioning every parameter, the persistent ones too (stage3.py, backward:
// _partition_all_parameters, release_and_reset_parameter), and _post_step gathers those back with
// one list-form all-gather of all their shards (persistent_parameters[0].all_gather, not
// asynchronous: partition_parameters.py, _allgather_params). Before it a narrow and a copy_ put
// each parameter's own shard in; after it a Python loop copies each rank's piece of each parameter
// out into a new tensor, with a narrow, a view, a narrow and a copy_ per rank whose piece holds
// part of the parameter. Its pipeline engine refuses ZeRO-3 (PipelineEngine asserts a ZeRO stage
// below 2), so the rank holds the whole model: every layer, the embedding and the head.
double persistent_regather_s(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (st.zero_stage < 3 || st.sharded_collectives != spec::ShardedCollectives::kPerTensorBlocking) return 0;
  const GroupShape group = gradient_group(st);
  if (group.size <= 1) return 0;
  const double ranks = group.size, bytes_per_element = weight_bytes(st);
  const double copy_host = 2 * kNarrowHostS + kViewHostS + kCopyHostS;
  double elements = 0, copies = 0;
  const auto add = [&](const LayerOps& ops, double times) {
    for (const Op& op : ops) {
      for_each_trained_tensor(op, [&](double tensor) {
        if (tensor <= 0 || tensor > kDeepSpeedPersistenceThreshold) return;
        const double piece = std::ceil(tensor / ranks);
        const double per_rank = std::max(cost::memory_time_s(2 * bytes_per_element * piece, s.cluster.gpu), copy_host);
        elements += times * tensor;
        copies += times * (kNarrowHostS + kCopyHostS + std::ceil(tensor / piece) * per_rank);
      });
    }
  };
  const spec::ModelSpec& m = s.model;
  const int moe_layers = m.moe_layers();
  add(layer_ops(s, false), m.layers - moe_layers);
  if (moe_layers > 0) add(layer_ops(s, true), moe_layers);
  add(embedding_ops(s), 1);
  add(head_ops(s), 1);
  return copies + list_collective_s(CollectiveKind::kAllGather, bytes_per_element * elements, group, s);
}

// How many of a layer's first operators DeepSpeed 0.3.x gathers again for the backward after
// recomputing the layer. The backward runs the layer's modules in reverse right after the
// recomputation ran them forward, so between a module's two uses each module behind it runs
// twice: the last one is kept (nothing in between), and going back the distance grows until it
// reaches kDeepSpeedMaxReuseDistance; from there to the layer's start every module is released
// and gathered again. On GPT-3 only the MLP's down projection is kept (the up projection's
// distance is 2 x 604 M): two thirds of the layer move again.
std::size_t regathered_ops(const LayerOps& layer) {
  double behind = 0;
  for (std::size_t i = layer.size(); i > 0; --i) {
    if (2 * behind >= kDeepSpeedMaxReuseDistance) return i;
    for_each_trained_tensor(layer[i - 1], [&](double elements) { behind += elements; });
  }
  return 0;
}

// Whether ZeRO-3 partitions one of `op`'s tensors: one over the persistence threshold.
bool partitioned(const Op& op) {
  bool any = false;
  for_each_trained_tensor(op, [&](double elements) { any = any || elements > kDeepSpeedPersistenceThreshold; });
  return any;
}

// One module of DeepSpeed 0.3.x's ZeRO-3 trace (PrefetchCoordinator.sub_module_trace, recorded
// on the first step and followed on every later one): an op's compute in one pass, and whether
// its fetch gathers partitioned tensors.
struct TraceStep {
  const Op* op;
  double compute;
  bool fetches;
};

// One module's fetch: each partitioned tensor gathered into a buffer _allgather_param allocates
// with torch.zeros, whose fill kernel writes the whole tensor before the host's
// torch.cuda.synchronize() returns. The first tensor was prefetched beside `beside` seconds of
// compute; the module's others are gathered at its fetch, beside nothing.
double fetch_s(const Op& op, double beside, const spec::Scenario& s) {
  const GroupShape group = gradient_group(s.strategy);
  const double bytes_per_element = weight_bytes(s.strategy);
  double seconds = 0;
  for_each_trained_tensor(op, [&](double elements) {
    if (elements <= kDeepSpeedPersistenceThreshold) return;
    const double bytes = bytes_per_element * elements;
    seconds += cost::memory_time_s(bytes, s.cluster.gpu) +
               list_collective_s(CollectiveKind::kAllGather, bytes, group, s, beside);
    beside = 0;
  });
  return seconds;
}

// The exposed seconds of a trace's gathers (stage3.py, DeepSpeed 0.3.13-0.3.16). Once a module's
// fetch returns (fetch_sub_module: it waits on the gathers in flight and synchronises the
// device), prefetch_next_sub_modules starts the gathers of the next partitioned tensors in the
// trace, asynchronously, up to stage3_prefetch_bucket_size elements (5e7 by default; every
// partitioned tensor of GPT-3 and GPT-530B is larger, so one tensor). It starts none while one
// is in flight, so the next module that fetches waits for it, and each gather runs beside the
// compute between two fetches, its host work (slices, launches) before that compute launches.
// The trace is the layer's, repeated: its first fetch was prefetched at the last one.
double prefetched_gathers_s(const std::vector<TraceStep>& trace, const spec::Scenario& s) {
  std::size_t last = trace.size();
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (trace[i].fetches) last = i;
  if (last == trace.size() || gradient_group(s.strategy).size <= 1) return 0;
  double beside = 0;
  for (std::size_t i = last; i < trace.size(); ++i) beside += trace[i].compute;
  double seconds = 0;
  for (const TraceStep& step : trace) {
    if (step.fetches) {
      seconds += fetch_s(*step.op, beside, s);
      beside = 0;
    }
    beside += step.compute;
  }
  return seconds;
}

// A layer's gathers under DeepSpeed 0.3.x: its forward's; its backward's, recomputing the
// layer forward (every module fetched) and then running its modules in reverse, each fetching
// again what the recomputation released (regathered_ops). The compute is each op's with every
// SM: the kernels' slowdown beside the collective is not counted.
struct LayerGathers {
  double forward = 0, recomputed_backward = 0;
};
LayerGathers per_tensor_gathers(const spec::Scenario& s, bool moe_layer) {
  const LayerOps layer = layer_ops(s, moe_layer);
  const OpPricer price(s, Overlap{});
  std::vector<TraceStep> forward;
  std::vector<OpTime> times;
  for (const Op& op : layer) {
    times.push_back(price(op).whole);
    forward.push_back({&op, times.back().fwd, partitioned(op)});
  }
  std::vector<TraceStep> backward = forward;
  const std::size_t regathered = regathered_ops(layer);
  for (std::size_t i = layer.size(); i > 0; --i)
    backward.push_back({&layer[i - 1], times[i - 1].bwd(), i - 1 < regathered && partitioned(layer[i - 1])});
  return {prefetched_gathers_s(forward, s), prefetched_gathers_s(backward, s)};
}

// FSDP2 copies around its collectives even on a group of one, where the collectives move
// nothing (the Kineto traces of data/measurements/h100-steps: fully_shard on one H100).
bool fsdp2_copies(const spec::Scenario& s) {
  return s.strategy.sharded_collectives == spec::ShardedCollectives::kPerParameter;
}

// A gather's copies, each a read and a write: every rank casts its FP32 shard to BF16 (FSDP2's
// mixed precision keeps FP32 parameters; under autocast it copies them as FP32) and copies that
// into the gather's input; the gathered buffer is then copied out into the layer's parameters. A group of one gathers in place, and
// its trace shows the cast and one copy per parameter, no copy-out.
double fsdp_copy_out_for(const spec::Scenario& s, double params) {
  if (!fsdp2_copies(s)) return 0;
  const double ranks = gradient_ranks(s.strategy);
  const double e = weight_bytes(s.strategy);
  const double shard = (kFp32Bytes + e + 2 * e) * params / ranks;
  const double gathered = ranks > 1 ? 2 * e * params : 0;
  return cost::memory_time_s(shard + gathered, s.cluster.gpu);
}

// PyTorch FSDP1's gradient work around a unit's reduce-scatter. A group of one runs NO_SHARD
// (FullyShardedDataParallel switches FULL_SHARD to it on a world of one) and scatters nothing.
bool fsdp1_gradients(const spec::Scenario& s) {
  return s.strategy.sharded_collectives == spec::ShardedCollectives::kFlatParameter && gradient_ranks(s.strategy) > 1;
}

// FSDP1's post-backward stream per unit, in turn with its reduce-scatter (torch 2.0/2.1:
// torch/distributed/fsdp/_runtime_utils.py, _post_backward_hook; default_hooks.py,
// reduce_scatter_hook): the unsharded gradient, at the gathered parameters' precision, cast to
// the reduce dtype where that differs (a read, a write), then divided in place by the pre-divide
// factor, which exceeds 1 on any group of two or more (DefaultState._get_gradient_predivide_factor:
// the largest power of two f with f^2 < world size, at least 2); after the scatter the shard
// divided by the post-divide factor, world / pre-divide, above 1 beyond two ranks, and cast to the
// FP32 flat parameter's dtype where it was reduced in 16 bits (_cast_grad_to_param_dtype). The
// next unit's reduce-scatter waits on the stream for all of them.
double fsdp1_post_backward_bytes(const spec::Strategy& st, double params) {
  const double ranks = gradient_ranks(st), grad = weight_bytes(st), reduced = gradient_bytes(st);
  double bytes = 2 * reduced * params;                      // the pre-divide
  if (reduced != grad) bytes += (grad + reduced) * params;  // the cast before it
  const double shard = params / ranks;
  if (ranks > 2) bytes += 2 * reduced * shard;                 // the post-divide
  if (reduced < kFp32Bytes) bytes += (reduced + kFp32Bytes) * shard;  // the cast back
  return bytes;
}

// A reduction's copies before it, on the reduce-scatter's stream. FSDP2: the gradients, at the
// precision of the layer's activations, go into a flat buffer cast to the reduction's precision;
// a group of one then copies that buffer into the reduced gradient (a read and a write) where a
// group would reduce-scatter it. FSDP1: its post-backward stream's casts and divides.
double fsdp_copy_in_for(const spec::Scenario& s, double params) {
  if (fsdp1_gradients(s)) return cost::memory_time_s(fsdp1_post_backward_bytes(s.strategy, params), s.cluster.gpu);
  if (!fsdp2_copies(s)) return 0;
  double bytes = activation_bytes(s.strategy) + gradient_bytes(s.strategy);
  if (gradient_ranks(s.strategy) == 1) bytes += 2 * gradient_bytes(s.strategy);
  return cost::memory_time_s(bytes * params, s.cluster.gpu);
}

// FSDP1 on the compute stream, per unit and backward: the module's parameters are views of the
// flat parameter, split from it in forward (flat_param.py, FlatParamHandle._get_unflat_views:
// torch.split, then view), so autograd's SplitWithSizesBackward concatenates their gradients into
// the flat parameter's gradient (split_with_sizes_backward: at::cat), a read and a write of each at
// the gathered parameters' precision, before the post-backward hook takes it to its stream.
double fsdp_flatten_for(const spec::Scenario& s, double params) {
  if (!fsdp1_gradients(s)) return 0;
  return cost::memory_time_s(2 * weight_bytes(s.strategy) * params, s.cluster.gpu);
}

// A layer's ZeRO-3 gather and reduce-scatter, of its `params` parameters on this GPU, which
// per-layer sharding moves at once over the gradient group's links `gradient`.
double fsdp_scatter_for(const spec::Scenario& s, bool moe_layer, double params,
                        const cost::GroupLinks& gradient) {
  if (s.strategy.sharded_collectives == spec::ShardedCollectives::kPerTensorBlocking)
    return per_tensor_scatter_s(layer_ops(s, moe_layer), s);
  return gradient.collective_time_s(CollectiveKind::kReduceScatter, gradient_bytes(s.strategy) * params);
}

double fsdp_gather_for(const spec::Scenario& s, bool moe_layer, double params,
                       const cost::GroupLinks& gradient) {
  if (s.strategy.sharded_collectives == spec::ShardedCollectives::kPerTensorBlocking)
    return per_tensor_gathers(s, moe_layer).forward;
  return gradient.collective_time_s(CollectiveKind::kAllGather, weight_bytes(s.strategy) * params);
}

// The gradient group's links, for the functions that price one collective on them.
cost::GroupLinks gradient_links(const spec::Scenario& s) { return links_of(gradient_group(s.strategy), s); }

// SMs each of the column-parallel backward's TP collectives holds (Strategy::tp_backward_sms).
int tp_backward_sms(const spec::Scenario& s) {
  if (s.strategy.tp_backward_sms > 0) return s.strategy.tp_backward_sms;
  const GroupShape tp = group_of(s.strategy, Axis::kTp);
  return cost::collective_sms({tp.size, tp.stride}, s.cluster);
}

}  // namespace

std::vector<OddWidthLinear> odd_width_linears(const spec::Scenario& s) {
  std::vector<OddWidthLinear> out;
  const auto collect = [&](const LayerOps& ops) {
    for (const Op& op : ops) {
      if (op.kind != OpKind::kGemm) continue;
      const double width = cost::odd_width({op.m, op.n, op.k, op.instances}, fp8_gemm(op, s), s.cluster.gpu);
      if (width > 0) out.push_back({op.name, width});
    }
  };
  collect(layer_ops(s, false));
  if (s.model.is_moe()) collect(layer_ops(s, true));
  collect(head_ops(s));
  return out;
}

double host_launch_s(const spec::Scenario& s, double kernels) { return kernels * s.strategy.host_dispatch_s; }

Overlap layer_overlap(const spec::Scenario& s, cost::Shares shares) {
  return layer_overlap(s, shares, gradient_links(s));
}

Overlap layer_overlap(const spec::Scenario& s, cost::Shares shares, const cost::GroupLinks& gradient) {
  if (shares == cost::Shares::kWhole) return {};
  const auto beside = [&](const cost::GroupLinks& group) -> Overlap {
    return {{shares, cost::collective_sms(group.layout(), s.cluster)}, cost::collective_hbm_Bps(group)};
  };
  if (gradient.layout().size > 1) return beside(gradient);
  return beside(links_of(group_of(s.strategy, Axis::kCp), s));
}

namespace {

// Host seconds launching one operator's kernels in each pass (OpTime's host fields).
struct HostTimes {
  double fwd = 0, bwd_input = 0, bwd_weight = 0;
};

// The three results, each built once from its scalars: copying one half-written OpTime into
// three stalled the CPU on every copy (store forwarding; perf annotate).
OpTimes priced(const cost::KernelTime& fwd, const cost::KernelTime& bwd_input, const cost::KernelTime& bwd_weight,
               const HostTimes& host, double fwd_extra = 0, double bwd_extra = 0, double weight_extra = 0) {
  return OpTimes{
      OpTime{fwd.whole + fwd_extra, bwd_input.whole + bwd_extra, bwd_weight.whole + weight_extra, host.fwd,
             host.bwd_input, host.bwd_weight},
      OpTime{fwd.beside + fwd_extra, bwd_input.beside + bwd_extra, bwd_weight.beside + weight_extra, host.fwd,
             host.bwd_input, host.bwd_weight},
      OpTime{fwd.beside_two + fwd_extra, bwd_input.beside_two + bwd_extra, bwd_weight.beside_two + weight_extra,
             host.fwd, host.bwd_input, host.bwd_weight}};
}

}  // namespace

OpPricer::OpPricer(const spec::Scenario& s, const Overlap& overlap)
    : s_(s),
      overlap_(overlap),
      copy_rate_(s.cluster.gpu, s.cluster.gpu.memory_efficiency, 0),
      copy_rate_beside_(s.cluster.gpu, s.cluster.gpu.memory_efficiency, overlap.hbm_taken_Bps),
      start_edge_sms_(overlap.beside.collective_sms) {
  const spec::Strategy& st = s.strategy;
  // The column-parallel backward's TP collectives run beside a block's first GEMMs
  // (Strategy::tp_async_backward): one SM count serves every collective beside them, the larger.
  if (overlap.beside.shares != cost::Shares::kWhole && tp_async_backward(st))
    start_edge_sms_ = std::max(start_edge_sms_, tp_backward_sms(s));
  // A strategy not yet completed (dp 0, as tests of single kernels leave it) has no step to
  // count: its ops are priced as in a step of one micro-batch.
  const double micro_batches = st.dp > 0 ? st.micro_batches() : 1;
  trained_share_ = (micro_batches - 1) / micro_batches;
  cached_weight_casts_ = st.fp8_weight_cache ? 1.0 / micro_batches : 1;
  // One micro-batch's separate accumulation of a GEMM's weight gradient
  // (Strategy::GradAccumulation) reads the new gradient, at the activations' precision, and the
  // accumulator, at the gradient-reduction precision, and writes the accumulator. Under ZeRO-3 a
  // rank adds only its shard of the gradient it has reduce-scattered; ZeRO-2 reduces once a step,
  // after the last.
  accumulation_bytes_ = activation_bytes(st) + 2 * gradient_bytes(st);
  gradient_shard_ = st.zero_stage >= 3 ? gradient_ranks(st) : 1;
}

// The share of a step's micro-batches after the first: each adds its gradients into the
// accumulated ones (Strategy::GradAccumulation), a kernel per trained tensor unless the
// weight-gradient GEMM adds them itself. None for an op that trains nothing.
double OpPricer::accumulated_share(const Op& op) const { return op.weights + op.biases > 0 ? trained_share_ : 0; }

// A bandwidth-bound chain of kernels (Op::launches forward, Op::bwd_launches backward). Beside
// collectives it streams at the HBM bandwidth they leave (cost/compute.h).
OpTimes OpPricer::memory(const Op& op) const {
  const cost::Shares shares = overlap_.beside.shares;
  const HostTimes host{host_launch_s(s_, op.launches), op.bwd_bytes <= 0 ? 0 : host_launch_s(s_, op.bwd_launches),
                       host_launch_s(s_, (op.weights + op.biases) * accumulated_share(op))};
  const auto kernel = [&](double bytes) -> cost::KernelTime {
    const double whole = copy_rate_.seconds(bytes);
    if (shares < cost::Shares::kBesideOne) return {whole, whole, whole};
    const double beside = copy_rate_beside_.seconds(bytes);
    return {whole, beside, shares >= cost::Shares::kBesideTwo ? beside : whole};
  };
  return priced(kernel(op.bytes), op.bwd_bytes > 0 ? kernel(op.bytes * op.bwd_bytes) : cost::KernelTime{}, {},
                host);
}

// The fused attention kernel: one launch per pass.
OpTimes OpPricer::attention(const Op& op) const {
  const spec::GpuSpec& gpu = s_.cluster.gpu;
  const HostTimes host{host_launch_s(s_, 1), host_launch_s(s_, 1),
                       host_launch_s(s_, (op.weights + op.biases) * accumulated_share(op))};
  const cost::AttentionCurve curve = cost::attention_curve(gpu, s_.strategy.attention);
  return priced(cost::attention_time(op.flops, op.bytes, op.n, op.relative_rate, curve, gpu, overlap_.beside),
                cost::attention_time(op.flops * op.bwd_flops, op.bytes * op.bwd_bytes, op.n, op.relative_rate,
                                     curve, gpu, overlap_.beside),
                {}, host);
}

// A linear layer's three GEMMs with what runs around them: FP8 and autocast casts, the partial
// sums of a split reduce-scatter, the scaling of baddbmm's input gradients, gradient accumulation
// and the bias gradient's reduction.
OpTimes OpPricer::gemm(const Op& op) const {
  const spec::Strategy& st = s_.strategy;
  const spec::GpuSpec& gpu = s_.cluster.gpu;
  // One kernel per pass and GEMM (dgrad and wgrad in backward); FP8 adds the casts of the
  // forward's two operands (the weight's on every micro-batch, or once per step where it is
  // cached: Strategy::fp8_weight_cache) and of the backward's incoming gradient.
  const bool fp8 = fp8_gemm(op, s_);
  const double weight_casts = fp8 ? cached_weight_casts_ : 1;
  // FP32 weights under autocast (Strategy::autocast_fp32_weights): a linear's forward casts its
  // weight to 16 bits, its backward casts the weight's gradient back to FP32, a kernel each.
  const double autocast_casts = st.autocast_fp32_weights && op.weights > 0 ? 1 : 0;
  const double fwd_kernels = (fp8 ? 1 + (1 + weight_casts) * kFp8CastKernels : 1) + autocast_casts;
  const double bwd_kernels = (fp8 ? 1 + kFp8CastKernels : 1) + autocast_casts;
  // Trained tensors: every micro-batch after the first adds its gradient (accumulated_share),
  // unless the weight-gradient GEMM adds it itself; a linear bias's gradient is a reduction over
  // the tokens, one more kernel unless the GEMM's epilogue sums it (Strategy::bias_grad_in_gemm).
  const bool fused_weights = st.grad_accumulation == spec::GradAccumulation::kFusedIntoGemm;
  const double share = accumulated_share(op);
  const double accumulations = (fused_weights ? op.biases : op.weights + op.biases) * share;
  const double bias_reductions = !st.bias_grad_in_gemm ? op.biases : 0;
  HostTimes host{host_launch_s(s_, fwd_kernels), host_launch_s(s_, bwd_kernels),
                 host_launch_s(s_, 1 + accumulations + bias_reductions)};
  if (op.grad_scale_bytes > 0) host.bwd_input += host_launch_s(s_, 2);
  cost::Beside beside = overlap_.beside;
  if (op.tp_edge == BlockEdge::kStart) beside.collective_sms = start_edge_sms_;
  const double pieces = tp_overlap_pieces(op, st);
  // The column-parallel backward's collectives run beside its whole GEMMs
  // (Strategy::tp_async_backward: Transformer Engine's bulk overlaps under async TP), so only
  // the forward's is split.
  const bool bulk_backward = pieces > 1 && !tp_overlap_splits_backward(op, st);
  const cost::LinearGemmTimes g = cost::linear_gemm_times({op.m, op.n, op.k, op.instances}, op.bytes, fp8,
                                                          gpu, beside, pieces, !bulk_backward);
  double fwd_extra = 0, bwd_extra = 0;
  if (autocast_casts > 0) {
    // Each cast reads one precision and writes the other.
    const double cast = copy_rate_.seconds((kFp32Bytes + activation_bytes(st)) * op.k * op.n * op.weights);
    fwd_extra += cast;
    bwd_extra += cast;
  }
  if (fp8) {
    fwd_extra += fp8_cast_s(op.m * op.k, gpu) + weight_casts * fp8_cast_s(op.k * op.n, gpu);
    bwd_extra += fp8_cast_s(op.m * op.n, gpu);
  }
  if (pieces > 1) {
    // The split reduce-scatter delivers each rank's rows as `pieces` partial sums, which one
    // kernel reads and adds, in the pass whose edge collective is the reduce-scatter: the
    // forward's output (n wide) or the backward's input gradient (k wide).
    const bool forward = tp_edge_collective(op.tp_edge, false, true) == CollectiveKind::kReduceScatter;
    const double rows = op.m / pieces * op.instances;
    const double sum = copy_rate_.seconds((pieces + 1) * rows * (forward ? op.n : op.k) * kPartialSumBytes);
    if (forward || !bulk_backward) (forward ? fwd_extra : bwd_extra) += sum;
  }
  if (op.grad_scale_bytes > 0) bwd_extra += 2 * copy_rate_.seconds(op.grad_scale_bytes / 2);
  if (st.bias_add_kernel && op.linear_adds_bias) {
    // The bias added after the GEMM (Strategy::bias_add_kernel) reads the output and writes it back.
    fwd_extra += copy_rate_.seconds(2 * activation_bytes(st) * op.m * op.n * op.instances);
    host.fwd += host_launch_s(s_, 1);
  }
  const double accumulation =
      fused_weights || share <= 0
          ? 0
          : share * copy_rate_.seconds(accumulation_bytes_ * op.k * op.n * op.instances / gradient_shard_);
  // The bias gradient's own kernel reads the output gradient once.
  const double bias_grad =
      bias_reductions > 0 ? copy_rate_.seconds(activation_bytes(st) * op.m * op.n * op.instances) : 0;
  return priced(g.fwd, g.input_grad, g.weight_grad, host, fwd_extra, bwd_extra, accumulation + bias_grad);
}

OpTimes op_times(const Op& op, const spec::Scenario& s, const Overlap& overlap) { return OpPricer(s, overlap)(op); }

bool layer_recomputed(const spec::Strategy& st, int layer) {
  if (st.recompute == spec::Recompute::kNone) return false;
  return st.recompute != spec::Recompute::kFull || (layer + 1) % st.recompute_interval == 0;
}

double recomputed_layer_fraction(const spec::Strategy& st) {
  if (st.recompute == spec::Recompute::kNone) return 0;
  return st.recompute == spec::Recompute::kFull ? 1.0 / st.recompute_interval : 1.0;
}

double attention_recomputed_fraction(const spec::Strategy& st) {
  return st.recompute == spec::Recompute::kOp ? 0 : recomputed_layer_fraction(st);
}

double collective_s(CollectiveKind kind, double bytes, GroupShape group, const spec::Scenario& s) {
  if (group.size <= 1 || bytes <= 0) return 0;
  return cost::collective_time_s(kind, bytes, cost::GroupLayout{group.size, group.stride}, s.cluster);
}

cost::GroupLinks links_of(GroupShape group, const spec::Scenario& s) {
  return {cost::GroupLayout{group.size, group.stride}, s.cluster};
}

double tp_collective_s(const spec::Scenario& s, CollectiveKind kind, bool fp8_edge) {
  return tp_collective_s(s, links_of(group_of(s.strategy, Axis::kTp), s), kind, fp8_edge);
}

double tp_collective_s(const spec::Scenario& s, const cost::GroupLinks& tp, CollectiveKind kind, bool fp8_edge) {
  // FP8 linears cast their operand before the sequence-parallel gather, so the gather moves one
  // byte per element: the input of a column-parallel GEMM in forward, the output gradient of a
  // row-parallel one in backward (torchao's Float8ColwiseParallel, Float8RowwiseParallel and
  // PrepareFloat8ModuleInput, "all-gather in float8"; Transformer Engine's Linear, cast_to_fp8
  // before gather_along_first_dim, and grad_output_preprocess). Reduce-scatters and all-reduces
  // carry the GEMMs' outputs, which are not FP8.
  const double element = kind == CollectiveKind::kAllGather && fp8_edge ? kFp8Bytes : activation_bytes(s.strategy);
  const double bytes = local_tokens(s) * s.model.hidden * element;
  return tp.collective_time_s(kind, bytes);
}

bool tp_async_backward(const spec::Strategy& st) {
  return st.tp_async_backward && st.tp > 1 && st.schedule != spec::Schedule::kZeroBubbleH1;
}

bool tp_backward_overlapped(const Op& op, const spec::Strategy& st) {
  if (!st.overlap_tp_comm) return false;
  // PyTorch's async TP (without tp_async_backward) is Inductor's micro-pipeline TP pass
  // (torch/_inductor/fx_passes/micro_pipeline_tp.py, late 2024): it fuses a reduce-scatter only
  // when a matmul, alone or between reshapes, produces its input (fuse_matmul_reduce_scatter,
  // _find_producer_matmul); it runs on the backward graph too. The backward's reduce-scatter at
  // a block's start takes the sum of the input gradients of the GEMMs that read the gathered
  // input, an add, so where there are several it stays an NCCL reduce-scatter after them.
  const bool summed = op.tp_edge == BlockEdge::kStart && op.tp_input_gemms > 1;
  return tp_async_backward(st) || !summed;
}

bool tp_overlap_splits_backward(const Op& op, const spec::Strategy& st) {
  return tp_overlap_pieces(op, st) > 1 && tp_backward_overlapped(op, st) &&
         !(op.tp_edge == BlockEdge::kStart && tp_async_backward(st));
}

double ep_all_to_all_s(const spec::Scenario& s) {
  if (!s.model.is_moe()) return 0;
  const double bytes = local_tokens(s) * s.model.moe.top_k * s.model.hidden * activation_bytes(s.strategy);
  return collective_s(CollectiveKind::kAllToAll, bytes, group_of(s.strategy, Axis::kEp), s);
}

namespace {

// One micro-batch's boundary activations between two pipeline stages, whole.
double boundary_bytes(const spec::Scenario& s) {
  return local_tokens(s) * s.model.hidden * activation_bytes(s.strategy);
}

}  // namespace

double pp_transfer_s(const spec::Scenario& s) { return pp_transfer_s(s, group_of(s.strategy, Axis::kPp)); }

double pp_transfer_s(const spec::Scenario& s, GroupShape pipeline) {
  const spec::Strategy& st = s.strategy;
  // With sequence parallelism, or Megatron's scatter/gather, each TP rank sends its 1/tp slice.
  double bytes = boundary_bytes(s);
  if (st.sequence_parallel || st.pp_scatter_gather) bytes /= st.tp;
  return collective_s(CollectiveKind::kSendRecv, bytes, pipeline, s);
}

double pp_gather_s(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (!st.pp_scatter_gather || st.sequence_parallel || st.pp <= 1) return 0;
  return collective_s(CollectiveKind::kAllGather, boundary_bytes(s), group_of(st, Axis::kTp), s);
}

double fsdp_gather_s(const spec::Scenario& s, bool moe_layer) {
  return fsdp_gather_for(s, moe_layer, fsdp_layer_params(s, moe_layer), gradient_links(s));
}

double fsdp_regather_s(const spec::Scenario& s, bool moe_layer) {
  if (s.strategy.sharded_collectives != spec::ShardedCollectives::kPerTensorBlocking) return 0;
  const LayerGathers gathers = per_tensor_gathers(s, moe_layer);
  return gathers.recomputed_backward - gathers.forward;
}

double fsdp_scatter_s(const spec::Scenario& s, bool moe_layer) {
  return fsdp_scatter_for(s, moe_layer, fsdp_layer_params(s, moe_layer), gradient_links(s));
}

double fsdp_copy_out_s(const spec::Scenario& s, bool moe_layer) {
  return fsdp_copy_out_for(s, fsdp_layer_params(s, moe_layer));
}

double fsdp_copy_in_s(const spec::Scenario& s, bool moe_layer) {
  return fsdp_copy_in_for(s, fsdp_layer_params(s, moe_layer));
}

double fsdp_flatten_s(const spec::Scenario& s, bool moe_layer) {
  return fsdp_flatten_for(s, fsdp_layer_params(s, moe_layer));
}

bool fsdp_copies_in_turn(const spec::Scenario& s) {
  return fsdp2_copies(s) && gradient_ranks(s.strategy) == 1;
}

RootUnit fsdp_root_unit(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (!has_fsdp_root_unit(st)) return {};
  const double params = fsdp_root_params_per_gpu(param_counts(s.model), s.model, st);
  const GroupShape group = gradient_group(st);
  return {collective_s(CollectiveKind::kAllGather, weight_bytes(st) * params, group, s),
          fsdp_copy_out_for(s, params), fsdp_copy_in_for(s, params), fsdp_flatten_for(s, params),
          collective_s(CollectiveKind::kReduceScatter, gradient_bytes(st) * params, group, s),
          st.fsdp_root_reshards};
}

ShardedLayer sharded_layer(const spec::Scenario& s, bool moe_layer) {
  return sharded_layer(s, moe_layer, gradient_links(s));
}

ShardedLayer sharded_layer(const spec::Scenario& s, bool moe_layer, const cost::GroupLinks& gradient) {
  const spec::Strategy& st = s.strategy;
  if (st.zero_stage < 3) return {};
  const double params = fsdp_layer_params(s, moe_layer);  // counted once for the four below
  return {fsdp_gather_for(s, moe_layer, params, gradient), fsdp_scatter_for(s, moe_layer, params, gradient),
          fsdp_copy_out_for(s, params), fsdp_copy_in_for(s, params), fsdp_flatten_for(s, params),
          st.recompute == spec::Recompute::kFull ? fsdp_regather_s(s, moe_layer) : 0};
}

double dp_reduce_s(const spec::Scenario& s, double params) {
  return dp_reduce_s(s, gradient_links(s), params);
}

double dp_gather_s(const spec::Scenario& s, double params) {
  return dp_gather_s(s, gradient_links(s), params);
}

double dp_reduce_s(const spec::Scenario& s, const cost::GroupLinks& gradient, double params) {
  const spec::Strategy& st = s.strategy;
  if (st.zero_stage >= 3) return 0;  // scattered layer by layer (fsdp_scatter_s)
  const CollectiveKind kind = st.zero_stage == 2 ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  return gradient.collective_time_s(kind, gradient_bytes(st) * params);
}

double dp_gather_s(const spec::Scenario& s, const cost::GroupLinks& gradient, double params) {
  const spec::Strategy& st = s.strategy;
  if (st.zero_stage < 1 || st.zero_stage >= 3) return 0;
  return gradient.collective_time_s(CollectiveKind::kAllGather, weight_bytes(st) * params);
}

double tied_embedding_sync_s(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  const double copy = tied_embedding_copy_params(s.model, st);
  if (copy <= 0) return 0;  // no copy to sync: no group to place
  const GroupShape pipeline = group_of(st, Axis::kPp);
  const GroupShape ends{2, pipeline.stride * (st.pp - 1)};
  return collective_s(CollectiveKind::kAllReduce, gradient_bytes(st) * copy, ends, s);
}

double optimizer_s(const spec::Scenario& s, double params) {
  const spec::Strategy& st = s.strategy;
  const int shards = gradient_ranks(st);
  const double updated = params / (st.zero_stage >= 1 ? shards : 1);  // the optimizer's shard
  const double held = params / (st.zero_stage >= 2 ? shards : 1);     // the gradients a rank holds
  const bool master_weights = st.optimizer_step == spec::OptimizerStep::kMasterWeights;
  const bool loop = st.optimizer_step == spec::OptimizerStep::kInPlaceLoop;
  // Master weights clip and unscale their main gradients, the optimizer's shard; in place, the
  // parameters' own gradients.
  const double clipped = master_weights ? updated : held;
  const double adam = loop ? kAdamLoopBytesPerParam : kAdamBytesPerParam;
  double bytes = adam * updated + kFp32Bytes * clipped;  // Adam and the norm's read
  if (st.dtype == spec::Dtype::kFp16) bytes += 2 * kFp32Bytes * clipped;  // unscale: read, write
  if (master_weights) {
    const double grad = gradient_bytes(st);
    if (grad < kFp32Bytes) bytes += (grad + kFp32Bytes) * updated;  // cast to the main gradients
    bytes += (kFp32Bytes + k16BitBytes) * updated;  // masters copied into the 16-bit weights
    bytes += grad * held;                           // the gradient buffer zeroed
  } else {
    bytes += 2 * kFp32Bytes * held;  // clip_grad_norm_'s multiply: read, write
  }
  // Multi-tensor kernels, which stream slower than a copy where the GPU file says so; the loop's
  // kernels are PyTorch's plain elementwise ones, which stream as a copy does.
  const spec::GpuSpec& gpu = s.cluster.gpu;
  const double efficiency = gpu.optimizer_memory_efficiency > 0 && !loop
                                ? gpu.optimizer_memory_efficiency
                                : gpu.memory_efficiency;
  return cost::streaming_time_s(bytes, gpu, efficiency, 0) + persistent_regather_s(s);
}

}  // namespace stepcast::workload
