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

int stride_of(const spec::Strategy& st, spec::Axis axis) {
  int stride = 1;
  for (spec::Axis a : st.placement) {
    if (a == axis) break;
    stride *= degree(st, a);
  }
  return stride;
}

}  // namespace

GroupShape group_of(const spec::Strategy& st, spec::Axis axis) {
  if (axis == spec::Axis::kEp) return {st.ep, stride_of(st, spec::Axis::kDp)};
  return {degree(st, axis), stride_of(st, axis)};
}

GroupShape gradient_group(const spec::Strategy& st) {
  if (st.cp == 1) return group_of(st, spec::Axis::kDp);
  if (st.dp == 1) return group_of(st, spec::Axis::kCp);
  return {st.dp * st.cp, std::min(stride_of(st, spec::Axis::kDp), stride_of(st, spec::Axis::kCp))};
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

bool crosses_gradient_links(const spec::Strategy& st, const spec::ClusterSpec& cluster, spec::Axis axis) {
  const GroupShape group = group_of(st, axis);
  return group.size > 1 && spanned_level(group, cluster) == spanned_level(gradient_group(st), cluster);
}

}  // namespace stepcast::workload
