// A layer's passes as the closed form prices them (analytic::estimate): its kernels' times,
// alone and beside the collectives of the other streams, how those kernels stretch beside
// communication, and the TP, CP and EP communication each pass exposes. Internal to analytic.
#pragma once

#include <algorithm>
#include <array>

#include "analytic/pass_stream.h"
#include "cost/compute.h"
#include "spec/scenario.h"
#include "workload/operators.h"
#include "workload/step_costs.h"

namespace stepcast::analytic {

// One layer's kernels per pass, for one micro-batch.
struct PassTimes {
  double fwd = 0;        // forward kernels
  double bwd = 0;        // backward kernels
  double recompute = 0;  // forward kernels re-run in backward
  // The ops at the TP block edges (a layer has two blocks), whose GEMMs async TP fuses with the
  // edge collectives.
  struct Edge {
    workload::BlockEdge edge = workload::BlockEdge::kNone;
    bool fp8 = false;  // an FP8 GEMM: the gather at this edge moves FP8
    bool overlapped_bwd = false;  // the backward's collective hides beside the GEMMs (async TP)
    double fwd = 0;
    // The backward's input- and weight-gradient kernels, alone and beside one collective
    // (Strategy::tp_async_backward runs a collective beside each).
    double bwd_input = 0, bwd_weight = 0, beside_bwd_input = 0, beside_bwd_weight = 0;
    double bwd() const { return bwd_input + bwd_weight; }
  };
  std::array<Edge, 4> tp_edges{};
  int tp_edge_count = 0;
  double attention_fwd = 0;  // core attention share of fwd, for CP overlap
  double attention_bwd = 0;
  double wgrad = 0;          // weight-gradient share of bwd, deferred by zero-bubble schedules
  double host_fwd = 0, host_bwd = 0, host_recompute = 0;  // host seconds launching the kernels
  // The same kernels beside one collective's kernel and beside two, on the SMs they leave
  // (cost::KernelTime); zero where price() was not asked for them.
  struct Beside {
    double fwd = 0, bwd = 0, recompute = 0, attention_fwd = 0, attention_bwd = 0;
    double wgrad = 0;  // the weight-gradient share of bwd
    // The kernels each pass runs before its core attention (the CP ring's window): in forward
    // order those before it, and the recomputed ones of them; the backward runs the ops in
    // reverse, so those after it (workload/build.cpp, run_ops).
    double lead_fwd = 0, lead_bwd = 0, lead_recompute = 0;
    // `before_attention`: whether the layer's core attention comes after op in forward order.
    void add(const workload::Op& op, const workload::OpTime& t, double recompute_share, bool before_attention) {
      if (op.core_attention) {
        attention_fwd += t.fwd;
        attention_bwd += t.bwd();
        lead_bwd = 0;
      } else {
        lead_bwd += t.bwd();
      }
      if (before_attention) {
        lead_fwd += t.fwd;
        lead_recompute += t.fwd * recompute_share;
      }
      fwd += t.fwd;
      bwd += t.bwd();
      wgrad += t.bwd_weight;
      recompute += t.fwd * recompute_share;
    }
  } beside, beside_two;
  // The backward's kernels in the order it runs them (workload/build.cpp, layer_pass): the
  // recomputed forward ops first, each on its own (the average layer's share of them), then the
  // backward's, together as one kernel of their average shares, as a forward's are: the pass's
  // TP, CP and EP collectives, which the closed form spreads over its kernels, sit between them
  // at the blocks' edges. The same for ZB-H1's input-gradient pass.
  KernelOrder bwd_order, input_order;
};

// The layer's ops priced by `op_times`, beside the collectives of its overlap.
PassTimes price(const workload::LayerOps& ops, const spec::Scenario& s, const workload::OpPricer& op_times);

// FSDP2 copies each layer's gathered parameters out (`copy_out`) on the compute stream before
// its kernels, and its all-gather streams wait for that copy's end before the next gather they
// run (FSDPParamGroup::wait_for_unshard), so a gather runs beside kernels, not beside a copy out.
//
// A layer's forward: the copy out, then its kernels beside the gather it prefetches. In forward
// FSDP2 defers that wait to the next layer's, so a gather that outlasts the kernels runs on
// beside the next copy out, and the gathers follow one another on their stream: a layer takes
// at least the gather's time, less its `head_start` (forward_head_start).
double sharded_forward_s(const PassStream& pass, double gather, double copy_out, double head_start = 0);

// The deferred wait lets the gather a layer prefetches start a layer early: the gather of layer
// l + 1 waits for the copy out of l - 1 and for the gather of l on its stream, not for l's copy
// out, so it runs beside l - 1's kernels from the later of the two ends (copy out
// `before_copy_out`, then kernels `before_kernels`, beside the layer's own gather `own_gather`
// started with that copy out). Layers alike gain nothing (a gather that outlasts the kernels
// leaves none of them); a dense layer between MoE layers hides part of the next MoE layer's
// gather behind the previous one's kernels: over the pair, the MoE copy out and gather, not the
// MoE layer's copy out, kernels and gather, bound the time. Without a copy out (ZeRO-3 without
// FSDP2's copies) the gather waits for the layer before, and has no head start.
double forward_head_start(double before_kernels, double before_copy_out, double own_gather);

// A layer's backward: the copy out, then its kernels beside FSDP's two collectives, the next
// layer's gather and the reduce-scatter of the layer before it (in backward order), which run on
// streams of their own and cross the same links, so they share the bandwidth while both run
// (2 min(gather, scatter)), each holding its SMs, and the longer one finishes alone. The
// reduce-scatter's stream starts with the copy out: FSDP2 first copies the gradients in on it
// (`copy_in`), a kernel that crosses no link, and the scatter has the link to itself until the
// copy out ends; the gather, which waits for the copy out, has it to itself while the copy in
// runs on.
double sharded_backward_s(const PassStream& pass, double gather, double copy_in, double scatter, double copy_out);

// Full recomputation re-runs a layer's collectives too; the other modes re-run local ops only.
inline double full_recompute_fraction(const spec::Strategy& st) {
  return st.recompute == spec::Recompute::kFull ? workload::recomputed_layer_fraction(st) : 0;
}

// Per-layer communication and how much of it the kernels hide, for one micro-batch.
struct LayerComm {
  double fwd = 0, bwd = 0;  // exposed seconds per pass (recompute included in bwd)
  double launches = 0;      // collectives the host launches per forward pass
  double bwd_launches = 0;  // and per backward pass, recompute left out
};

// The CP transfers beside the core attention of a layer's kernels `k` (the ring's; the
// gathered ring's K, V gather and dK, dV passes), in its forward and its backward (with the
// recomputed forward's): none with all-gather CP, whose collectives run on the compute stream
// (workload::CpAroundAttention).
struct CpRings {
  SideTransfer fwd;
  SideTransfers bwd{};
};
CpRings cp_rings(const spec::Scenario& s, const PassTimes& k);

// Each kind of a layer's communication, exposed per pass beside its kernels `k`: TP collectives
// on the TP group `tp` (overlapped as the strategy says), the CP exchange (the `rings` beside the
// attention, or gathers before it) and the EP all-to-alls.

LayerComm tp_comm(const spec::Scenario& s, workload::GroupShape tp, const PassTimes& k);
LayerComm cp_comm(const spec::Scenario& s, const CpRings& rings);
LayerComm ep_comm(const spec::Scenario& s);

// Whether the TP, CP and EP groups' collectives cross other links than the gradient group's
// (workload::spanned_level): the scenario's, found once, as an estimate splits a layer's
// communication by them for each stage and each ZeRO-3 neighbourhood.
struct LinksApart {
  bool tp = false, cp = false, ep = false;
};
LinksApart links_apart(const workload::ParallelGroups& groups, const spec::ClusterSpec& cluster);

// A layer's exposed TP communication (`tp`), CP exchange (`cp`) and EP all-to-alls (`ep`) by the
// links they cross: other links than the gradient group's, or the same;
// a CP ring on the same links as side transfers of each pass (`fwd_side`, `bwd_side`), in place
// of its exposure alone.
struct LinkSplit {
  LayerComm apart, shared;
  SideTransfers fwd_side{}, bwd_side{};
};
LinkSplit split_by_links(const LinksApart& apart, const LayerComm& tp, const LayerComm& cp, const LayerComm& ep,
                         const CpRings& rings);

// Seconds of a layer's forward and backward passes.
struct PassPair {
  double fwd = 0, bwd = 0;
  double total() const { return fwd + bwd; }
};

// GPU idle time of a pass whose kernels take `gpu` seconds and `host` seconds to launch. The host
// runs ahead of the GPU, so the pass lasts max(GPU time, host time); when each launch blocks until
// its kernel has finished, the two take turns and the GPU waits for all of the host's time.
inline double exposed_host_s(const spec::Strategy& st, double host, double gpu) {
  return st.launch_blocking ? host : std::max(0.0, host - gpu);
}

// The GPU idle time of one layer's forward and of its backward pass of one micro-batch, the host
// launching its kernels and the collectives on the compute stream.
PassPair layer_host_s(const spec::Scenario& s, const PassTimes& k, const LayerComm& comm);

// The same for the embedding and output head, which run no collectives.
inline double edge_host_s(const spec::Strategy& st, const PassTimes& k) {
  return exposed_host_s(st, k.host_fwd, k.fwd) + exposed_host_s(st, k.host_bwd, k.bwd);
}

}  // namespace stepcast::analytic
