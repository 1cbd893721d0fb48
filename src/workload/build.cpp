#include "workload/build.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "workload/cp_exchange.h"
#include "workload/memory.h"
#include "workload/model_size.h"
#include "workload/operators.h"
#include "workload/pipeline_schedule.h"
#include "workload/priced_layer.h"
#include "workload/step_budget.h"
#include "workload/step_costs.h"
#include "workload/task_lanes.h"

namespace stepcast::workload {
namespace {

using cost::CollectiveKind;
using graph::Category;
using graph::TaskId;
using graph::TaskKind;

constexpr TaskId kNone = 0xffffffffu;

class StepBuilder {
 public:
  StepBuilder(const spec::Scenario& s, std::size_t max_tasks)
      : s_(s),
        budget_(s, max_tasks),
        st_(s.strategy),
        chunks_(st_.pp * st_.vp),
        micro_batches_(st_.micro_batches()),
        dense_(price_layer(layer_ops(s, false), s, sharded_layer(s, false))),
        moe_(s.model.is_moe() ? price_layer(layer_ops(s, true), s, sharded_layer(s, true))
                              : PricedLayer{}),
        embedding_(price_layer(embedding_ops(s), s)),
        head_(price_layer(head_ops(s), s)),
        params_(param_counts(s.model)),
        layer_params_(layer_params_per_gpu(params_, s.model, st_)),
        activation_bytes_(stored_layer_activation_bytes(s)),
        p2p_s_(pp_transfer_s(s)),
        tied_sync_s_(tied_embedding_sync_s(s)),
        gather_s_(pp_gather_s(s)),
        async_backward_(tp_async_backward(st_)),
        copies_in_turn_(fsdp_copies_in_turn(s)),
        root_(fsdp_root_unit(s)),
        sharded_passes_(st_.zero_stage >= 3 &&
                        (st_.dp * st_.cp > 1 ||
                         st_.sharded_collectives == spec::ShardedCollectives::kPerParameter)),
        rendezvous_(st_.schedule == spec::Schedule::kGpipe ||
                    st_.schedule == spec::Schedule::k1F1B),
        sends_(2 * static_cast<std::size_t>(chunks_) * static_cast<std::size_t>(micro_batches_),
               kNone),
        recvs_(sends_.size(), kNone) {
    first_layer_.resize(static_cast<std::size_t>(chunks_) + 1, 0);
    const ChunkLayout layout(s.model.layers, chunks_);
    for (int j = 0; j < chunks_; ++j) first_layer_[j + 1] = first_layer_[j] + layout.chunk(j);
  }

  graph::ExecGraph build() {
    name_lanes(g_, st_);
    GraphSize first;
    for (int stage = 0; stage < st_.pp; ++stage) {
      build_stage(stage);
      if (stage == 0) first = {g_.size(), g_.edges_added()};
      if (stage == 1) reserve_like_second_stage(first);
    }
    pair_transfers();
    if (tied_syncs_.size() == 2) g_.add_collective(tied_syncs_, budget_.to_ns(tied_sync_s_));
    g_.finalize();
    return std::move(g_);
  }

 private:
  // ---- tasks ---------------------------------------------------------------------------------

  // A collective's members: this rank's task alone (the symmetric peers it stands for), or tasks
  // on several stages, tied together once every stage is built.
  enum class Members { kThisRank, kStages };

  TaskId add(TaskKind kind, std::uint16_t stream, Category category, double seconds,
             std::string_view name, int layer, int mb, Members members = Members::kThisRank) {
    budget_.check_room(g_.size());
    graph::Task t;
    t.kind = kind;
    t.rank = static_cast<std::uint32_t>(stage_);
    t.stream = stream;
    t.category = category;
    t.duration_ns = budget_.to_ns(seconds);
    t.layer = layer;
    t.micro_batch = mb;
    t.link = kind == TaskKind::kCompute ? graph::kNoLink  // kernels cross no link
                                        : task_link(s_, stage_, category, kind);
    // NCCL's kernels hold SMs while they run; async TP's copy engines do not (tp_beside_next).
    t.holds_sms = kind == TaskKind::kCollective;
    const TaskId id = g_.add_task(t, name);
    if (kind == TaskKind::kCollective && members == Members::kThisRank)
      g_.add_collective({id}, t.duration_ns);
    return id;
  }

  // A task on the compute stream: it waits for everything pending, and for the host to launch it
  // (`host_seconds` on the host stream, which runs ahead of the GPU in launch order unless each
  // launch blocks until the task before it has finished).
  TaskId compute(TaskKind kind, Category category, double seconds, std::string_view name, int layer,
                 int mb, double host_seconds, Members members = Members::kThisRank) {
    const TaskId id = add(kind, kComputeStream, category, seconds, name, layer, mb, members);
    returned_when_done(last_);
    if (host_seconds > 0) {
      const TaskId launch = add(TaskKind::kHost, kHostStream, Category::kHost, host_seconds,
                                "host.launch", layer, mb);
      for (TaskId wait : host_waits_) g_.add_edge(wait, launch);
      host_waits_.clear();
      g_.add_edge(launch, id);
    }
    for (TaskId dep : pending_) g_.add_edge(dep, id);
    pending_ = std::move(after_next_);
    after_next_.clear();
    last_ = id;
    return id;
  }

