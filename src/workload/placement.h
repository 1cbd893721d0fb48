// Where the ranks of each parallel group sit: GPUs are numbered node by node, and the strategy's
// placement order lays the axes onto them innermost first (default TP, CP, EP, DP, PP: TP inside
// a node, PP across nodes). A group of axis X holds degree(X) ranks spaced by the product of the
// degrees of the axes placed inside X.
//
//   placement tp,cp,dp,pp with tp 8, cp 1, dp 4, pp 2:  TP group stride 1 (one node),
//   DP group stride 8 (one rank per node), PP group stride 32.
#pragma once

#include <array>
#include <cstddef>

#include "spec/cluster_spec.h"
#include "spec/strategy.h"

namespace stepcast::workload {

struct GroupShape {
  int size = 1;
  int stride = 1;
};

/// The group of `axis`. Expert parallelism is carved out of data parallelism (Megatron): the EP
/// group takes the DP position with ep ranks; the DP axis keeps its full degree.
GroupShape group_of(const spec::Strategy& st, spec::Axis axis);

/// The group over which gradients are reduced and ZeRO shards: DP and CP ranks together.
GroupShape gradient_group(const spec::Strategy& st);

/// Its size, without placing it: ZeRO's shards.
inline int gradient_ranks(const spec::Strategy& st) { return st.dp * st.cp; }

/// Every axis's group (group_of) and the gradient group, placed in one walk of the placement
/// order: for callers that ask for several (the closed form prices collectives on most).
struct ParallelGroups {
  std::array<GroupShape, 5> axes;  // by spec::Axis
  GroupShape gradient;
  const GroupShape& of(spec::Axis axis) const { return axes[static_cast<std::size_t>(axis)]; }
};
ParallelGroups parallel_groups(const spec::Strategy& st);

/// The lowest topology level of `cluster` one of whose domains holds the whole group (its
/// size * stride consecutive GPU ids): the level whose links the group's traffic crosses.
int spanned_level(GroupShape group, const spec::ClusterSpec& cluster);

/// Whether the group of `axis` (of more than one rank) crosses the links the gradient group's
/// collectives cross: the same spanned level, so that their traffic shares them.
bool crosses_gradient_links(const ParallelGroups& groups, const spec::ClusterSpec& cluster, spec::Axis axis);

}  // namespace stepcast::workload
