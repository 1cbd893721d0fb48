// Context parallelism's exchange of keys and values around a layer pass's core attention
// (spec::CpExchange), as both engines lay it out: the simulator's graph (workload/build.cpp,
// run_ops) and the closed form (analytic/layer_passes.cpp, cp_rings and cp_comm).
#pragma once

#include <string_view>

#include "spec/scenario.h"

namespace stepcast::workload {

/// Bytes of one CP rank's chunk of keys, values or both on one TP rank: `head_dim` their width
/// per head, `element_bytes` per element. Their heads are the model's KV heads, or its query
/// heads where it repeats K and V before the attention (Strategy::repeat_kv).
double cp_chunk_bytes(const spec::Scenario& s, double head_dim, double element_bytes);

/// The CP exchange around one pass of the attention (`backward`: its backward; a recomputed
/// forward runs the forward's). `before` runs exposed on the compute stream before the attention
/// and `after` after it, each `launches` NCCL calls; `beside` on a stream of its own from the
/// attention's start, beside its first `share` of it, the rest of the attention waiting for it;
/// `rest` then beside that rest, the op after the attention waiting for it.
struct CpAroundAttention {
  double before = 0, beside = 0, share = 1, rest = 0, after = 0;
  int launches = 0;
  std::string_view beside_name = "cp.ring", after_name = "cp.reduce_scatter";
};
CpAroundAttention cp_around_attention(const spec::Scenario& s, bool backward);

/// Gathered-ring CP (spec::CpExchange::kGatheredRing): the all-gather of one cat(K, V) buffer
/// over the CP group, and one pass of the FP32 dK and dV to the next rank.
double cp_kv_gather_s(const spec::Scenario& s);
double cp_dkv_pass_s(const spec::Scenario& s);

}  // namespace stepcast::workload