  // A task beside the compute stream, starting once the last compute task has ended.
  TaskId side(std::uint16_t stream, Category category, double seconds, std::string_view name,
              int layer, int mb, TaskKind kind = TaskKind::kCollective) {
    const TaskId id = add(kind, stream, category, seconds, name, layer, mb);
    if (last_ != kNone) g_.add_edge(last_, id);
    returned_when_done(id);
    return id;
  }

  // A collective on the compute stream; `launches`: the NCCL calls it stands for (all-gather CP's
  // K and V, one task).
  void collective(Category category, double seconds, std::string_view name, int layer, int mb,
                  int launches = 1) {
    if (seconds > 0)
      compute(TaskKind::kCollective, category, seconds, name, layer, mb,
              host_launch_s(s_, launches));
  }

  // ---- one layer ------------------------------------------------------------------------------

  const PricedLayer& layer_kind(int layer) const {
    return s_.model.is_moe_layer(layer) ? moe_ : dense_;
  }

  // The TP collective at an op's block edge (workload::tp_edge_collective), in the order it runs.
  // Async TP fuses it with the edge GEMM, which it decomposes: it runs beside that GEMM (in
  // backward where tp_backward_overlapped says so).
  void tp_edge(const Op& op, OpPass mode, bool before, int layer, int mb) {
    if (st_.tp <= 1) return;
    const auto edge = tp_edge_collective(op.tp_edge, mode == OpPass::kBackward, st_.sequence_parallel);
    if (!edge) return;
    const CollectiveKind kind = *edge;
    const bool fused = mode == OpPass::kBackward ? tp_backward_overlapped(op, st_) : st_.overlap_tp_comm;
    if (before != (fused || kind == CollectiveKind::kAllGather)) return;
    if (!fused) {
      collective(Category::kTensorParallel, tp_collective_s(s_, kind, fp8_gemm(op, s_)),
                 tp_task_name(kind), layer, mb);
    } else {  // async TP: beside the edge GEMM
      tp_beside_next(op, kind, layer, mb, false);
    }
  }

  // A TP collective of `op`'s edge beside the next compute task; the task after that waits for it.
  // Async TP's copy engines hold no SMs; the column-parallel backward's collectives beside the
  // other GEMM (Strategy::tp_async_backward) are kernels that do: NCCL's, or with async TP
  // Transformer Engine's bulk userbuffers kernels.
  void tp_beside_next(const Op& op, CollectiveKind kind, int layer, int mb, bool holds_sms) {
    const double seconds = tp_collective_s(s_, kind, fp8_gemm(op, s_));
    if (seconds <= 0) return;
    const TaskId id = side(kOverlapStream, Category::kTensorParallel, seconds, tp_task_name(kind), layer, mb);
    g_.mutable_task(id).holds_sms = holds_sms;
    after_next_.push_back(id);
  }

  // Megatron's column-parallel backward (Strategy::tp_async_backward): the block's first op runs
  // its input and weight gradients as two tasks, each beside a collective.
  bool async_backward_edge(const Op& op) const {
    return op.tp_edge == BlockEdge::kStart && async_backward_;
  }

  // Under async TP an edge op's backward collective runs beside its input-gradient GEMM, split
  // per rank; the weight gradient, which needs the whole gathered gradient (or runs after the
  // scatter's GEMM), follows as a task of its own (workload::tp_overlap_splits_backward).
  bool split_backward_edge(const Op& op) const {
    return !zero_bubble() && tp_overlap_splits_backward(op, st_);
  }

  void ep_edge(const Op& op, OpPass mode, bool before, int layer, int mb) {
    if (st_.ep <= 1 || op.ep_edge == BlockEdge::kNone) return;
    const bool start = op.ep_edge == BlockEdge::kStart;
    if (before != (start != (mode == OpPass::kBackward))) return;
    collective(Category::kExpertParallel, ep_all_to_all_s(s_), "ep.all_to_all", layer, mb);
  }

  // GPU and host seconds of one op in one pass.
  struct PassCost {
    double gpu = 0, host = 0;
  };

  PassCost pass_cost(const Op& op, const OpTime& t, OpPass mode) const {
    switch (mode) {
      case OpPass::kForward:
        return {t.fwd, t.host_fwd};
      case OpPass::kRecompute: {
        const double share = recompute_share(op, st_.recompute);
        return {t.fwd * share, share > 0 ? t.host_fwd : 0};
      }
      case OpPass::kBackward:
        return zero_bubble() || async_backward_edge(op) || split_backward_edge(op)
                   ? PassCost{t.bwd_input, t.host_bwd_input}
                   : PassCost{t.bwd(), t.host_bwd()};
      case OpPass::kWeightGradient:
        return {t.bwd_weight, t.host_bwd_weight};
    }
    return {};
  }

