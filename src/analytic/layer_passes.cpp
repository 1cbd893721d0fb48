#include "analytic/layer_passes.h"

#include <cmath>
#include <utility>

#include "core/error.h"
#include "workload/cp_exchange.h"
#include "workload/placement.h"

namespace stepcast::analytic {

using cost::CollectiveKind;
using spec::Axis;
using workload::LayerOps;
using workload::Op;

PassTimes price(const LayerOps& ops, const spec::Scenario& s, const workload::OpPricer& op_times) {
  PassTimes t;
  const cost::Shares shares = op_times.shares();
  // An average layer: with full recomputation of every k-th layer, 1/k of them re-run.
  const double recomputed = workload::recomputed_layer_fraction(s.strategy);
  // A layer's backward recomputes before its ops' backward: torchtitan wraps each block in
  // checkpoint_wrapper (non-reentrant) before fully_shard, so FSDP2's pre-backward hook on the
  // block's output (FSDPState._pre_backward) gathers, copies out and prefetches first, and the
  // recomputation runs when the block's backward first unpacks a saved tensor
  // (torch.utils.checkpoint's unpack hook); the collectives started then meet those kernels.
  // Only ZeRO-3's exposure walks the order (sharded_exposure), beside one collective or two.
  const bool ordered = s.strategy.zero_stage >= 3 && shares >= cost::Shares::kBesideTwo;
  Kernel input;  // the ops' input gradients together
  bool before_attention = true;
  for (const Op& op : ops) {
    before_attention = before_attention && !op.core_attention;
    const auto [o, c, c2] = op_times(op);
    if (op.tp_edge != workload::BlockEdge::kNone) {
      STEPCAST_ASSERT(t.tp_edge_count < static_cast<int>(t.tp_edges.size()), "a layer has two TP blocks");
      t.tp_edges[static_cast<std::size_t>(t.tp_edge_count++)] = {
          op.tp_edge, workload::fp8_gemm(op, s), workload::tp_backward_overlapped(op, s.strategy), o.fwd,
          o.bwd_input, o.bwd_weight, c.bwd_input, c.bwd_weight};
    }
    if (op.core_attention) {
      t.attention_fwd += o.fwd;
      t.attention_bwd += o.bwd();
    }
    t.fwd += o.fwd;
    t.bwd += o.bwd();
    t.wgrad += o.bwd_weight;
    const double share = workload::recompute_share(op, s.strategy.recompute);
    t.recompute += o.fwd * share;
    if (shares >= cost::Shares::kBesideOne) t.beside.add(op, c, share, before_attention);
    if (shares >= cost::Shares::kBesideTwo) t.beside_two.add(op, c2, share, before_attention);
    t.host_fwd += o.host_fwd;
    t.host_bwd += o.host_bwd();
    if (share > 0) t.host_recompute += o.host_fwd;
    if (!ordered) continue;
    if (share > 0) {
      const double times = share * recomputed;
      t.bwd_order.add({times * o.fwd, times * c.fwd, times * c2.fwd});
      t.input_order.add(t.bwd_order[t.bwd_order.size() - 1]);
    }
    input = {input.alone + o.bwd_input, input.beside + c.bwd_input, input.beside_two + c2.bwd_input};
  }
  if (ordered) {
    t.bwd_order.add({t.bwd, t.beside.bwd, t.beside_two.bwd});
    t.input_order.add(input);
  }
  t.recompute *= recomputed;
  t.beside.recompute *= recomputed;
  t.beside_two.recompute *= recomputed;
  t.host_recompute *= recomputed;
  return t;
}

double sharded_forward_s(const PassStream& pass, double gather, double copy_out, double head_start) {
  const Phase beside = pass.beside_group(gather, 1, {0, gather});
  const double both = pass.overlapped({beside});  // the kernels and the gather
  // The kernels end within `beside` seconds, before the gather where it outlasts them.
  return std::max(copy_out + std::min(both, beside.beside), both - head_start);
}

double forward_head_start(double before_kernels, double before_copy_out, double own_gather) {
  if (before_copy_out <= 0) return 0;  // no copy out: the gather waits for the layer before
  return std::max(0.0, std::min(before_kernels, before_copy_out + before_kernels - own_gather));
}

double sharded_backward_s(const PassStream& pass, double gather, double copy_in, double scatter, double copy_out) {
  // What the reduce-scatter's stream has left when the kernels start.
  scatter = std::max(0.0, scatter - std::max(0.0, copy_out - copy_in));
  copy_in = std::max(0.0, copy_in - copy_out);
  const double shared = std::max(0.0, gather - copy_in);  // what is left of the gather
  // The phases follow one another from the pass's start (the gather's prefetch and the previous
  // layer's reduce-scatter start with it: FSDPParamGroup.pre_backward, post_backward).
  const double both = 2 * std::min(shared, scatter), one = std::abs(shared - scatter);
  return pass.overlapped({pass.beside_group(std::min(gather, copy_in), 1, {0, std::min(gather, copy_in)}),
                          pass.beside_kernel(std::max(0.0, copy_in - gather)),
                          pass.beside_group(both, 2, {copy_in, copy_in + both}),
                          pass.beside_group(one, 1, {copy_in + both, copy_in + both + one})}) +
         copy_out;
}

LayerComm tp_comm(const spec::Scenario& s, workload::GroupShape tp, const PassTimes& k) {
  const spec::Strategy& st = s.strategy;
  if (st.tp <= 1) return {};
  // Two per pass (after attention and after the MLP): all-reduce, or with sequence parallelism an
  // all-gather before and a reduce-scatter after each block (Korthikanti §4.2.2).
  // Priced once per kind: with SP the gathers (of BF16, and of FP8 under FP8 GEMMs) and the
  // scatters, else the all-reduces.
  const bool sp = st.sequence_parallel;
  const auto edges_end = k.tp_edges.begin() + k.tp_edge_count;
  const bool fp8_edges = std::any_of(k.tp_edges.begin(), edges_end, [](const PassTimes::Edge& e) { return e.fp8; });
  const cost::GroupLinks links = workload::links_of(tp, s);
  const auto collective_s = [&](CollectiveKind kind, bool fp8) { return workload::tp_collective_s(s, links, kind, fp8); };
  const double gather = sp ? collective_s(CollectiveKind::kAllGather, false) : 0;
  const double gather_fp8 = sp && fp8_edges ? collective_s(CollectiveKind::kAllGather, true) : 0;
  const double scatter = sp ? collective_s(CollectiveKind::kReduceScatter, false) : 0;
  const double all_reduce = sp ? 0 : collective_s(CollectiveKind::kAllReduce, false);
  const auto seconds = [&](const PassTimes::Edge& e, bool backward) {
    const auto kind = workload::tp_edge_collective(e.edge, backward, sp);
    if (!kind) return 0.0;
    if (*kind == CollectiveKind::kAllGather) return e.fp8 ? gather_fp8 : gather;
    return *kind == CollectiveKind::kReduceScatter ? scatter : all_reduce;
  };
  const bool async_backward = workload::tp_async_backward(st);
  double fwd = 0, bwd = 0;
  for (int i = 0; i < k.tp_edge_count; ++i) {
    const PassTimes::Edge& e = k.tp_edges[static_cast<std::size_t>(i)];
    const double c_fwd = seconds(e, false), c_bwd = seconds(e, true);
    // Async TP fuses each collective with its edge GEMM, which it decomposes to hide it.
    fwd += st.overlap_tp_comm ? std::max(0.0, c_fwd - e.fwd) : c_fwd;
    if (async_backward && e.edge == workload::BlockEdge::kStart) {
      // Megatron's column-parallel backward: the input gradient's collective beside the weight
      // gradient; with SP the input gathered again beside the input gradient.
      bwd += overlapped_s(e.bwd_weight, e.beside_bwd_weight, c_bwd) - e.bwd_weight;
      if (sp)
        bwd += overlapped_s(e.bwd_input, e.beside_bwd_input, e.fp8 ? gather_fp8 : gather) -
               e.bwd_input;
    } else {
      // Async TP hides it behind the input gradient's pieces; the weight gradient waits for it.
      bwd += e.overlapped_bwd ? std::max(0.0, c_bwd - e.bwd_input) : c_bwd;
    }
  }
  const double launches = st.sequence_parallel ? 4.0 : 2.0;
  return {fwd, bwd + full_recompute_fraction(st) * fwd, launches, launches};
}

namespace {

// The transfer started with the attention (CpAroundAttention::beside), beside the first share of
// its kernels `window` (alone, beside one collective, beside two), after the pass's `lead`.
SideTransfer first_transfer(const workload::CpAroundAttention& x, std::array<double, 3> window, double lead,
                            double times) {
  for (double& w : window) w *= x.share;
  return {x.beside, times, window, lead};
}

// The transfer beside the rest of those kernels (CpAroundAttention::rest).
SideTransfer rest_transfer(const workload::CpAroundAttention& x, std::array<double, 3> window, double lead) {
  const double first = x.share * window[1];
  for (double& w : window) w *= 1 - x.share;
  return {x.rest, 1, window, lead + first};
}

// What the transfers beside the attention expose, each alone on its links.
LayerComm rings_exposed(const CpRings& rings) {
  double bwd = 0;
  for (const SideTransfer& t : rings.bwd) bwd += t.exposed(0, 0);
  return {rings.fwd.exposed(0, 0), bwd, 0, 0};
}

}  // namespace

CpRings cp_rings(const spec::Scenario& s, const PassTimes& k) {
  const spec::Strategy& st = s.strategy;
  if (st.cp <= 1) return {};
  // Each after the kernels its pass runs first (PassTimes::Beside): a recomputed layer re-runs its
  // forward ops before its backward (workload/build.cpp, layer_pass), the backward's attention
  // after all of them; recomputing the attention runs its exchange again.
  const workload::CpAroundAttention fwd = workload::cp_around_attention(s, false);
  const workload::CpAroundAttention bwd = workload::cp_around_attention(s, true);
  const std::array<double, 3> fwd_window{k.attention_fwd, k.beside.attention_fwd, k.beside_two.attention_fwd};
  const std::array<double, 3> bwd_window{k.attention_bwd, k.beside.attention_bwd, k.beside_two.attention_bwd};
  const double bwd_lead = k.beside.recompute + k.beside.lead_bwd;
  return {first_transfer(fwd, fwd_window, k.beside.lead_fwd, 1),
          {first_transfer(bwd, bwd_window, bwd_lead, 1), rest_transfer(bwd, bwd_window, bwd_lead),
           first_transfer(fwd, fwd_window, k.beside.lead_recompute, workload::attention_recomputed_fraction(st))}};
}

LayerComm cp_comm(const spec::Scenario& s, const CpRings& rings) {
  const spec::Strategy& st = s.strategy;
  if (st.cp <= 1) return {};
  // The collectives on the compute stream before and after the attention, the attention waiting
  // for each, in backward again where it is recomputed (CpAroundAttention); and what the
  // transfers beside it expose.
  const workload::CpAroundAttention fwd = workload::cp_around_attention(s, false);
  const workload::CpAroundAttention bwd = workload::cp_around_attention(s, true);
  const double recomputed = workload::attention_recomputed_fraction(st);
  const LayerComm beside = rings_exposed(rings);
  const auto calls = [](const workload::CpAroundAttention& x) {
    return x.launches * ((x.before > 0 ? 1.0 : 0.0) + (x.after > 0 ? 1.0 : 0.0));
  };
  return {fwd.before + beside.fwd, recomputed * fwd.before + bwd.before + bwd.after + beside.bwd, calls(fwd),
          calls(bwd)};
}

LayerComm ep_comm(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (st.ep <= 1) return {};
  // Dispatch and combine all-to-all per pass, each moving every routed token's hidden vector.
  const double one = 2 * workload::ep_all_to_all_s(s);
  return {one, one + full_recompute_fraction(st) * one, 2, 2};
}

LinksApart links_apart(const workload::ParallelGroups& groups, const spec::ClusterSpec& cluster) {
  const int gradient_level = workload::spanned_level(groups.gradient, cluster);
  const auto apart = [&](Axis axis) {
    return workload::spanned_level(groups.of(axis), cluster) != gradient_level;
  };
  return {apart(Axis::kTp), apart(Axis::kCp), apart(Axis::kEp)};
}

LinkSplit split_by_links(const LinksApart& apart, const LayerComm& tp, const LayerComm& cp, const LayerComm& ep,
                         const CpRings& rings) {
  LinkSplit out;
  // The ring runs beside the attention on its own stream: the group's collectives share the links
  // with the whole of it, not only with what it exposes alone (PassStream).
  const bool ring_beside_group = !apart.cp && rings.fwd.seconds > 0;
  if (ring_beside_group) {
    out.fwd_side = {rings.fwd};
    out.bwd_side = rings.bwd;
  }
  // Beside the group the transfers' exposure is the PassStream's; the collectives on the compute
  // stream stay the CP group's (cp_comm).
  const LayerComm beside = rings_exposed(rings);
  const LayerComm cp_counted =
      ring_beside_group ? LayerComm{cp.fwd - beside.fwd, cp.bwd - beside.bwd, cp.launches, cp.bwd_launches} : cp;
  for (const auto& [comm, is_apart] : {std::pair{tp, apart.tp}, std::pair{cp_counted, apart.cp}, std::pair{ep, apart.ep}}) {
    LayerComm& to = is_apart ? out.apart : out.shared;
    to.fwd += comm.fwd;
    to.bwd += comm.bwd;
  }
  return out;
}

PassPair layer_host_s(const spec::Scenario& s, const PassTimes& k, const LayerComm& comm) {
  const double recomputed = full_recompute_fraction(s.strategy);
  const double host_fwd = k.host_fwd + workload::host_launch_s(s, comm.launches);
  const double host_bwd = k.host_bwd + k.host_recompute +
                          workload::host_launch_s(s, comm.bwd_launches + recomputed * comm.launches);
  return {exposed_host_s(s.strategy, host_fwd, k.fwd + comm.fwd),
          exposed_host_s(s.strategy, host_bwd, k.bwd + k.recompute + comm.bwd)};
}

}  // namespace stepcast::analytic
