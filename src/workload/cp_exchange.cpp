#include "workload/cp_exchange.h"

#include "workload/operators.h"
#include "workload/placement.h"
#include "workload/step_costs.h"

namespace stepcast::workload {
namespace {

using cost::CollectiveKind;

// Keys and values together, the width of one head of each.
double kv_width(const spec::ModelSpec& m) { return m.effective_head_dim() + m.value_head_dim(); }

// One ring-attention step: one rank's K and V chunk to its neighbour.
double cp_ring_step_s(const spec::Scenario& s) {
  const double kv = cp_chunk_bytes(s, kv_width(s.model), activation_bytes(s.strategy));
  return collective_s(CollectiveKind::kSendRecv, kv, group_of(s.strategy, spec::Axis::kCp), s);
}

// K and V each one collective of `kind` over the CP group: the chunks gathered whole before the
// attention (kAllGather) or dK and dV reduce-scattered after its backward (kReduceScatter). The
// gathered output and the scattered input are the whole sequence's: cp chunks.
double cp_kv_collectives_s(const spec::Scenario& s, CollectiveKind kind) {
  const spec::ModelSpec& m = s.model;
  const GroupShape cp = group_of(s.strategy, spec::Axis::kCp);
  const double e = activation_bytes(s.strategy);
  return collective_s(kind, cp.size * cp_chunk_bytes(s, m.effective_head_dim(), e), cp, s) +
         collective_s(kind, cp.size * cp_chunk_bytes(s, m.value_head_dim(), e), cp, s);
}

// Ring attention (Transformer Engine's p2p): cp - 1 steps, each one chunk of K and V to the next
// rank; the backward passes K and V again and returns dK and dV the same way.
CpAroundAttention ring(const spec::Scenario& s, bool backward) {
  CpAroundAttention x;
  x.beside = (s.strategy.cp - 1.0) * (backward ? 2 : 1) * cp_ring_step_s(s);
  return x;
}

// Llama 3's: K and V gathered before the attention and, in backward, dK and dV reduce-scattered
// after it, each tensor its own NCCL call.
CpAroundAttention all_gather(const spec::Scenario& s, bool backward) {
  CpAroundAttention x;
  x.before = cp_kv_collectives_s(s, CollectiveKind::kAllGather);
  if (backward) x.after = cp_kv_collectives_s(s, CollectiveKind::kReduceScatter);
  x.launches = 2;
  return x;
}

// PyTorch's (_attention.py, _templated_ring_attention and its backward, with _AllGatherRotater):
// the gather issued at step 0, beside that step's 1/cp of the attention; in backward the
// accumulated dK, dV passed after each step (_AllToAllRotater), beside the next step, the last
// waited for after the loop.
CpAroundAttention gathered_ring(const spec::Scenario& s, bool backward) {
  CpAroundAttention x;
  x.beside = cp_kv_gather_s(s);
  x.share = 1.0 / s.strategy.cp;
  x.beside_name = "cp.all_gather";
  if (!backward) return x;
  x.rest = (s.strategy.cp - 1.0) * cp_dkv_pass_s(s);
  x.after = cp_dkv_pass_s(s);
  x.launches = 1;
  x.after_name = "cp.dkv_pass";
  return x;
}

}  // namespace

double cp_chunk_bytes(const spec::Scenario& s, double head_dim, double element_bytes) {
  const spec::Strategy& st = s.strategy;
  const double heads = st.repeat_kv ? s.model.heads : s.model.kv_heads;
  return local_tokens(s) * heads * head_dim / st.tp * element_bytes;
}

CpAroundAttention cp_around_attention(const spec::Scenario& s, bool backward) {
  switch (s.strategy.cp_exchange) {
    case spec::CpExchange::kAllGather: return all_gather(s, backward);
    case spec::CpExchange::kGatheredRing: return gathered_ring(s, backward);
    case spec::CpExchange::kRing: break;
  }
  return ring(s, backward);
}

double cp_kv_gather_s(const spec::Scenario& s) {
  const GroupShape cp = group_of(s.strategy, spec::Axis::kCp);
  const double chunk = cp_chunk_bytes(s, kv_width(s.model), activation_bytes(s.strategy));
  return collective_s(CollectiveKind::kAllGather, cp.size * chunk, cp, s);
}

double cp_dkv_pass_s(const spec::Scenario& s) {
  const double chunk = cp_chunk_bytes(s, kv_width(s.model), kFp32Bytes);
  return collective_s(CollectiveKind::kSendRecv, chunk, group_of(s.strategy, spec::Axis::kCp), s);
}

}  // namespace stepcast::workload