  void run_ops(const PricedLayer& p, OpPass mode, int layer, int mb) {
    const bool recompute = mode == OpPass::kRecompute;
    const bool forward = mode == OpPass::kForward || recompute;
    const std::size_t n = p.ops.size();
    TaskId cp_ring = kNone;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = forward ? k : n - 1 - k;
      const Op& op = p.ops[i];
      if (recompute && recompute_share(op, st_.recompute) == 0) continue;
      const bool comm = mode != OpPass::kWeightGradient &&
                        (!recompute || st_.recompute == spec::Recompute::kFull);
      const OpPass edge_mode = forward ? OpPass::kForward : OpPass::kBackward;
      const bool async_edge = mode == OpPass::kBackward && async_backward_edge(op);
      if (forward && op.starts_mlp && st_.host_syncs_before_mlp) synchronise_stream();
      if (comm) {
        if (!async_edge) tp_edge(op, edge_mode, true, layer, mb);
        ep_edge(op, edge_mode, true, layer, mb);
      }
      // The CP exchange around the pass's core-attention kernels (a recomputed forward runs it
      // again; CpAroundAttention): what runs before them on the compute stream, what runs beside
      // their first share on a stream of its own (the rest waiting for it) and beside the rest
      // (the op after them waiting for it), and what runs after them (spec::CpExchange).
      const bool exchange = st_.cp > 1 && op.core_attention && mode != OpPass::kWeightGradient &&
                            (!recompute || attention_recomputed_fraction(st_) > 0);
      const bool first_of_attention = exchange && (k == 0 || !p.ops[forward ? i - 1 : i + 1].core_attention);
      const CpAroundAttention cp = exchange ? cp_around_attention(s_, !forward) : CpAroundAttention{};
      if (first_of_attention)
        collective(Category::kContextParallel, cp.before, "cp.all_gather", layer, mb, cp.launches);
      if (first_of_attention && cp.beside > 0)
        cp_ring = side(kOverlapStream, Category::kContextParallel, cp.beside, cp.beside_name, layer, mb);
      if (async_edge && st_.sequence_parallel)
        tp_beside_next(op, CollectiveKind::kAllGather, layer, mb, true);
      const bool split = first_of_attention && cp.share < 1;
      if (split) cp_ring = attention_share(p, i, mode, cp, cp_ring, layer, mb);
      op_task(p, i, mode, layer, mb, split ? 1 - cp.share : 1);
      if (mode == OpPass::kBackward && split_backward_edge(op))
        op_task(p, i, OpPass::kWeightGradient, layer, mb);
      if (async_edge) {
        tp_beside_next(
            op, st_.sequence_parallel ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
            layer, mb, true);
        op_task(p, i, OpPass::kWeightGradient, layer, mb);
      }
      const bool last_of_attention =
          exchange && (k + 1 == n || !p.ops[forward ? i + 1 : i - 1].core_attention);
      if (last_of_attention && cp_ring != kNone) pending_.push_back(std::exchange(cp_ring, kNone));
      if (last_of_attention)
        collective(Category::kContextParallel, cp.after, cp.after_name, layer, mb, cp.launches);
      if (comm) {
        ep_edge(op, edge_mode, false, layer, mb);
        if (!async_edge) tp_edge(op, edge_mode, false, layer, mb);
      }
    }
  }

  // The first share of the attention op i's pass beside the CP transfer `beside`, which the rest
  // then waits for; the transfer beside the rest, if any, to wait for after it.
  TaskId attention_share(const PricedLayer& p, std::size_t i, OpPass mode, const CpAroundAttention& cp,
                         TaskId beside, int layer, int mb) {
    op_task(p, i, mode, layer, mb, cp.share);
    pending_.push_back(beside);
    if (cp.rest <= 0) return kNone;
    const TaskId rest = side(kOverlapStream, Category::kContextParallel, cp.rest, "cp.dkv_ring", layer, mb);
    g_.add_edge(beside, rest);
    return rest;
  }

  // The compute task of op i's pass (its `share` of it), with its slowdowns beside collectives.
  void op_task(const PricedLayer& p, std::size_t i, OpPass mode, int layer, int mb,
               double share = 1) {
    const Op& op = p.ops[i];
    const PassCost cost = pass_cost(op, p.times[i], mode);
    if (cost.gpu <= 0 || share <= 0) return;
    compute(TaskKind::kCompute, Category::kCompute, share * cost.gpu, p.name(i, mode), layer, mb,
            share * cost.host);
    graph::Task& t = g_.mutable_task(last_);
    t.beside_collective_slowdown =
        static_cast<float>(pass_cost(op, p.beside[i], mode).gpu / cost.gpu);
    t.beside_two_collectives_slowdown =
        static_cast<float>(pass_cost(op, p.beside_two[i], mode).gpu / cost.gpu);
  }

