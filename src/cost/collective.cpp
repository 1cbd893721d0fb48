#include "cost/collective.h"

#include <algorithm>
#include <cmath>

namespace stepcast::cost {
namespace {

// Calibration from nccl-tests all_reduce_perf on 2..8 A100 SXM4 in one NVLink3/NVSwitch node
// (../shared/validation/nccl_allreduce_a100, vTrain, MIT licence), out-of-place times for sizes
// >= 8 MiB, fitted jointly to minimise the worst relative error (tests/cost/collective_test.cpp
// re-derives it):
//   time = kBaseLatency + steps * kStepLatency + traffic / busbw(n),
//   busbw(n) = kLinkEfficiency * link bandwidth * (1 - kSmallRingLoss / n).
// 251.5 GB/s of 300 GB/s per direction gives kLinkEfficiency = 0.838. The 1/n loss: each of the n
// ring steps ends with a synchronisation whose cost is a fixed share of a chunk, so short rings
// spend a larger fraction of the time at step boundaries (measured busbw 194 GB/s at 2 GPUs,
// 228 GB/s at 8). The same efficiency is applied to NIC levels: no multi-node table was
// available to measure them separately.
constexpr double kLinkEfficiency = 251.5 / 300.0;
constexpr double kSmallRingLoss = 0.4266;
constexpr double kBaseLatency_s = 45.7e-6;
constexpr double kStepLatency_s = 3.26e-6 - 1e-6;  // the fitted 3.26 us less the 1 us NVLink hop of the presets

int members_per_domain(const spec::TopologyLevel& level, GroupLayout g) {
  if (level.domain_gpus <= 0) return g.size;
  return std::clamp(level.domain_gpus / g.stride, 1, g.size);
}

// Index of the innermost level whose domain holds the whole group.
size_t outermost_level(GroupLayout g, const spec::ClusterSpec& c) {
  for (size_t l = 0; l < c.levels.size(); ++l) {
    if (members_per_domain(c.levels[l], g) >= g.size) return l;
  }
  return c.levels.empty() ? 0 : c.levels.size() - 1;
}

// Per-member bandwidth (bytes/s, one direction) of each level the group crosses, the least.
double bottleneck_Bps(GroupLayout g, const spec::ClusterSpec& c, size_t top) {
  double least = c.levels[0].bandwidth_per_gpu_Bps;
  for (size_t l = 1; l <= top; ++l) {
    const spec::TopologyLevel& level = c.levels[l];
    const int inside = members_per_domain(c.levels[l - 1], g);
    least = std::min(least, inside * level.bandwidth_per_gpu_Bps / std::max(1.0, level.oversubscription));
  }
  return least;
}

double step_latency_s(const spec::ClusterSpec& c, size_t top) {
  return kStepLatency_s + c.levels[top].latency_s;
}

}  // namespace

double bus_bandwidth_Bps(GroupLayout g, const spec::ClusterSpec& c) {
  if (c.levels.empty() || g.size <= 1) return 0;
  const size_t top = outermost_level(g, c);
  return kLinkEfficiency * bottleneck_Bps(g, c, top) * (1 - kSmallRingLoss / g.size);
}

double collective_time_s(CollectiveKind kind, double bytes, GroupLayout g, const spec::ClusterSpec& c) {
  if (g.size <= 1 || bytes <= 0 || c.levels.empty()) return 0;
  const double n = g.size;
  const size_t top = outermost_level(g, c);
  const double busbw = bus_bandwidth_Bps(g, c);
  const double step = step_latency_s(c, top);
  switch (kind) {
    case CollectiveKind::kAllReduce: {
      const double ring = kBaseLatency_s + 2 * (n - 1) * step + 2 * (n - 1) / n * bytes / busbw;
      if (top == 0) return ring;
      // Across nodes NCCL may pick its double binary tree: log2 latency, about the ring's bus
      // bandwidth at large sizes (NCCL 2.4 release notes); its tuner takes the faster.
      const double tree = kBaseLatency_s + 2 * std::log2(n) * step + 2 * (n - 1) / n * bytes / busbw;
      return std::min(ring, tree);
    }
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      // Ring only in NCCL: n - 1 steps, each rank moving (n - 1) / n of the buffer.
      return kBaseLatency_s + (n - 1) * step + (n - 1) / n * bytes / busbw;
    case CollectiveKind::kAllToAll: {
      // Every rank sends bytes / n to each peer at once; the part leaving a domain crosses its NIC.
      double slowest = 0;
      for (size_t l = 0; l <= top; ++l) {
        const int inside_lower = l == 0 ? 1 : members_per_domain(c.levels[l - 1], g);
        const int inside = members_per_domain(c.levels[l], g);
        const double leaving = (inside - inside_lower) / n * bytes;
        const spec::TopologyLevel& level = c.levels[l];
        const double bw = kLinkEfficiency * level.bandwidth_per_gpu_Bps / std::max(1.0, level.oversubscription);
        slowest = std::max(slowest, leaving / bw);
      }
      return kBaseLatency_s + (n - 1) * step_latency_s(c, 0) + slowest;
    }
    case CollectiveKind::kSendRecv: {
      const spec::TopologyLevel& level = c.levels[top];
      const double bw = kLinkEfficiency * level.bandwidth_per_gpu_Bps / std::max(1.0, level.oversubscription);
      return kBaseLatency_s + step + bytes / bw;
    }
  }
  return 0;
}

}  // namespace stepcast::cost
