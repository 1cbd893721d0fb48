// Collective-communication cost model: seconds for one NCCL collective on a group of GPUs placed
// on a ClusterSpec's topology levels. An alpha-beta model per level, with NCCL's ring (and, for
// all-reduce, tree) and constants measured with nccl-tests (derivation in docs/collectives.md).
//
//   level 2  inter-pod   [ pod 0 .................... ]====[ pod 1 ........ ]   oversubscribed
//   level 1  scale-out   [ node 0 ]--NIC--[ node 1 ]--NIC--[ node 2 ] ...      k NICs in parallel
//   level 0  scale-up    [ g0 g1 g2 g3 g4 g5 g6 g7 ]  NVLink/NVSwitch
//
//   A group {size n, stride s} holds GPUs r, r+s, r+2s, ...; inside one level-l domain of D GPUs
//   sit m_l = clamp(D / s, 1, n) of them. NCCL's ring visits a node's members in turn, then hops
//   to the next node: level 0 carries traffic when m_0 > 1, level l >= 1 when m_(l-1) < n.
//   TP=8 inside a node: m_0 = 8 = n, NVLink only. DP with s = 8: m_0 = 1, every hop on a NIC.
//
// The ring's bus bandwidth is that of its slowest level; NCCL runs one channel per NIC, so a group
// with k members per node gets k NICs (capped by NVLink), and leaving a level-(l-1) domain it gets
// at most its m_(l-1) members' oversubscribed share. Each step pays the slowest level's latency
// plus NCCL's measured per-step overhead; across nodes all-reduce may take NCCL's tree instead.
//
//   double t = cost::collective_time_s(cost::CollectiveKind::kAllReduce, 512e6,
//                                      cost::GroupLayout{.size = 64, .stride = 8}, cluster);
//
// Units: bytes, seconds; bandwidths in the ClusterSpec are bytes/s per GPU per direction.
#pragma once

#include <cstddef>

#include "spec/cluster_spec.h"

namespace stepcast::cost {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };

/// A group of `size` ranks at GPU ids r, r+stride, r+2*stride, ... (stride = product of the
/// degrees of the parallel axes placed inside this one).
struct GroupLayout {
  int size = 1;
  int stride = 1;
};

/// Seconds for one collective of `kind` over `group` on `cluster`. `bytes`: the full buffer
/// (all-reduce: the buffer each rank holds; all-gather: the gathered output; reduce-scatter: the
/// input each rank holds; all-to-all: what each rank sends in total; send-recv: the message).
/// Returns 0 for a group of one rank or bytes <= 0.
/// REQUIRES: group.size >= 1, group.stride >= 1, cluster.levels non-empty with bandwidths > 0
/// (guaranteed by spec validation; a violation is a bug and throws kInternal).
/// Never allocates; O(cluster.levels.size()); thread-safe (pure function).
double collective_time_s(CollectiveKind kind, double bytes, GroupLayout group,
                         const spec::ClusterSpec& cluster);

/// What a group's collectives see of the topology (members per domain, the bandwidths and
/// latencies of the levels they cross), found once for any number of collectives on the group:
/// the closed form prices several on each of its TP and data-parallel groups per estimate.
///
///   const cost::GroupLinks dp(cost::GroupLayout{.size = 64, .stride = 8}, cluster);
///   double t = dp.collective_time_s(cost::CollectiveKind::kReduceScatter, 512e6);
///
/// Same REQUIRES as collective_time_s; refers to `cluster`, which must outlive it.
class GroupLinks {
 public:
  GroupLinks(GroupLayout group, const spec::ClusterSpec& cluster);
  /// collective_time_s over this group.
  double collective_time_s(CollectiveKind kind, double bytes) const;

  // The topology as a ring sees it. All-to-all and send-recv instead send each member's
  // traffic on its own NIC (per_gpu_nic): only their network bandwidth differs.
  struct Span {
    int per_node = 1;            // members per level-0 domain (NICs driven in parallel)
    double nvlink_Bps = 0;       // achieved level-0 bandwidth per member (0: no level-0 hop)
    double network_Bps = 0;      // slowest achieved bandwidth of levels >= 1 (0: none crossed)
    double latency_s = 0;        // slowest hop latency of the levels crossed
    double local_Bps = 0;        // rate of the SMs' local pass, tied to the NVLink channel count
    double outer_latency_s = 0;  // latency of the slowest level >= 1 crossed (tree's inter-node hop)
  };
  const Span& ring() const { return ring_; }
  GroupLayout layout() const { return group_; }
  /// bus_bandwidth_Bps over this group.
  double bus_bandwidth_Bps() const;

 private:
  // Span::network_Bps with every member on its own NIC, found only for the kinds that need it.
  double per_gpu_nic_network_Bps() const;

  GroupLayout group_;
  const spec::ClusterSpec& cluster_;
  Span ring_;
  std::size_t last_level_ = 0;  // the last level >= 1 the group crosses (0: none)
};

/// Bus bandwidth (bytes/s) the ring's slowest level achieves over `group`: the nccl-tests "busbw"
/// at large sizes, before the local pass and latency. 0 for a group of one. Same REQUIRES.
double bus_bandwidth_Bps(GroupLayout group, const spec::ClusterSpec& cluster);

/// HBM bandwidth (bytes/s) a bandwidth-bound collective over `group` takes on each member while it
/// runs: every byte a rank receives is written to its HBM and every byte it sends is read from
/// it, at the ring's bus bandwidth each way (a ring rank sends as much as it receives). A lower
/// bound: NCCL's staging buffers and reductions touch some bytes again. 0 for a group of one.
/// Same REQUIRES.
double collective_hbm_Bps(GroupLayout group, const spec::ClusterSpec& cluster);
/// The same over a group whose links are found already.
double collective_hbm_Bps(const GroupLinks& group);

/// SMs an NCCL collective over `group` holds while it runs: one thread block per channel, each
/// resident on an SM until the kernel ends. Where two or more members share a scale-up domain
/// NCCL's rings run over NVLink with GpuSpec::collective_sms channels; where each member is alone
/// in its domain every ring goes through the member's NIC, and NCCL builds 2 channels, 4 on NICs
/// of 400 Gbit/s (collective.cpp). 0 for a group of one. Same REQUIRES.
int collective_sms(GroupLayout group, const spec::ClusterSpec& cluster);

/// The measured constants of the model, exposed so that tests can re-derive them from the
/// nccl-tests tables and check they agree (tests/cost/collective_test.cpp).
struct CollectiveCalibration {
  double launch_s = 0;           // fixed cost per collective (kernel launch, first handshake)
  double step_s = 0;             // NCCL's overhead per ring/tree step, on top of link latency
  double nvlink_efficiency = 0;  // achieved fraction of levels[0] bandwidth on the wire
  double local_pass = 0;         // extra passes over the buffer at wire speed (reduce/copy in SMs)
  double fill_chunks = 0;        // pipeline fill, in chunks of min(bytes/n, loop_bytes_per_rank)
  double loop_bytes_per_rank = 0;  // NCCL's loop quantum: channels x chunk size, bytes
  double nic_efficiency = 0;       // achieved fraction of scale-out (levels >= 1) bandwidth
};
const CollectiveCalibration& collective_calibration();

}  // namespace stepcast::cost