  void layer_pass(int layer, int mb, OpPass mode) {
    const ShardedLayer& sharded = layer_kind(layer).sharded;
    const bool blocking = st_.sharded_collectives == spec::ShardedCollectives::kPerTensorBlocking;
    if (sharded_passes_ && (mode == OpPass::kForward || mode == OpPass::kBackward)) {
      if (blocking) {
        sharded_blocking(sharded.gather, "fsdp.all_gather", layer, mb);
      } else {
        // Prefetched one layer ahead: the gather may start once the layer before the previous one
        // has finished (FSDP2: see prefetch_anchors_ below; a chunk's first forward gather:
        // anchor_gathers_at_forward_start).
        const TaskId gather = add(TaskKind::kCollective, kPrefetchStream, Category::kShardedData,
                                  sharded.gather, "fsdp.all_gather", layer, mb);
        for (TaskId anchor : prefetch_anchors_)
          if (anchor != kNone) g_.add_edge(anchor, gather);
        pending_.push_back(gather);
      }
    }
    const TaskId before = last_;
    TaskId copy_out = kNone;
    if (sharded_passes_ && (mode == OpPass::kForward || mode == OpPass::kBackward) && sharded.copy_out > 0) {
      compute(TaskKind::kCompute, Category::kShardedData, sharded.copy_out, "fsdp.copy_out", layer,
              mb, 0);
      copy_out = last_;
    }
    if (mode == OpPass::kBackward && layer_recomputed(st_, layer)) {
      run_ops(layer_kind(layer), OpPass::kRecompute, layer, mb);
      if (sharded_passes_ && blocking) sharded_blocking(sharded.regather, "fsdp.all_gather", layer, mb);
    }
    run_ops(layer_kind(layer), mode, layer, mb);
    // FSDP2's gathers wait for a copy out, not for the layer before it (FSDPParamGroup's
    // wait_for_unshard makes the all-gather streams wait for the copy out's event): in backward
    // its own, before it prefetches the next layer; in forward the wait is deferred to the next
    // layer's (AllGatherState, "to allow for overlap of this copy-out with next all-gather"), so
    // the gather after next waits for this layer's copy out.
    prefetch_anchors_.assign(1, copy_out == kNone          ? before
                                : mode == OpPass::kForward ? last_copy_out_
                                                           : copy_out);
    if (copy_out != kNone) last_copy_out_ = copy_out;
    const bool weights_done =
        mode == OpPass::kWeightGradient || (mode == OpPass::kBackward && !zero_bubble());
    if (sharded_passes_ && weights_done) {
      if (blocking) {
        sharded_blocking(sharded.scatter, "fsdp.reduce_scatter", layer, mb);
      } else {
        if (sharded.flatten > 0)
          compute(TaskKind::kCompute, Category::kShardedData, sharded.flatten, "fsdp.flatten_grad", layer,
                  mb, 0);
        if (sharded.copy_in > 0) {
          if (copies_in_turn_)
            compute(TaskKind::kCompute, Category::kShardedData, sharded.copy_in, "fsdp.copy_in",
                    layer, mb, 0);
          else
            side(kGradientStream, Category::kShardedData, sharded.copy_in, "fsdp.copy_in", layer, mb,
                 TaskKind::kCompute);
        }
        last_scatter_ = side(kGradientStream, Category::kShardedData, sharded.scatter,
                             "fsdp.reduce_scatter", layer, mb);
      }
    }
  }

  // FSDP's root pre-forward makes the all-gather streams wait for the compute stream at each
  // forward of the root (FSDP2's FSDPState._root_pre_forward: all_gather_stream.wait_stream(
  // current_stream); FSDP1's _runtime_utils._root_pre_forward: _wait_for_computation_stream), and
  // torchtitan makes each pipeline chunk a root: a chunk's first gather starts once the compute
  // stream reaches its forward, after the pass before and the chunk's input (pipelining's
  // _wait_batch_p2p, work.wait(), precedes forward_one_chunk). FSDPState._pre_backward has no such
  // wait, so a backward's first gather is prefetched across the chunks as any other.
  void anchor_gathers_at_forward_start() {
    prefetch_anchors_.assign(pending_.begin(), pending_.end());
    if (last_ != kNone) prefetch_anchors_.push_back(last_);
  }

  // A ZeRO-3 collective the host waits for before it launches anything more
  // (ShardedCollectives::kPerTensorBlocking).
  void sharded_blocking(double seconds, std::string_view name, int layer, int mb) {
    if (seconds <= 0) return;
    collective(Category::kShardedData, seconds, name, layer, mb);
    host_waits_for(last_);
  }

  // ---- passes ---------------------------------------------------------------------------------

  bool zero_bubble() const { return st_.schedule == spec::Schedule::kZeroBubbleH1; }

  std::size_t transfer_index(bool backward, int model_chunk, int mb) const {
    return (static_cast<std::size_t>(backward) * chunks_ + model_chunk) * micro_batches_ + mb;
  }

