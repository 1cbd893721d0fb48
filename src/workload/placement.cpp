#include "workload/placement.h"

#include <algorithm>

namespace stepcast::workload {
namespace {

int degree(const spec::Strategy& st, spec::Axis axis) {
  switch (axis) {
    case spec::Axis::kTp: return st.tp;
    case spec::Axis::kCp: return st.cp;
    case spec::Axis::kEp: return 1;  // shares the DP ranks
    case spec::Axis::kDp: return st.dp;
    case spec::Axis::kPp: return st.pp;
  }
  return 1;
}

// Each axis's stride: the product of the degrees of the axes placed inside it (of all of them
// for an axis the order leaves out), found in one walk of the order.
class Strides {
 public:
  explicit Strides(const spec::Strategy& st) {
    for (spec::Axis a : st.placement) {
      by_axis_[static_cast<std::size_t>(a)] = all_;
      all_ *= degree(st, a);
    }
  }
  int of(spec::Axis axis) const {
    const int stride = by_axis_[static_cast<std::size_t>(axis)];
    return stride > 0 ? stride : all_;
  }

 private:
  std::array<int, 5> by_axis_{};  // 0: left out
  int all_ = 1;
};

GroupShape group_with(const spec::Strategy& st, spec::Axis axis, const Strides& strides) {
  if (axis == spec::Axis::kEp) return {st.ep, strides.of(spec::Axis::kDp)};
  return {degree(st, axis), strides.of(axis)};
}

GroupShape gradient_group_with(const spec::Strategy& st, const Strides& strides) {
  if (st.cp == 1) return group_with(st, spec::Axis::kDp, strides);
  if (st.dp == 1) return group_with(st, spec::Axis::kCp, strides);
  return {gradient_ranks(st), std::min(strides.of(spec::Axis::kDp), strides.of(spec::Axis::kCp))};
}

}  // namespace

GroupShape group_of(const spec::Strategy& st, spec::Axis axis) { return group_with(st, axis, Strides(st)); }

GroupShape gradient_group(const spec::Strategy& st) { return gradient_group_with(st, Strides(st)); }

ParallelGroups parallel_groups(const spec::Strategy& st) {
  const Strides strides(st);
  const auto group = [&](spec::Axis axis) { return group_with(st, axis, strides); };
  return {{group(spec::Axis::kTp), group(spec::Axis::kCp), group(spec::Axis::kEp), group(spec::Axis::kDp),
           group(spec::Axis::kPp)},
          gradient_group_with(st, strides)};
}

int spanned_level(GroupShape group, const spec::ClusterSpec& cluster) {
  const double span = static_cast<double>(group.size) * group.stride;
  const int levels = static_cast<int>(cluster.levels.size());
  for (int l = 0; l < levels; ++l) {
    const int domain = cluster.levels[static_cast<std::size_t>(l)].domain_gpus;
    if (domain == 0 || span <= domain) return l;
  }
  return levels - 1;
}

bool crosses_gradient_links(const ParallelGroups& groups, const spec::ClusterSpec& cluster, spec::Axis axis) {
  const GroupShape group = groups.of(axis);
  return group.size > 1 && spanned_level(group, cluster) == spanned_level(groups.gradient, cluster);
}

}  // namespace stepcast::workload
