// The closed form's kinds of layer (analytic::estimate): a dense or MoE layer priced for one
// micro-batch, with the ZeRO-3 exposure of each beside its neighbours in the model. Internal to
// analytic.
#pragma once

#include "analytic/layer_passes.h"
#include "spec/scenario.h"
#include "workload/step_costs.h"

namespace stepcast::analytic {

// A kind of layer (dense or MoE) as priced for one micro-batch: its kernels, its exposed TP and
// CP communication and host time, ZeRO-3's collectives of one such layer, and what those expose
// per layer on average beside its neighbours in the model.
struct LayerKind {
  const PassTimes& passes;
  CpRings rings;
  LayerComm tp, cp;
  PassPair host;
  workload::ShardedLayer sharded;
  PassPair sharded_exposed;
  double sharded_weight = 0;  // the part of sharded_exposed.bwd ZB-H1's weight-gradient pass carries
};

// A kind of layer whose kernels are `passes`, its TP collectives on the group `tp` and ZeRO-3's on
// the gradient group's links `gradient`; a MoE layer's EP collectives `ep` are its host's too.
LayerKind priced_kind(const spec::Scenario& s, workload::GroupShape tp, const cost::GroupLinks& gradient,
                      const PassTimes& passes, bool moe_layer, const LayerComm& ep);

// Each kind's ZeRO-3 exposure per layer, over the kinds of its neighbours in the model (a dense
// model's are dense): sets `sharded_exposed` and `sharded_weight` of `dense` and, with kMoe, `moe`.
template <bool kMoe>
void price_sharded(const spec::Scenario& s, const LinksApart& apart, const LayerComm& ep, LayerKind& dense,
                   LayerKind& moe);

}  // namespace stepcast::analytic