  // Posts the receive of a chunk's input (or of its output's gradient) and returns it.
  TaskId receive(bool backward, int model_chunk, int mb) {
    const TaskId id = add(TaskKind::kRecv, p2p_stream(st_, backward, false), Category::kPipeline, 0,
                          backward ? "pp.recv_grad" : "pp.recv", -1, mb);
    // GPipe and 1F1B post a receive where the schedule calls it (Megatron's and DeepSpeed's
    // blocking send/recv calls), so a send waits for its receiver to get there; interleaved and
    // ZB-H1 post receives ahead, as their frameworks issue them early for the next chunk.
    if (rendezvous_ && last_ != kNone) g_.add_edge(last_, id);
    recvs_[transfer_index(backward, model_chunk, mb)] = id;
    pending_.push_back(id);
    pipeline_sync(id);
    returned_when_done(id);
    // Megatron's scatter/gather: the TP ranks' pieces are gathered over the TP group's links.
    if (gather_s_ > 0) {
      collective(Category::kPipeline, gather_s_, "pp.gather", -1, mb);
      g_.mutable_task(last_).link = graph::link(
          stage_port(s_, stage_, group_of(st_, spec::Axis::kTp)), graph::LinkDirection::kBoth);
    }
    return id;
  }

  // The host waits for `id` (when it launches at all) before its next launch.
  void host_waits_for(TaskId id) {
    if (id != kNone && st_.host_dispatch_s > 0) host_waits_.push_back(id);
  }

  // Under CUDA_LAUNCH_BLOCKING=1 the call that started `id` returned only once `id` had finished,
  // so the host launches nothing more before then.
  void returned_when_done(TaskId id) {
    if (st_.launch_blocking) host_waits_for(id);
  }

  // Megatron synchronises the device after every batched pipeline exchange
  // (torch.cuda.synchronize() after batch_isend_irecv, "to protect against race condition"), so
  // its host cannot run ahead of a pipeline transfer. A send goes out in one batch with the
  // receive that follows it, so the host waits at each receive: for it, for the last send and for
  // the kernels launched so far.
  void pipeline_sync(TaskId transfer) {
    if (st_.pipeline_transfers == spec::PipelineTransfers::kHostSynchronised)
      synchronise_device(transfer);
  }

  // torch.cuda.synchronize(): the host waits for `transfer`, the last send and the kernels
  // launched so far.
  void synchronise_device(TaskId transfer) {
    host_waits_for(transfer);
    host_waits_for(last_);
    host_waits_for(last_send_);
  }

  void send(bool backward, int to_chunk, int mb) {
    const TaskId id = add(TaskKind::kSend, p2p_stream(st_, !backward, true), Category::kPipeline, 0,
                          backward ? "pp.send_grad" : "pp.send", -1, mb);
    g_.add_edge(last_, id);
    // Megatron and PyTorch's pipelining wait for a send before the next kernel (batch_isend_irecv,
    // then wait), so the transfer blocks the sender; asynchronous sends overlap the kernels after
    // them. The receiver waits only for the data.
    if (st_.pipeline_transfers != spec::PipelineTransfers::kAsynchronous) pending_.push_back(id);
    sends_[transfer_index(backward, to_chunk, mb)] = id;
    last_send_ = id;
    returned_when_done(id);
  }

  void edge_ops(const PricedLayer& p, OpPass mode, int mb) { run_ops(p, mode, -1, mb); }

  int layers_in(int model_chunk) const { return first_layer_[model_chunk + 1] - first_layer_[model_chunk]; }

  double chunk_activation_bytes(int model_chunk) const {
    return activation_bytes_ * layers_in(model_chunk);
  }

  void allocate(double bytes) { g_.mutable_task(last_).memory_delta += bytes; }

  // The stages that load the micro-batch (tokens on the first, labels on the last) wait for the
  // GPU first: Megatron's broadcast_data copies the batch sizes back with .cpu().
  void load_micro_batch(int model_chunk) {
    if (model_chunk == 0 || model_chunk == chunks_ - 1) synchronise_stream();
  }

  // A blocking copy between the GPU and pageable host memory synchronises the compute stream: the
  // host waits for the kernels launched so far and for what the stream already waits for (a
  // receive posted by torch.distributed's recv, whose wait() makes the stream wait).
  void synchronise_stream() {
    host_waits_for(last_);
    for (TaskId id : pending_) host_waits_for(id);
  }

  // A pass's output goes to the neighbouring stage now, or with deferred sends at the next step.
  void send_output(bool backward, int to_chunk, int mb) {
    if (st_.deferred_sends) {
      deferred_ = {backward, to_chunk, mb};
    } else {
      send(backward, to_chunk, mb);
    }
  }

