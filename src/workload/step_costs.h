// Seconds for the pieces of one training step on one GPU, priced with the cost/ models. The
// closed-form estimate (analytic/) and the ExecGraph builder (workload/build.h) both take their
// times from here, so the two engines price every operator and transfer the same way.
//
//   const workload::OpTime t = workload::op_times(op, scenario, {}).whole;
//   const double ar = workload::tp_collective_s(scenario, cost::CollectiveKind::kAllReduce, false);
//
// Units: seconds per micro-batch on one GPU unless a function says otherwise.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "cost/collective.h"
#include "cost/compute.h"
#include "spec/scenario.h"
#include "workload/operators.h"
#include "workload/placement.h"

namespace stepcast::workload {

struct OpTime {
  double fwd = 0;
  double bwd_input = 0;   // input gradient (GEMM dgrad) and every non-GEMM backward kernel
  double bwd_weight = 0;  // weight gradient (GEMM wgrad): what zero-bubble schedules defer
  double bwd() const { return bwd_input + bwd_weight; }
  // Host seconds spent launching the kernels of each pass (Strategy::host_dispatch_s apiece).
  double host_fwd = 0, host_bwd_input = 0, host_bwd_weight = 0;
  double host_bwd() const { return host_bwd_input + host_bwd_weight; }
};

/// One operator's times for one micro-batch with every SM, beside one collective's kernel on the
/// SMs it leaves, and beside two (cost::KernelTime); the host times are the same in all three.
struct OpTimes {
  OpTime whole, beside, beside_two;
};

/// What a layer's kernels may run beside: the shares of cost::KernelTime to price with the SMs
/// each collective beside them holds (cost::collective_sms), and the HBM bandwidth the
/// collectives take (cost::collective_hbm_Bps). Two collectives at once share their link, so
/// together they take what one takes alone.
struct Overlap {
  cost::Beside beside;
  double hbm_taken_Bps = 0;
};

/// The overlap of `shares` for `s`'s layers. The collectives that overlap kernels and hold SMs
/// run on the data-parallel (gradient) group, or with a data-parallel degree of 1 on the
/// context-parallel ring; their HBM use is that group's, and so are the SMs they hold.
Overlap layer_overlap(const spec::Scenario& s, cost::Shares shares);
/// The same where the gradient group's links `gradient` (links_of(gradient_group(st), s)) are
/// found already: the closed form prices its buckets on them too.
Overlap layer_overlap(const spec::Scenario& s, cost::Shares shares, const cost::GroupLinks& gradient);

/// Forward and backward time of one operator for one micro-batch, on the GPU and on the host;
/// the shares not asked for are left at `whole` (cost::Shares). A column-parallel op whose
/// backward runs TP collectives beside its GEMMs (tp_async_backward) prices its shares with the
/// SMs those hold where they hold more (Strategy::tp_backward_sms).
OpTimes op_times(const Op& op, const spec::Scenario& s, const Overlap& overlap);

/// op_times for the ops of one layer, with what they share computed once: the closed form prices
/// some 15 ops per estimate, and the micro-batch count alone cost each an integer and a
/// floating-point division.
class OpPricer {
 public:
  OpPricer(const spec::Scenario& s, const Overlap& overlap);
  // Inline, so that each kind's pricing is called from the caller's loop and builds its result
  // there: as a call of its own, about 20 instructions per op (callgrind, 405B).
  OpTimes operator()(const Op& op) const {
    switch (op.kind) {
      case OpKind::kMemory: return memory(op);
      case OpKind::kAttention: return attention(op);
      case OpKind::kGemm: break;
    }
    return gemm(op);
  }
  cost::Shares shares() const { return overlap_.beside.shares; }

 private:
  OpTimes memory(const Op& op) const;
  OpTimes attention(const Op& op) const;
  OpTimes gemm(const Op& op) const;
  double accumulated_share(const Op& op) const;

