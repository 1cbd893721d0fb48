#include "workload/priced_layer.h"

#include <fmt/format.h>

namespace stepcast::workload {
namespace {

// The suffix of each op's task name in each pass, in OpPass's order.
constexpr const char* kPassSuffix[kOpPasses] = {"fwd", "recompute", "bwd", "wgrad"};

}  // namespace

PricedLayer price_layer(const LayerOps& ops, const spec::Scenario& s, const ShardedLayer& sharded) {
  PricedLayer p{ops, {}, {}, {}, {}, sharded};
  const OpPricer op_times(s, layer_overlap(s, cost::Shares::kBesideTwo));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpTimes t = op_times(ops[i]);
    p.times[i] = t.whole;
    p.beside[i] = t.beside;
    p.beside_two[i] = t.beside_two;
    for (std::size_t pass = 0; pass < kOpPasses; ++pass)
      p.names[i][pass] = fmt::format("{}.{}", ops[i].name, kPassSuffix[pass]);
  }
  return p;
}

}  // namespace stepcast::workload