  // The exchange DeepSpeed's TrainSchedule issues ahead of a step's pass: SendGrad of the previous
  // step, then RecvActivation and LoadMicroBatch, ahead of a forward; RecvGrad, then SendActivation
  // of the previous step, ahead of a backward. Pipelines of one chunk per stage only.
  void deepspeed_exchange(const DeepSpeedStep& step) {
    const int j = stage_;
    const bool runs = step.micro_batch >= 0;
    if (!step.forward && runs && j < chunks_ - 1) receive(true, j, step.micro_batch);
    if (deferred_.micro_batch >= 0)
      send(deferred_.backward, deferred_.to_chunk, deferred_.micro_batch);
    deferred_ = {};
    if (step.forward && runs) {
      if (j > 0) receive(false, j, step.micro_batch);
      load_micro_batch(j);
    }
  }

  void forward(int model_chunk, int mb) {
    if (!st_.deferred_sends) {
      load_micro_batch(model_chunk);
      if (model_chunk > 0) receive(false, model_chunk, mb);
    }
    // Posted just now, or with deferred sends by the step's exchange.
    const TaskId input = model_chunk > 0 ? recvs_[transfer_index(false, model_chunk, mb)] : kNone;
    if (st_.host_syncs_each_forward) synchronise_device(input);
    anchor_gathers_at_forward_start();
    if (model_chunk == 0) {
      root_gather(mb);
      edge_ops(embedding_, OpPass::kForward, mb);
    }
    for (int l = first_layer_[model_chunk]; l < first_layer_[model_chunk + 1]; ++l) {
      const TaskId gather = param_gathers_.empty() ? kNone : param_gathers_[static_cast<std::size_t>(l)];
      if (gather != kNone) {
        pending_.push_back(gather == kGatherWhenDue
                               ? side(kPrefetchStream, Category::kDataParallel,
                                      dp_gather_s(s_, layer_params_), "dp.param_gather", l, -1)
                               : gather);
        param_gathers_[static_cast<std::size_t>(l)] = kNone;
      }
      layer_pass(l, mb, OpPass::kForward);
    }
    if (model_chunk == chunks_ - 1) edge_ops(head_, OpPass::kForward, mb);
    allocate(chunk_activation_bytes(model_chunk));
    if (model_chunk < chunks_ - 1) send_output(false, model_chunk + 1, mb);
  }

  // The backward of one chunk and micro-batch (mode kBackward), or under ZB-H1 its deferred
  // weight gradient (kWeightGradient). Whichever pass finishes the weights frees the chunk's
  // activations; with `streams_buckets` (the chunk's last such pass, gradients synced as ready)
  // it also launches each layer's gradient bucket as the layer's pass ends.
  void backward(int model_chunk, int mb, OpPass mode, bool streams_buckets) {
    const bool input_pass = mode == OpPass::kBackward;
    const bool weights_done = !input_pass || !zero_bubble();
    const bool buckets = streams_buckets && weights_done;
    if (input_pass && model_chunk < chunks_ - 1 && !st_.deferred_sends)
      receive(true, model_chunk, mb);
    if (model_chunk == chunks_ - 1) {
      if (input_pass && st_.host_reads_loss) host_waits_for(last_);
      if (input_pass && root_.regathered) root_gather(mb);
      edge_ops(head_, mode, mb);
      if (buckets) bucket(head_params(), "dp.grad_bucket", -1);
    }
    for (int l = first_layer_[model_chunk + 1] - 1; l >= first_layer_[model_chunk]; --l) {
      layer_pass(l, mb, mode);
      if (buckets) bucket(layer_params_, "dp.grad_bucket", l);
    }
    if (model_chunk == 0) {
      edge_ops(embedding_, mode, mb);
      if (weights_done) root_scatter(mb);
      if (buckets) bucket(embedding_params(), "dp.grad_bucket", -1);
    }
    if (weights_done) allocate(-chunk_activation_bytes(model_chunk));
    if (input_pass && model_chunk > 0) send_output(true, model_chunk - 1, mb);
  }

  // ZeRO-3's root unit (workload::fsdp_root_unit; none under pipelining): gathered before the
  // embedding's forward and, where it reshards after it, the head's backward, reduce-scattered
  // after the embedding's backward, in turn on the compute stream, as the closed form exposes them.
  void root_gather(int mb) {
    collective(Category::kShardedData, root_.gather, "fsdp.root_all_gather", -1, mb);
    if (root_.copy_out > 0)
      compute(TaskKind::kCompute, Category::kShardedData, root_.copy_out, "fsdp.root_copy_out", -1, mb, 0);
  }
  void root_scatter(int mb) {
    if (root_.flatten > 0)
      compute(TaskKind::kCompute, Category::kShardedData, root_.flatten, "fsdp.root_flatten_grad", -1, mb, 0);
    if (root_.copy_in > 0)
      compute(TaskKind::kCompute, Category::kShardedData, root_.copy_in, "fsdp.root_copy_in", -1, mb, 0);
    collective(Category::kShardedData, root_.scatter, "fsdp.root_reduce_scatter", -1, mb);
  }

  // ---- data parallelism and the optimizer -----------------------------------------------------

