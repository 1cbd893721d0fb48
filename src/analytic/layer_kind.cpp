#include "analytic/layer_kind.h"

#include <algorithm>

namespace stepcast::analytic {
namespace {

// Three kinds of a layer's communication together (TP, CP and EP), as the host launches them.
LayerComm combined(const LayerComm& a, const LayerComm& b, const LayerComm& c) {
  return LayerComm{a.fwd + b.fwd + c.fwd, a.bwd + b.bwd + c.bwd, a.launches + b.launches + c.launches,
                   a.bwd_launches + b.bwd_launches + c.bwd_launches};
}

// ZeRO-3 / FSDP: per micro-batch and layer, gather the layer's parameters for forward and again
// for backward, and reduce-scatter its gradients; prefetching hides them behind the kernels of
// the layer run before, which run on the SMs the collectives leave while they run. A layer's
// forward therefore runs beside the next layer's gather, its backward beside the previous
// layer's gather and the next layer's reduce-scatter (and FSDP2's copy of the gradients in
// before it); a MoE layer's experts make its collectives the larger. Blocking collectives hide
// nothing and slow nothing. FSDP2's copy out of each gather runs on the compute stream before
// the layer. What a layer of kind `own` (EP collectives `own_ep`) exposes between neighbours
// whose collectives are `before` and `after`; the copies are FSDP's time, the kernels and TP and
// EP collectives counted elsewhere.
// Under ZB-H1 the backward's exposure splits between its passes: the input gradient B needs the
// gathered parameters and runs beside the gather alone, while the reduce-scatter (and the copy in
// before it) waits for the weight gradient W, which completes the gradients (`weight`: the rest
// of the backward's exposure, which the drain's B passes do not carry).
struct ShardedExposure {
  PassPair passes;
  double weight = 0;
};

ShardedExposure sharded_exposure(const spec::Scenario& s, const LinksApart& apart, const LayerKind& own,
                                 const LayerComm& own_ep, const LayerKind& before_kind,
                                 const workload::ShardedLayer& after) {
  const workload::ShardedLayer& before = before_kind.sharded;
  const spec::Strategy& st = s.strategy;
  const workload::ShardedLayer& mine = own.sharded;
  if (st.sharded_collectives == spec::ShardedCollectives::kPerTensorBlocking) {
    return {{mine.gather, mine.gather + full_recompute_fraction(st) * mine.regather + mine.scatter}, mine.scatter};
  }
  const PassTimes& k = own.passes;
  // The gradient group's collectives run beside the passes' exposed TP, CP and EP
  // communication too.
  const LinkSplit links = split_by_links(apart, own.tp, own.cp, own_ep, own.rings);
  const PassStream fwd{k.fwd, k.beside.fwd, k.beside.fwd, links.apart.fwd, links.shared.fwd, links.fwd_side};
  const PassStream bwd{k.bwd + k.recompute, k.beside.bwd + k.beside.recompute,
                       k.beside_two.bwd + k.beside_two.recompute, links.apart.bwd, links.shared.bwd,
                       links.bwd_side, &k.bwd_order};
  // A group of one runs FSDP2's copies on the compute stream (workload::copies_in_turn): the
  // gradients' copy in is exposed, as the copies out are, and so is FSDP1's flattening of the
  // gradients, which the compute stream runs after the kernels.
  const bool copies_in_turn = workload::fsdp_copies_in_turn(s);
  const double beside_copy_in = copies_in_turn ? 0 : after.copy_in;
  const double in_turn = (copies_in_turn ? mine.copy_in : 0) + mine.flatten;
  const double exposed_bwd =
      sharded_backward_s(bwd, before.gather, beside_copy_in, after.scatter, mine.copy_out) - bwd.alone() + in_turn;
  double weight = 0;
  if (st.schedule == spec::Schedule::kZeroBubbleH1) {
    const PassStream input{k.bwd - k.wgrad + k.recompute, k.beside.bwd - k.beside.wgrad + k.beside.recompute,
                           k.beside_two.bwd - k.beside_two.wgrad + k.beside_two.recompute, links.apart.bwd,
                           links.shared.bwd, links.bwd_side, &k.input_order};
    weight = exposed_bwd - (input.overlapped({input.beside_group(before.gather, 1, {0, before.gather})}) - input.alone() +
                            mine.copy_out);
  }
  const double head = forward_head_start(before_kind.passes.fwd, before.copy_out, mine.gather);
  const double exposed_fwd = sharded_forward_s(fwd, after.gather, mine.copy_out, head) - fwd.alone();
  // FSDP's root pre-forward makes the gathers wait for the compute stream as each chunk's forward
  // starts, after its input (workload/build.cpp, anchor_gathers_at_forward_start): the chunk's
  // first gather runs alone and the layer before it in turn without it, so each forward of each
  // of the pp vp chunks adds the gather less what running beside it had cost that layer, spread
  // over the layers. A backward's first gather is prefetched as any other.
  const double chunk_start = std::max(0.0, mine.gather - (exposed_fwd - mine.copy_out));
  const double chunks_per_layer = static_cast<double>(st.pp * st.vp) / s.model.layers;
  return {{exposed_fwd + chunks_per_layer * chunk_start, exposed_bwd}, weight};
}

}  // namespace

LayerKind priced_kind(const spec::Scenario& s, workload::GroupShape tp_group,
                      const cost::GroupLinks& gradient, const PassTimes& passes, bool moe_layer,
                      const LayerComm& ep) {
  const CpRings rings = cp_rings(s, passes);
  const LayerComm tp = tp_comm(s, tp_group, passes), cp = cp_comm(s, rings);
  return {passes, rings, tp, cp, layer_host_s(s, passes, combined(tp, cp, moe_layer ? ep : LayerComm{})),
          workload::sharded_layer(s, moe_layer, gradient), {}};
}

template <bool kMoe>
void price_sharded(const spec::Scenario& s, const LinksApart& apart, const LayerComm& ep, LayerKind& dense,
                   LayerKind& moe) {
  if constexpr (kMoe) {
    const spec::ModelSpec& m = s.model;
    // Layers by their kind and their neighbours' (the first and last count as their own
    // neighbours), as the bits of 4 kind + 2 before + after, each combination priced once.
    int count[8] = {};
    for (int l = 0; l < m.layers; ++l) {
      const bool moe_layer = m.is_moe_layer(l);
      const bool before = l > 0 ? m.is_moe_layer(l - 1) : moe_layer;
      const bool after = l + 1 < m.layers ? m.is_moe_layer(l + 1) : moe_layer;
      ++count[4 * moe_layer + 2 * before + after];
    }
    const auto kind_of = [&](bool is_moe) -> LayerKind& { return is_moe ? moe : dense; };
    PassPair exposed[2];
    double weight[2] = {0, 0}, layers[2] = {0, 0};
    for (int c = 0; c < 8; ++c) {
      if (count[c] == 0) continue;
      const bool kind = c & 4;
      const ShardedExposure e = sharded_exposure(s, apart, kind_of(kind), kind ? ep : LayerComm{},
                                                 kind_of(c & 2), kind_of(c & 1).sharded);
      exposed[kind].fwd += count[c] * e.passes.fwd;
      exposed[kind].bwd += count[c] * e.passes.bwd;
      weight[kind] += count[c] * e.weight;
      layers[kind] += count[c];
    }
    for (int kind : {0, 1}) {
      if (layers[kind] <= 0) continue;
      kind_of(kind).sharded_exposed = {exposed[kind].fwd / layers[kind], exposed[kind].bwd / layers[kind]};
      kind_of(kind).sharded_weight = weight[kind] / layers[kind];
    }
  } else {
    const ShardedExposure e = sharded_exposure(s, apart, dense, {}, dense, dense.sharded);
    dense.sharded_exposed = e.passes;
    dense.sharded_weight = e.weight;
  }
}

template void price_sharded<true>(const spec::Scenario&, const LinksApart&, const LayerComm&, LayerKind&,
                                  LayerKind&);
template void price_sharded<false>(const spec::Scenario&, const LinksApart&, const LayerComm&, LayerKind&,
                                   LayerKind&);

}  // namespace stepcast::analytic
