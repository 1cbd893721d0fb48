// Where the kernel time of one micro-batch goes, operator by operator: what `estimate --ops` and
// `simulate --ops` print. Each operator is priced as both engines price it (workload::op_times),
// alone on the whole GPU: the slowdown beside collectives and the exposed communication are the
// step's, in its breakdown, not any one operator's.
//
//   for (const analytic::OperatorCost& c : analytic::operator_costs(s)) total += c.kernel_s();
//
// Units: seconds, FLOPs and bytes per micro-batch on one GPU. A layer's operators run once per
// layer, the embedding's on the first pipeline stage, the head's on the last.
#pragma once

#include <string_view>
#include <vector>

#include "spec/scenario.h"
#include "workload/operators.h"

namespace stepcast::analytic {

enum class OperatorGroup { kLayer, kMoeLayer, kEmbedding, kHead };

/// "layer", "moe_layer", "embedding" or "head".
std::string_view group_name(OperatorGroup group);

struct OperatorCost {
  OperatorGroup group = OperatorGroup::kLayer;
  std::string_view name;
  workload::OpKind kind = workload::OpKind::kMemory;
  double fwd_s = 0;
  double bwd_s = 0;
  // The forward re-run in backward, averaged over the layers (recompute mode and interval); 0
  // for the embedding and the head, which no recompute mode re-runs.
  double recompute_s = 0;
  double host_s = 0;  // host seconds launching the op's kernels in every pass it runs
  double flops = 0;   // forward and backward
  double bytes = 0;   // HBM bytes read and written, forward and backward
  double kernel_s() const { return fwd_s + bwd_s + recompute_s; }
};

/// The operators of a dense layer, of a MoE layer (MoE models), of the embedding and of the head,
/// in that order and in each group in the order they run forward.
/// REQUIRES: s passed spec::complete_and_validate.
std::vector<OperatorCost> operator_costs(const spec::Scenario& s);

}  // namespace stepcast::analytic