  double embedding_params() const { return embedding_params_per_gpu(params_, st_); }
  double head_params() const { return head_params_per_gpu(params_, s_.model, st_); }

  struct GraphSize {
    std::size_t tasks = 0, edges = 0;
  };

  // Reserves the graph's arrays once the first two stages are built, so they are not copied as
  // they grow. The second stage stands for every later one: it receives from both sides, and its
  // tasks and edges grow with its layers; one layer more covers the head, whose three operators
  // take fewer than a layer's.
  void reserve_like_second_stage(GraphSize first) {
    const auto later_layers = static_cast<std::size_t>(s_.model.layers - stage_layers(0) + 1);
    const auto whole = [&](std::size_t after_first, std::size_t after_second) {
      return after_first + (after_second - after_first) * later_layers /
                               static_cast<std::size_t>(stage_layers(1));
    };
    g_.reserve(std::min(budget_.max_tasks(), whole(first.tasks, g_.size())),
               whole(first.edges, g_.edges_added()));
  }

  int stage_layers(int stage) const {
    int layers = 0;
    for (int c = 0; c < st_.vp; ++c) layers += layers_in(c * st_.pp + stage);
    return layers;
  }

  // A gradient bucket, reduced as soon as the backward that completes it ends.
  void bucket(double params, std::string_view name, int layer) {
    if (!st_.overlap_dp_comm) return;
    const double seconds = dp_reduce_s(s_, params);
    if (seconds > 0)
      buckets_.push_back(side(kGradientStream, Category::kDataParallel, seconds, name, layer, -1));
  }

  // Every gradient bucket of virtual stage j at once, in the order its backward completes them.
  void chunk_buckets(int j) {
    if (j == chunks_ - 1) bucket(head_params(), "dp.grad_bucket", -1);
    for (int l = first_layer_[j + 1] - 1; l >= first_layer_[j]; --l)
      bucket(layer_params_, "dp.grad_bucket", l);
    if (j == 0) bucket(embedding_params(), "dp.grad_bucket", -1);
  }

  void build_stage(int stage) {
    stage_ = stage;
    last_ = last_send_ = last_copy_out_ = kNone;
    prefetch_anchors_.clear();
    deferred_ = {};
    host_waits_.clear();
    pending_.clear();
    after_next_.clear();
    buckets_.clear();
    last_scatter_ = kNone;
    const std::vector<Slot> order = stage_order(st_.schedule, st_.pp, st_.vp, micro_batches_, stage);

    // ZeRO-1/2: the updated parameter shards are gathered ahead of each layer's first forward
    // (the previous step's optimizer output, prefetched in layer order as Megatron does). Under
    // CUDA_LAUNCH_BLOCKING=1 the host waits for each gather it starts, so each is started just
    // before its layer's first forward instead (kGatherWhenDue), and nothing is prefetched.
    param_gathers_.assign(static_cast<std::size_t>(s_.model.layers), kNone);
    if (dp_gather_s(s_, layer_params_) > 0 && st_.overlap_dp_comm) {
      for (const Slot& slot : order) {
        if (slot.pass != Pass::kForward || slot.micro_batch != order.front().micro_batch) continue;
        const int j = slot.chunk * st_.pp + stage;
        for (int l = first_layer_[j]; l < first_layer_[j + 1]; ++l) {
          param_gathers_[static_cast<std::size_t>(l)] =
              st_.host_blocks_on_launches()
                  ? kGatherWhenDue
                  : add(TaskKind::kCollective, kPrefetchStream, Category::kDataParallel,
                        dp_gather_s(s_, layer_params_), "dp.param_gather", l, -1);
        }
      }
    }

    const GradSyncSlots sync = grad_sync_slots(order, st_, stage);
    const auto run_slot = [&](std::size_t i) {
      const Slot& slot = order[i];
      const int j = slot.chunk * st_.pp + stage;
      const bool streams = sync.streams[static_cast<std::size_t>(slot.chunk)] == i;
      switch (slot.pass) {
        case Pass::kForward:
          forward(j, slot.micro_batch);
          break;
        case Pass::kBackward:
          backward(j, slot.micro_batch, OpPass::kBackward, streams);
          break;
        case Pass::kWeightGradient:
          backward(j, slot.micro_batch, OpPass::kWeightGradient, streams);
          break;
      }
      for (std::size_t c = 0; c < sync.starts_after.size(); ++c) {
        if (sync.starts_after[c] == i) chunk_buckets(static_cast<int>(c) * st_.pp + stage);
      }
    };
    if (st_.deferred_sends) {
      std::size_t i = 0;
      for (const DeepSpeedStep& step : deepspeed_train_steps(st_.pp, micro_batches_, stage)) {
        deepspeed_exchange(step);
        if (step.micro_batch >= 0) run_slot(i++);
      }
    } else {
      for (std::size_t i = 0; i < order.size(); ++i) run_slot(i);
    }

    const double params = stage_own_params_per_gpu(params_, s_.model, st_, stage);
    if (!st_.overlap_dp_comm) {
      const double reduce = dp_reduce_s(s_, params);
      if (reduce > 0)
        buckets_.push_back(
            side(kGradientStream, Category::kDataParallel, reduce, "dp.grad_reduce", -1, -1));
    }
    pending_.insert(pending_.end(), buckets_.begin(), buckets_.end());
    // The optimizer updates the shards the reduce-scatters deliver: it waits for the last of them,
    // and so, their stream being in order, for all (a comm-bound backward leaves them queued).
    if (last_scatter_ != kNone) pending_.push_back(last_scatter_);
    if (tied_sync_s_ > 0 && (stage == 0 || stage == st_.pp - 1)) {
      // A gradient reduction by kind, but between pipeline stages, so through the pipeline's port.
      const TaskId sync =
          compute(TaskKind::kCollective, Category::kDataParallel, tied_sync_s_,
                  "dp.tied_embedding_sync", -1, -1, host_launch_s(s_, 1), Members::kStages);
      g_.mutable_task(sync).link = task_link(s_, stage_, Category::kPipeline, TaskKind::kCollective);
      tied_syncs_.push_back(sync);
    }
    compute(TaskKind::kCompute, Category::kOptimizer, optimizer_s(s_, params), "optimizer.step", -1, -1, 0);
    if (!st_.overlap_dp_comm) {
      collective(Category::kDataParallel, dp_gather_s(s_, params), "dp.param_gather", -1, -1);
    }
  }

