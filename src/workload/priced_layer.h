// One kind of layer's operators priced for the execution graph (workload/build.h), once per build:
// each op's times alone on the GPU, beside one collective's kernel and beside two, and its task
// name in each pass, as a step names millions of tasks from these few.
//
//   const PricedLayer dense = price_layer(layer_ops(s, false), s, sharded_layer(s, false));
//   dense.times[i].fwd;  dense.name(i, OpPass::kForward);   // "mlp_up.fwd"
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "spec/scenario.h"
#include "workload/operators.h"
#include "workload/step_costs.h"

namespace stepcast::workload {

/// The passes in which an operator's kernels run.
enum class OpPass { kForward, kRecompute, kBackward, kWeightGradient };
inline constexpr std::size_t kOpPasses = 4;

struct PricedLayer {
  LayerOps ops;
  std::array<OpTime, kMaxOps> times{}, beside{}, beside_two{};
  std::array<std::array<std::string, kOpPasses>, kMaxOps> names{};
  ShardedLayer sharded;  // its ZeRO-3 collectives, a MoE layer's the larger

  const std::string& name(std::size_t op, OpPass pass) const { return names[op][static_cast<std::size_t>(pass)]; }
};

/// `ops` priced for `s`, its ZeRO-3 collectives `sharded` (none for the embedding and head).
PricedLayer price_layer(const LayerOps& ops, const spec::Scenario& s, const ShardedLayer& sharded = {});

}  // namespace stepcast::workload
