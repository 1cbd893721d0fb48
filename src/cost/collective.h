// Collective-communication time: NCCL's ring and tree algorithms priced per topology level with
// latency and bandwidth (an alpha-beta model), calibrated against nccl-tests measurements.
//
//   double t = cost::collective_time_s(CollectiveKind::kAllReduce, 64e6, {8, 1}, cluster);
//
//   node 0: [g0 g1 ... g7]   node 1: [g8 ... g15]      group {size 4, stride 8}: g0 g8 g16 g24,
//     level 0: NVLink          level 0: NVLink          one member per node: each member's traffic
//   ----------- level 1: NICs / switches -----------    crosses level 1 on its own NIC share.
//
// A group of `size` ranks at GPU ids r, r + stride, ... spans level L when its members do not all
// fit in one level-(L-1) domain. Crossing level L, the k members inside each lower domain drive k
// NIC rails at once (NCCL runs one channel per NIC), so the level offers k x bandwidth_per_gpu /
// oversubscription; the ring's bus bandwidth is the least over the levels it crosses.
// docs/collectives.md derives the equations and the calibration.
#pragma once

#include "spec/cluster_spec.h"

namespace stepcast::cost {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };

/// `size` ranks at GPU ids r, r + stride, r + 2 stride, ...
struct GroupLayout {
  int size = 1;
  int stride = 1;
};

/// Seconds for one collective. `bytes` is the full buffer: all-reduce, the buffer each rank holds;
/// all-gather, the gathered output; reduce-scatter, the input each rank holds; all-to-all, what
/// each rank sends in total; send-recv, the message. 0 for a group of one. Allocation-free.
double collective_time_s(CollectiveKind kind, double bytes, GroupLayout group,
                         const spec::ClusterSpec& cluster);

/// Bus bandwidth (bytes/s) the ring achieves over `group`: the nccl-tests "busbw".
double bus_bandwidth_Bps(GroupLayout group, const spec::ClusterSpec& cluster);

}  // namespace stepcast::cost