  void pair_transfers() {
    for (std::size_t k = 0; k < recvs_.size(); ++k) {
      STEPCAST_ASSERT((recvs_[k] == kNone) == (sends_[k] == kNone), "a pipeline transfer without its peer");
      if (recvs_[k] != kNone) g_.add_collective({sends_[k], recvs_[k]}, budget_.to_ns(p2p_s_));
    }
  }

  const spec::Scenario& s_;
  StepBudget budget_;
  const spec::Strategy& st_;
  const int chunks_;
  const int micro_batches_;
  std::vector<int> first_layer_;  // by model chunk, and the layer count at the end
  const PricedLayer dense_, moe_, embedding_, head_;
  const ParamCounts params_;
  const double layer_params_;
  const double activation_bytes_;
  const double p2p_s_;  // one pipeline transfer
  const double tied_sync_s_;        // the first and last stages' tied embedding gradient sync
  std::vector<TaskId> tied_syncs_;  // its task on each of them
  const double gather_s_;  // its all-gather under Megatron's scatter/gather
  const bool async_backward_;  // workload::tp_async_backward
  const bool copies_in_turn_;  // workload::fsdp_copies_in_turn
  const RootUnit root_;        // workload::fsdp_root_unit
  // ZeRO-3 moves each layer: a group of more than one gathers and reduces it, and FSDP2 copies
  // around its collectives even on one rank (workload::fsdp2_copies).
  const bool sharded_passes_;
  const bool rendezvous_;
  // By transfer_index, a slot per micro-batch's forward and backward out of each chunk; build()
  // refuses a step over the task budget before they are allocated.
  std::vector<TaskId> sends_, recvs_;

  graph::ExecGraph g_;
  int stage_ = 0;
  TaskId last_ = kNone;             // the last task on the compute stream
  std::vector<TaskId> prefetch_anchors_;  // ZeRO-3 gathers of the next layer wait for these
  std::vector<TaskId> host_waits_;  // the next launch waits for these (host synchronisation)
  TaskId last_send_ = kNone;        // the latest pipeline send, for the next synchronisation
  struct DeferredSend {
    bool backward = false;
    int to_chunk = 0;
    int micro_batch = -1;           // -1: none
  } deferred_;                      // deferred sends: the last pass's output, not sent yet
  std::vector<TaskId> pending_;     // the next compute task waits for these
  std::vector<TaskId> after_next_;  // ... and the one after it for these
  std::vector<TaskId> buckets_;     // the optimizer waits for these
  TaskId last_scatter_ = kNone;     // and for this, the stage's last ZeRO-3 reduce-scatter
  TaskId last_copy_out_ = kNone;    // FSDP2's copy out of the layer last gathered
  std::vector<TaskId> param_gathers_;  // by layer: ZeRO-1/2 gathers not yet waited for
  // In param_gathers_: a gather the host starts when its layer's first forward is due.
  static constexpr TaskId kGatherWhenDue = kNone - 1;
};

}  // namespace

graph::ExecGraph build(const spec::Scenario& s, std::size_t max_tasks) {
  StepBudget(s, max_tasks).check_step([&](int micro_batches) {
    spec::Scenario probe = s;
    probe.strategy.global_batch = s.strategy.dp * s.strategy.micro_batch * micro_batches;
    return StepBuilder(probe, max_tasks).build().size();
  });
  return StepBuilder(s, max_tasks).build();
}

}  // namespace stepcast::workload
