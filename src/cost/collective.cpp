#include "cost/collective.h"

#include <algorithm>
#include <bit>
#include <cstddef>

#include "core/error.h"

namespace stepcast::cost {
namespace {

// Scale-up constants, fitted on 2026-11-21 to nccl-tests all_reduce_perf on 2..8 A100 SXM4 in one
// NVLink3/NVSwitch node (300 GB/s per GPU per direction), out-of-place times of every size
// >= 8 MiB in ../shared/validation/nccl_allreduce_a100/AR_GPU{2..8}_1M_1024M_LUT (vTrain, MIT
// licence). One model for all seven tables, minimax relative error (Lawson's iteratively reweighted
// least squares, 200 rounds), worst 9.9%; tests/cost/collective_test.cpp re-derives every value:
//   t = launch + 2(n-1) (step + 1 us NVLink hop) + [2(n-1)/n + local_pass] S / (eta 300 GB/s)
//         + fill min(S/n, loop_bytes_per_rank) / (eta 300 GB/s)
// The same efficiencies are applied to NVLink4/5 (H100, B200): no table for them was available.
constexpr double kLaunchS = 19.2116e-6;
constexpr double kStepS = 4.03018e-6 - 1e-6;  // the fit's 4.03 us per step less the preset 1 us hop
constexpr double kNvlinkEfficiency = 273.851e9 / 300e9;
// Why 2 GPUs reach 197 GB/s busbw and 8 reach 229: the ring's wire traffic per rank grows as
// 2(n-1)/n, but the SMs' reduce-and-copy pass over the input and output (each byte read once and
// written once whatever n is) does not overlap with it. That n-independent term is ~32% of the
// 2-GPU wire time and ~18% of the 8-GPU one. The NVSwitch gives every ring neighbour the full 12
// links, so channel count and per-link rate do not depend on n; no per-n fit is needed.
constexpr double kLocalPass = 0.314988;
// NCCL loops over the buffer in steps of channels x chunk per rank; the tables show this quantum
// as a sawtooth with period n x 3 MiB (busbw drops at 51, 75, 99 ... MiB on 8 GPUs, at 33, 48,
// 63 ... MiB on 5). A ring pipeline costs ~2.3 chunk times to fill before it streams, and a chunk
// grows with the buffer until the loop quantum is reached.
constexpr double kLoopBytesPerRank = 3.0 * 1024 * 1024;
constexpr double kFillChunks = 2.28467;
// Scale-out: achieved nccl-tests busbw / NIC line rate at large sizes, multi-node, ring:
//   A100 + 4 x HDR 200 Gbit/s per node, 2 nodes: 86 of 100 GB/s = 0.86 (github.com/NVIDIA/nccl
//     issue 1048, 2023-11); 3 nodes: peak 96 of 100 GB/s = 0.96 (NVIDIA/nccl-tests issue 119);
//   H100 + NDR 400 Gbit/s: "you should see 46-48 GB/s per NIC" of 50, 0.92-0.96 (NCCL maintainer,
//     NVIDIA/nccl-tests issue 290, 2025-03).
// 0.92 is the median of these reports. The NIC transfer overlaps the SMs' local pass (the GPU
// side waits on the network), so the two are combined with max, not summed.
constexpr double kNicEfficiency = 0.92;

constexpr CollectiveCalibration kCalibration{kLaunchS,      kStepS,      kNvlinkEfficiency,
                                             kLocalPass,    kFillChunks, kLoopBytesPerRank,
                                             kNicEfficiency};

// Members of the group inside one domain of `level`: the domain spans domain_gpus / stride of the
// group's GPU ids (r, r + stride, ...), at least one and at most all of them.
int members_per_domain(const spec::TopologyLevel& level, GroupLayout g) {
  if (level.domain_gpus <= 0) return g.size;
  return std::clamp(level.domain_gpus / g.stride, 1, g.size);
}

using Span = GroupLinks::Span;

double bottleneck_Bps(const Span& s) {
  if (s.nvlink_Bps > 0 && s.network_Bps > 0) return std::min(s.nvlink_Bps, s.network_Bps);
  return s.nvlink_Bps > 0 ? s.nvlink_Bps : s.network_Bps;
}

// Bandwidth time of a ring that moves `wire` bytes per rank and makes `local` bytes' worth of
// local passes: the NVLink hops and the SMs' pass run in series (the fit), the NIC hops alongside.
double ring_transfer_s(const Span& s, double wire, double local) {
  const double gpu_side = (s.nvlink_Bps > 0 ? wire / s.nvlink_Bps : 0) + local / s.local_Bps;
  const double network = s.network_Bps > 0 ? wire / s.network_Bps : 0;
  return std::max(gpu_side, network);
}

double fill_s(const Span& s, double chunk) {
  return kFillChunks * std::min(chunk, kLoopBytesPerRank) / bottleneck_Bps(s);
}

}  // namespace

const CollectiveCalibration& collective_calibration() { return kCalibration; }

GroupLinks::GroupLinks(GroupLayout g, const spec::ClusterSpec& c) : group_(g), cluster_(c) {
  STEPCAST_ASSERT(g.size >= 1 && g.stride >= 1, "group layouts come from validated strategies");
  STEPCAST_ASSERT(!c.levels.empty(), "a validated ClusterSpec has at least one level");
  const spec::TopologyLevel& scale_up = c.levels[0];
  STEPCAST_ASSERT(scale_up.bandwidth_per_gpu_Bps > 0, "a validated level has a bandwidth");
  Span& s = ring_;
  s.per_node = members_per_domain(scale_up, g);
  s.local_Bps = kNvlinkEfficiency * scale_up.bandwidth_per_gpu_Bps;
  if (s.per_node > 1) {
    s.nvlink_Bps = s.local_Bps / std::max(1.0, scale_up.oversubscription);
    s.latency_s = scale_up.latency_s;
  }
  // NCCL runs one channel per NIC: k members per node drive k NICs at once. Each ring channel
  // leaves a level-(l-1) domain once, so a ring is held to the smaller of its k rails and the
  // domain's oversubscribed share for its m_(l-1) members there (for l = 1 both give
  // k B_1 / o_1).
  const double rails = s.per_node;
  int inner = s.per_node;
  for (std::size_t l = 1; l < c.levels.size() && inner < g.size; ++l) {
    const spec::TopologyLevel& level = c.levels[l];
    STEPCAST_ASSERT(level.bandwidth_per_gpu_Bps > 0, "a validated level has a bandwidth");
    const double share = inner * level.bandwidth_per_gpu_Bps / std::max(1.0, level.oversubscription);
    const double bw = kNicEfficiency * std::min(rails * level.bandwidth_per_gpu_Bps, share);
    s.network_Bps = s.network_Bps > 0 ? std::min(s.network_Bps, bw) : bw;
    s.latency_s = std::max(s.latency_s, level.latency_s);
    s.outer_latency_s = std::max(s.outer_latency_s, level.latency_s);
    inner = members_per_domain(level, g);
    last_level_ = l;
  }
}

// All-to-all and send-recv send every member's traffic on its own NIC, all members at once:
// B_l / o_l each, on the levels the ring crosses.
double GroupLinks::per_gpu_nic_network_Bps() const {
  double network_Bps = 0;
  for (std::size_t l = 1; l <= last_level_; ++l) {
    const spec::TopologyLevel& level = cluster_.levels[l];
    const double bw = kNicEfficiency * (level.bandwidth_per_gpu_Bps / std::max(1.0, level.oversubscription));
    network_Bps = network_Bps > 0 ? std::min(network_Bps, bw) : bw;
  }
  return network_Bps;
}

// A group of one crosses no link: neither bandwidth is set.
double GroupLinks::bus_bandwidth_Bps() const { return bottleneck_Bps(ring_); }

double bus_bandwidth_Bps(GroupLayout g, const spec::ClusterSpec& c) {
  STEPCAST_ASSERT(g.size >= 1 && g.stride >= 1, "group layouts come from validated strategies");
  if (g.size <= 1) return 0;
  return GroupLinks(g, c).bus_bandwidth_Bps();
}

double collective_hbm_Bps(GroupLayout g, const spec::ClusterSpec& c) { return 2 * bus_bandwidth_Bps(g, c); }

double collective_hbm_Bps(const GroupLinks& group) { return 2 * group.bus_bandwidth_Bps(); }

// Channels NCCL builds for a communicator with one GPU per node (src/graph/search.cc and
// connect.cc of NCCL 2.18-2.27): the graph search finds one ring through the member's NIC, at the
// fastest speed of its table the NIC carries; ncclTopoDupChannels doubles the ring where that
// speed is 25 GB/s or more (a NIC of at least 30 GB/s: 400 Gbit/s, not 200), and ncclTopoPostset
// doubles every channel. Init logs of such communicators on 100 Gbit/s NICs and sockets print
// "2 coll channels".
constexpr int kNicRingChannels = 2;
constexpr double kDuplicatedRingNic_Bps = 30e9;

int collective_sms(GroupLayout g, const spec::ClusterSpec& c) {
  STEPCAST_ASSERT(!c.levels.empty(), "a validated ClusterSpec has at least one level");
  if (g.size <= 1) return 0;
  const int sms = c.gpu.collective_sms;
  if (members_per_domain(c.levels[0], g) > 1 || c.levels.size() < 2) return sms;
  const bool duplicated = c.levels[1].bandwidth_per_gpu_Bps >= kDuplicatedRingNic_Bps;
  return std::min(sms, duplicated ? 2 * kNicRingChannels : kNicRingChannels);
}

double collective_time_s(CollectiveKind kind, double bytes, GroupLayout g,
                         const spec::ClusterSpec& c) {
  return GroupLinks(g, c).collective_time_s(kind, bytes);
}

double GroupLinks::collective_time_s(CollectiveKind kind, double bytes) const {
  const GroupLayout g = group_;
  const spec::ClusterSpec& c = cluster_;
  if (g.size <= 1 || bytes <= 0) return 0;
  const double n = g.size;
  const bool per_gpu_nic = kind == CollectiveKind::kAllToAll || kind == CollectiveKind::kSendRecv;
  Span s = ring_;
  if (per_gpu_nic) s.network_Bps = per_gpu_nic_network_Bps();
  const double step = kStepS + s.latency_s;
  switch (kind) {
    case CollectiveKind::kAllReduce: {
      // Ring: reduce-scatter then all-gather, 2(n-1) steps, 2(n-1)/n S on the wire per rank; the
      // local pass reads the input and writes the output once (the fitted unit).
      const double transfer =
          ring_transfer_s(s, 2 * (n - 1) / n * bytes, kLocalPass * bytes) + fill_s(s, bytes / n);
      const double ring = kLaunchS + 2 * (n - 1) * step + transfer;
      if (s.per_node >= g.size) return ring;  // NCCL does not use the tree inside one node
      // Double binary tree across nodes (NCCL >= 2.4): a chain inside each node, then
      // ceil(log2(nodes)) levels up and down. At large sizes it reaches about the ring's bus
      // bandwidth; NCCL's tuner picks whichever it predicts to be faster.
      const int nodes = static_cast<int>((std::int64_t{g.size} + s.per_node - 1) / s.per_node);
      const double depth = std::bit_width(static_cast<unsigned>(nodes - 1));
      const double chain_step = kStepS + c.levels[0].latency_s;
      const double tree = kLaunchS + 2 * depth * (kStepS + s.outer_latency_s) +
                          2 * (s.per_node - 1) * chain_step + transfer;
      return std::min(ring, tree);
    }
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter: {
      // Ring only in NCCL: n-1 steps, (n-1)/n S per rank; the local pass touches S + S/n bytes,
      // (1 + 1/n)/2 of an all-reduce's 2S.
      const double transfer =
          ring_transfer_s(s, (n - 1) / n * bytes, kLocalPass * (1 + 1 / n) / 2 * bytes);
      return kLaunchS + (n - 1) * step + transfer + fill_s(s, bytes / n);
    }
    case CollectiveKind::kAllToAll: {
      // NCCL's all-to-all is n-1 rounds of paired send/recv. A rank sends S/n to each peer: the
      // (per_node - 1) peers in its node over NVLink, the others over its own NIC share, both at
      // once. The local pass reads S and writes S like an all-reduce.
      const double intra = s.nvlink_Bps > 0 ? (s.per_node - 1) / n * bytes / s.nvlink_Bps : 0;
      const double gpu_side = intra + kLocalPass * bytes / s.local_Bps;
      const double network = s.network_Bps > 0 ? (n - s.per_node) / n * bytes / s.network_Bps : 0;
      return kLaunchS + (n - 1) * step + std::max(gpu_side, network) + fill_s(s, bytes / n);
    }
    case CollectiveKind::kSendRecv: {
      // One message over the slowest hop between neighbours; the sender reads it and the
      // receiver writes it, half an all-reduce's local pass on each GPU.
      const double transfer = ring_transfer_s(s, bytes, kLocalPass / 2 * bytes);
      return kLaunchS + step + transfer + fill_s(s, bytes);
    }
  }
  STEPCAST_ASSERT(false, "every CollectiveKind is handled above");
  return 0;
}

}  // namespace stepcast::cost
