// Scenario: what is trained (ModelSpec), where (ClusterSpec, number of GPUs), how (Strategy).
// Readers and the CLI fill one in; complete_and_validate() derives what was left open and checks
// that the parts agree before any model code sees it.
//
//   spec::Scenario s{model_preset("llama3.1-8b"), cluster_preset("dgx-h100"), {}, 64};
//   s.strategy.tp = 8;
//   s.strategy.global_batch = 512;
//   s.strategy.seq_len = 8192;
//   s = spec::complete_and_validate(std::move(s));  // s.strategy.dp == 8
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/cluster_spec.h"
#include "spec/model_spec.h"
#include "spec/strategy.h"

namespace stepcast::spec {

struct Scenario {
  ModelSpec model;
  ClusterSpec cluster;
  Strategy strategy;
  int gpus = 0;
};

/// Fills derived fields (dp = gpus / (tp * pp * cp) when dp is 0; schedule kInterleaved when
/// vp > 1) and checks every rule a strategy must satisfy against the model and cluster: degrees
/// >= 1, tp * pp * cp * dp == gpus, tp divides heads and kv_heads, pp * vp <= layers (stages may be uneven), dp *
/// micro_batch divides global_batch, 2 * cp divides seq_len when cp > 1 (ring attention's
/// load-balanced chunks), ep divides experts and dp (experts are sharded over the data-parallel
/// ranks, as in Megatron), zero_stage in 0..3, gpus <= cluster.max_gpus when that is set, and
/// interleaving only with pp > 1 and vp > 1, never with gpipe.
/// Collects all violations and throws one Error (kInvalidInput): a single one is the message; two
/// or more follow an "N problems with the scenario:" line, one per line, in a fixed order. Each
/// says what would be valid ("tp 3 does not divide 32 heads; valid tp on this model: 1, 2, 4, 8").
/// Not fitting in memory is not a violation (workload/memory.h answers that).
/// Returns the completed scenario.
Scenario complete_and_validate(Scenario scenario);

/// GPUs one data-parallel replica spans, tp * pp * cp, or nullopt where that is more than `gpus`
/// (no data-parallel degree fits then). Degrees below 1 count as 1. Never overflows, whatever
/// the degrees.
std::optional<std::int64_t> replica_gpus(const Strategy& st, int gpus);

/// Every field of `s`, one `path = value` per line in declaration order (doubles in shortest
/// round-trip form, enums by their CLI names): a stable text for golden tests and debugging.
std::string dump(const Scenario& s);

/// Enumerator names as the CLI and YAML spell them ("swiglu", "zb-h1", "selective", "bf16", "tp").
const char* name(MlpKind k);
const char* name(NormKind k);
const char* name(AttentionKernel k);
const char* name(Elementwise k);
const char* name(OptimizerStep k);
const char* name(PositionKind k);
const char* name(Schedule k);
const char* name(Recompute k);
const char* name(Dtype k);
const char* name(PipelineTransfers k);
const char* name(CpExchange k);
const char* name(GradSync k);
const char* name(ShardedCollectives k);
const char* name(GradAccumulation k);
const char* name(Axis k);
/// A placement as --placement spells it, innermost first: "tp,cp,ep,dp,pp".
std::string name(const std::vector<Axis>& placement);

}  // namespace stepcast::spec
