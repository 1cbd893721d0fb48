#include "analytic/operator_costs.h"

#include "workload/step_costs.h"

namespace stepcast::analytic {

std::string_view group_name(OperatorGroup group) {
  constexpr std::string_view kNames[] = {"layer", "moe_layer", "embedding", "head"};
  return kNames[static_cast<int>(group)];
}

std::vector<OperatorCost> operator_costs(const spec::Scenario& s) {
  std::vector<OperatorCost> out;
  // As the estimate averages a layer: with full recomputation of every k-th layer, 1/k re-run.
  // The embedding and the head are never recomputed.
  const double recomputed = workload::recomputed_layer_fraction(s.strategy);
  const workload::OpPricer op_times(s, {});
  const auto add = [&](OperatorGroup group, const workload::LayerOps& ops) {
    const bool layer = group == OperatorGroup::kLayer || group == OperatorGroup::kMoeLayer;
    for (const workload::Op& op : ops) {
      const workload::OpTime t = op_times(op).whole;
      const double share =
          layer ? workload::recompute_share(op, s.strategy.recompute) * recomputed : 0;
      out.push_back(
          {.group = group,
           .name = op.name,
           .kind = op.kind,
           .fwd_s = t.fwd,
           .bwd_s = t.bwd(),
           .recompute_s = t.fwd * share,
           .host_s = t.host_fwd + t.host_bwd() + (share > 0 ? t.host_fwd * recomputed : 0),
           .flops = op.flops * (1 + op.bwd_flops),
           .bytes = op.bytes * (1 + op.bwd_bytes)});
    }
  };
  add(OperatorGroup::kLayer, workload::layer_ops(s, false));
  if (s.model.is_moe()) add(OperatorGroup::kMoeLayer, workload::layer_ops(s, true));
  add(OperatorGroup::kEmbedding, workload::embedding_ops(s));
  add(OperatorGroup::kHead, workload::head_ops(s));
  return out;
}

}  // namespace stepcast::analytic