  const spec::Scenario& s_;
  Overlap overlap_;
  cost::StreamingRate copy_rate_, copy_rate_beside_;  // memory-bound kernels alone, beside the collectives
  int start_edge_sms_;           // the SMs beside a block's first op (tp_backward_sms)
  double trained_share_;         // the step's micro-batches after the first, as a share
  double cached_weight_casts_;   // an FP8 weight's casts per micro-batch under fp8_weight_cache
  double accumulation_bytes_;    // per gradient element of a separate accumulation
  double gradient_shard_;        // the share of a gradient a rank accumulates
};

/// A linear layer whose 16-bit GEMMs run at a third of their rate (cost::odd_width).
struct OddWidthLinear {
  const char* name = "";
  double width = 0;  // elements per GPU
};

/// The odd-width linear layers of `s`, one layer of each kind and the head: most often an
/// unpadded vocabulary.
std::vector<OddWidthLinear> odd_width_linears(const spec::Scenario& s);

/// Host seconds to launch `kernels` kernels (a collective is one).
double host_launch_s(const spec::Scenario& s, double kernels);

/// Share of `op`'s forward that backward re-runs in a recomputed layer: full 1; selective the
/// core attention (Korthikanti et al. 2022 §5); op every memory-bound op and the GEMM shares of
/// Op::op_checkpoint_recompute; none 0. (Inline, as the closed form asks for each op's.)
inline double recompute_share(const Op& op, spec::Recompute mode) {
  switch (mode) {
    case spec::Recompute::kNone: return 0;
    case spec::Recompute::kSelective: return op.core_attention ? 1 : 0;
    case spec::Recompute::kFull: return 1;
    case spec::Recompute::kOp:
      if (op.kind == OpKind::kMemory) return 1;
      return op.kind == OpKind::kGemm ? op.op_checkpoint_recompute : 0;
  }
  return 0;
}

/// Whether layer `layer` (0-based) is recomputed at all: every layer, or with full recomputation
/// every recompute_interval-th (torchtitan counts layers from 1: layers 2, 4, ... for k = 2).
bool layer_recomputed(const spec::Strategy& st, int layer);

/// The fraction of layers recomputed: 1 / recompute_interval for full, 1 otherwise (0 for none).
double recomputed_layer_fraction(const spec::Strategy& st);

/// The fraction of layers whose recomputation re-runs the core attention whole, and with it the
/// attention's CP exchange: full and selective recomputation (Megatron-Core checkpoints the core
/// attention module with its CP communication inside); op-level checkpointing saves the attention's
/// output.
double attention_recomputed_fraction(const spec::Strategy& st);

/// One collective over `group`, 0 for a group of one or no bytes.
double collective_s(cost::CollectiveKind kind, double bytes, GroupShape group, const spec::Scenario& s);
/// The links `group`'s collectives cross, found once for several collectives on it
/// (cost::GroupLinks::collective_time_s: collective_s on the group).
cost::GroupLinks links_of(GroupShape group, const spec::Scenario& s);

/// Whether the strategy runs this op as an FP8 GEMM (its casts priced with it).
inline bool fp8_gemm(const Op& op, const spec::Scenario& s) {
  return op.kind == OpKind::kGemm && s.strategy.dtype == spec::Dtype::kFp8 && op.fp8_capable;
}
/// One TP collective on a block's boundary activations (all-reduce, or with sequence parallelism
/// all-gather / reduce-scatter). A layer pass has two blocks, attention and MLP. `fp8_edge`: the
/// GEMM at the block edge runs in FP8, so an all-gather there moves its FP8 operand.
double tp_collective_s(const spec::Scenario& s, cost::CollectiveKind kind, bool fp8_edge);
/// The same over the TP group's links `tp` (links_of(group_of(st, Axis::kTp), s)), found once for
/// a layer's several.
double tp_collective_s(const spec::Scenario& s, const cost::GroupLinks& tp, cost::CollectiveKind kind, bool fp8_edge);
/// The TP collective at an op's block edge in one pass, if any. Forward: with sequence
/// parallelism an all-gather before a block's start and a reduce-scatter after its end, else an
/// all-reduce after its end; backward mirrors it (without SP, the all-reduce of the start's input
/// gradient, Megatron's f operator). An all-gather runs before its op, the others after.
/// (Defined here so that callers inline it: returned through memory, the optional cost a
/// store-forwarding stall per call.)
constexpr std::optional<cost::CollectiveKind> tp_edge_collective(BlockEdge edge, bool backward, bool sequence_parallel) {
  if (edge == BlockEdge::kNone) return std::nullopt;
  const bool start = edge == BlockEdge::kStart;
  if (sequence_parallel) return start != backward ? cost::CollectiveKind::kAllGather : cost::CollectiveKind::kReduceScatter;
  if (start != backward) return std::nullopt;
  return cost::CollectiveKind::kAllReduce;
}

/// The name of a TP collective's task in the step's graph and its trace.
constexpr std::string_view tp_task_name(cost::CollectiveKind kind) {
  switch (kind) {
    case cost::CollectiveKind::kAllGather: return "tp.all_gather";
    case cost::CollectiveKind::kReduceScatter: return "tp.reduce_scatter";
    default: return "tp.all_reduce";
  }
}
/// Whether the column-parallel layers' backward collectives run beside their GEMMs
/// (Strategy::tp_async_backward, where it takes effect).
bool tp_async_backward(const spec::Strategy& st);
/// Whether overlapped TP (Strategy::overlap_tp_comm) hides the backward collective at `op`'s
/// block edge beside that op's GEMMs; false where it runs exposed: PyTorch's async TP leaves a
/// block start's reduce-scatter unfused when several GEMMs' input gradients are summed into it
/// (Op::tp_input_gemms).
bool tp_backward_overlapped(const Op& op, const spec::Strategy& st);
/// Whether async TP splits `op`'s backward input-gradient GEMM per rank around its collective
/// (Strategy::overlap_tp_comm at a block edge, except where the column-parallel backward runs
/// bulk collectives beside whole GEMMs: tp_async_backward). The collective then runs beside that
/// GEMM only: the weight gradient needs the whole gathered output gradient.
bool tp_overlap_splits_backward(const Op& op, const spec::Strategy& st);
/// One expert-parallel all-to-all (token dispatch or combine).
double ep_all_to_all_s(const spec::Scenario& s);
/// One pipeline send/recv of a micro-batch's boundary activations (or their gradient).
double pp_transfer_s(const spec::Scenario& s);
/// The same over the pipeline group `pipeline` (group_of(st, Axis::kPp)), placed already.
double pp_transfer_s(const spec::Scenario& s, GroupShape pipeline);
/// With Strategy::pp_scatter_gather (and no SP): the receiving stage's TP all-gather of one
/// received boundary tensor, on its compute stream; 0 otherwise.
double pp_gather_s(const spec::Scenario& s);
/// ZeRO-3/FSDP, for one layer of the kind given (a MoE layer's experts make it the larger):
/// gather its parameters; reduce-scatter its gradients.
double fsdp_gather_s(const spec::Scenario& s, bool moe_layer);
double fsdp_scatter_s(const spec::Scenario& s, bool moe_layer);
/// Under DeepSpeed 0.3.x (ShardedCollectives::kPerTensorBlocking) fsdp_gather_s is the forward's
/// gathers, each prefetched beside the compute since the fetch before. fsdp_regather_s: what a
/// recomputed layer's backward adds to that: its recomputation's gathers and those of the part
/// of the layer it gathers again for the backward, having released it after the recomputation,
/// prefetched as in the forward, less the forward's. 0 under per-layer sharding, which keeps the
/// layer gathered through both.
double fsdp_regather_s(const spec::Scenario& s, bool moe_layer);
/// FSDP2 (ShardedCollectives::kPerParameter), per layer and gather: the compute stream's copy of
/// the gathered parameters out of the all-gather's buffer; per layer and reduce-scatter: the
/// copy of the gradients into its buffer, cast to the reduce dtype, on the reduce-scatter's
/// stream. 0 under the other kinds, which gather into the parameters' own storage. FSDP1
/// (kFlatParameter) copies nothing out; its copy in is the work its post-backward stream does
/// around the reduce-scatter (the gradient's cast to the reduce dtype and the divides), and
/// autograd's concatenation of the layer's gradients into the flat one runs on the compute
/// stream after the layer's backward (fsdp_flatten_s). 0 on a group of one.
double fsdp_copy_out_s(const spec::Scenario& s, bool moe_layer);
double fsdp_copy_in_s(const spec::Scenario& s, bool moe_layer);
double fsdp_flatten_s(const spec::Scenario& s, bool moe_layer);
/// Whether FSDP2 runs its gradients' copy in on the compute stream, in turn with the kernels,
/// rather than on the reduce-scatter's stream beside them: on a group of one, which has no
/// reduce-scatter (the Kineto traces of data/measurements/h100-steps: every FSDP kernel on the
/// kernels' stream).
bool fsdp_copies_in_turn(const spec::Scenario& s);

/// All of the above for one layer of the kind given; zeros without ZeRO-3 (the regather also
/// without full recomputation).
struct ShardedLayer {
  double gather = 0, scatter = 0;
  double copy_out = 0, copy_in = 0, flatten = 0;
  double regather = 0;
};
ShardedLayer sharded_layer(const spec::Scenario& s, bool moe_layer);
/// The same over the gradient group's links `gradient` (links_of(gradient_group(st), s)), found
/// once for the several kinds of layer the closed form prices.
ShardedLayer sharded_layer(const spec::Scenario& s, bool moe_layer, const cost::GroupLinks& gradient);

/// ZeRO-3's root unit: the parameters outside the blocks (the embedding, the final norm and the
/// output head), which FSDP wraps with the model itself. Each micro-batch gathers it before the
/// forward, and where the root reshards after it (Strategy::fsdp_root_reshards) again before the
/// backward, with the copies of the layers' kind (FSDP2), and reduce-scatters its gradients after
/// the backward, each in turn with nothing beside it: it is the first and the last work of the
/// passes (the traces of data/measurements/h100-steps, whose root reshards). Zeros
/// without ZeRO-3, for DeepSpeed's per-tensor ZeRO-3, whose parameters outside the blocks are not
/// partitioned this way, and under pipeline parallelism, where how the edge stages' units would
/// overlap the pipeline's waits is not modelled yet (the engines would part on it).
struct RootUnit {
  double gather = 0, copy_out = 0, copy_in = 0, flatten = 0, scatter = 0;
  bool regathered = false;  // gathered again before the backward
  double per_micro_batch() const { return (regathered ? 2 : 1) * (gather + copy_out) + flatten + copy_in + scatter; }
};
RootUnit fsdp_root_unit(const spec::Scenario& s);

/// Data-parallel gradient reduction of `params` parameters (all-reduce, or reduce-scatter under
/// ZeRO-2) and the ZeRO-1/2 gather of the updated parameters; 0 where the strategy has none.
double dp_reduce_s(const spec::Scenario& s, double params);
double dp_gather_s(const spec::Scenario& s, double params);
/// The same over the gradient group's links `gradient` (links_of(gradient_group(st), s)), found
/// once for the several the closed form prices.
double dp_reduce_s(const spec::Scenario& s, const cost::GroupLinks& gradient, double params);
double dp_gather_s(const spec::Scenario& s, const cost::GroupLinks& gradient, double params);
/// The all-reduce of the last stage's tied embedding copy's gradient with the first stage's, over
/// the two stages' ranks, after the data-parallel reduction and before the optimizer, so exposed
/// on both (Megatron-LM's embedding group, `finalize_model_grads` in Megatron-Core; DeepSpeed's
/// ReduceTiedGrads); 0 without a copy (tied_embedding_copy_params).
double tied_embedding_sync_s(const spec::Scenario& s);
/// The optimizer step over a stage of `params` parameters: Adam over the ZeRO shard this GPU
/// updates and the memory passes around it that Strategy::optimizer_step names; under DeepSpeed
/// 0.3.x's ZeRO-3 (ShardedCollectives::kPerTensorBlocking) also the gather of the persistent
/// parameters that ends its step.
double optimizer_s(const spec::Scenario& s, double params);

}  // namespace stepcast::workload
