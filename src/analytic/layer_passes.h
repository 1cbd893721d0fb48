// A layer's passes as the closed form prices them (analytic::estimate): its kernels' times,
// alone and beside the collectives of the other streams, how those kernels stretch beside
// communication, and the TP, CP and EP communication each pass exposes. Internal to analytic.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <limits>

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
};

// The layer's ops priced with the given shares of the GPU beside collectives.
PassTimes price(const workload::LayerOps& ops, const spec::Scenario& s, cost::Shares shares);

// A stretch of communication: `seconds` during which kernels that take `alone` on the whole GPU
// take `beside` instead (next to the collectives running then).
// `rate`: the communication's progress per second while the kernels run (below 1 where they
// share its link), at full speed once they have ended.
struct Phase {
  double seconds = 0, beside = 0;
  double rate = 1;
};

// Seconds for kernels of `alone` seconds run alongside communication phases started with them:
// they progress at each phase's rate while it lasts and at the full rate after the last, and the
// pair ends when both have, never before the kernels alone would (callers subtract `alone`, and
// rounding must not leave them a negative residue).
inline double overlapped_s(double alone, std::initializer_list<Phase> phases) {
  double t = 0, left = 1;  // left: the share of the kernels' work not yet done
  double end = -1;
  for (const Phase& p : phases) {
    if (end < 0 && p.seconds > 0) {
      const double lasts = p.seconds / p.rate;  // while the kernels run beside it
      if (lasts >= left * p.beside) {
        end = t + left * p.beside;
        t = end + p.seconds - left * p.beside * p.rate;
      } else {
        left -= lasts / p.beside;
        t += lasts;
      }
      continue;
    }
    t += p.seconds;
  }
  return std::max({end < 0 ? t + left * alone : end, t, alone});
}

// The same beside one collective of `comm` seconds.
inline double overlapped_s(double alone, double beside, double comm) { return overlapped_s(alone, {{comm, beside}}); }

// Where in each layer pass some of the gradient group's collectives run: from `from` to `to`
// seconds after the pass starts (kWholePass: throughout, as a queue that never empties does).
struct Span {
  double from = 0, to = 0;
};
inline constexpr Span kWholePass{0, std::numeric_limits<double>::infinity()};

// A transfer on a stream of its own beside some of a pass's kernels, the op after them waiting
// for it: the CP ring beside the core attention (Transformer Engine's AttnFuncWithCPAndKVP2P
// posts each step's isend/irecv on the CP group, flash_attn_p2p_communicate, before the attention
// of the chunk in hand). `seconds` on its links alone, `times` per pass (a share where
// recomputation re-runs it, or a stage's layers); `window`: those kernels alone, beside one
// collective and beside two (cost::KernelTime; the transfer holds SMs as NCCL's kernels do);
// `lead`: the pass's kernels before them, beside one collective (PassTimes::Beside).
struct SideTransfer {
  double seconds = 0, times = 0;
  std::array<double, 3> window{};
  double lead = 0;
  // The seconds it adds to the pass beyond its kernels where `holders` other collectives hold SMs
  // beside them and `sharers` of those cross its links, where each of the sharers + 1 transfers
  // gets an equal share of the bandwidth (as the simulator's links share it).
  double exposed(int holders, int sharers) const {
    if (seconds <= 0 || times <= 0) return 0;
    const double alone = window[static_cast<std::size_t>(std::min(holders, 2))];
    const double beside = window[static_cast<std::size_t>(std::min(holders + 1, 2))];
    return times * (overlapped_s(alone, beside, (sharers + 1) * seconds) - alone);
  }
  // The share of its window that collectives running over `span` of the pass meet: a collective
  // started with the pass runs first beside the `lead` kernels (in backward the MLP block's, as
  // autograd reverses the forward's order), and only what is left of it then reaches the window.
  double met(Span span) const {
    const double from = lead, to = lead + window[1];
    if (to <= from) return 1;
    return std::clamp((std::min(span.to, to) - std::max(span.from, from)) / (to - from), 0.0, 1.0);
  }
  // Its seconds on the links in a pass.
  double link_s() const { return times * seconds; }
  SideTransfer scaled(double n) const { return {seconds, times * n, window, lead}; }
};

// A pass's side transfers: a backward's own ring and the recomputed forward's.
using SideTransfers = std::array<SideTransfer, 2>;

// A pass on the compute stream beside the gradient group's collectives (ZeRO-3 gathers and
// scatters, data-parallel buckets): its kernels, which run slowed beside one collective or two,
// and its exposed TP and EP collectives, on other links than the group's (`apart`: neither
// slows the other) or on the same links (`shared`: beside n of the group's collectives each of
// the n + 1 gets an equal share of the bandwidth), and transfers on the group's links on streams
// of their own (`side`: the CP ring). The n collectives share a transfer's links over the part of
// its window they run beside (SideTransfer::met): there it takes n + 1 times as long and may
// outlast the kernels it hid behind, and the group loses its seconds on the links; elsewhere it
// has its links to itself.
struct PassStream {
  double kernels = 0, beside = 0, beside_two = 0;
  double apart = 0, shared = 0;
  SideTransfers side{};
  // The sides' exposure beside `holders` collectives, `sharers` of which cross their links over
  // `span` of the pass; and their seconds on the links over it.
  double side_exposed(int holders, int sharers, Span span = kWholePass) const {
    double s = 0;
    for (const SideTransfer& t : side) {
      const double met = t.met(span);
      s += met * t.exposed(holders, sharers) + (1 - met) * t.exposed(holders, 0);
    }
    return s;
  }
  double side_link_s(Span span) const { return side[0].met(span) * side[0].link_s() + side[1].met(span) * side[1].link_s(); }
  double alone() const { return kernels + apart + shared + side_exposed(0, 0); }
  // The pass beside another stream's kernel (FSDP2's copy in), which holds SMs, not links.
  double beside_kernel() const { return beside + apart + shared + side_exposed(1, 0); }
  // A phase of `seconds` of the group's communication, run by `n` collectives at once over `span`
  // of each pass.
  Phase beside_group(double seconds, int n, Span span) const {
    const double stream = (n >= 2 ? beside_two : beside) + apart + (n + 1) * shared + side_exposed(n, n, span);
    const double lost = shared + side_link_s(span);
    return {seconds, stream, stream > 0 ? (stream - lost) / stream : 1};
  }
};

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

// The CP ring of a layer's forward and of its backward (with the recomputed forward's), beside
// the core attention of its kernels `k` (none with all-gather CP, whose collectives run on the
// compute stream).
struct CpRings {
  SideTransfer fwd;
  SideTransfers bwd{};
};
CpRings cp_rings(const spec::Scenario& s, const PassTimes& k);

// Each kind of a layer's communication, exposed per pass beside its kernels `k`: TP collectives
// (overlapped as the strategy says), the CP exchange (the `rings` beside the attention, or
// gathers before it) and the EP all-to-alls.

LayerComm tp_comm(const spec::Scenario& s, const PassTimes& k);
LayerComm cp_comm(const spec::Scenario& s, const CpRings& rings);
LayerComm ep_comm(const spec::Scenario& s);

// Whether the TP, CP and EP groups' collectives cross other links than the gradient group's
// (workload::spanned_level): the scenario's, found once, as an estimate splits a layer's
// communication by them for each stage and each ZeRO-3 neighbourhood.
struct LinksApart {
  bool tp = false, cp = false, ep = false;
};
LinksApart links_apart(const spec::Scenario& s);

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
