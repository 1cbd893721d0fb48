#include "workload/cp_exchange.h"

#include <gtest/gtest.h>

#include "analysis/simulate.h"
#include "analytic/estimate.h"
#include "spec/presets.h"
#include "workload/step_costs.h"

namespace stepcast::workload {
namespace {

spec::Scenario gathered_ring(const char* model, const char* cluster, int gpus, int tp, int cp, int zero,
                             bool repeat_kv) {
  spec::Scenario s;
  s.model = spec::model_preset(model);
  s.cluster = spec::cluster_preset(cluster);
  s.gpus = gpus;
  spec::Strategy& st = s.strategy;
  st.tp = tp;
  st.cp = cp;
  st.zero_stage = zero;
  st.sequence_parallel = tp > 1;
  st.global_batch = 4;
  st.seq_len = 65536;
  st.recompute = spec::Recompute::kFull;
  st.cp_exchange = spec::CpExchange::kGatheredRing;
  st.repeat_kv = repeat_kv;
  st.host_dispatch_s = 0;  // the two engines account host launches differently
  return spec::complete_and_validate(s);
}

TEST(CpExchange, RepeatedKvMovesTheQueryHeadsKeysAndValues) {
  // torchtitan's Llama repeats K and V to the 32 query heads before SDPA (repeat_kv), so its
  // context parallelism moves 4x the bytes of Llama 3.1 8B's 8 KV heads.
  const spec::Scenario plain = gathered_ring("llama3.1-8b", "dgx-h100", 8, 1, 8, 0, false);
  const spec::Scenario repeated = gathered_ring("llama3.1-8b", "dgx-h100", 8, 1, 8, 0, true);
  EXPECT_DOUBLE_EQ(cp_chunk_bytes(repeated, 256, 2), 4 * cp_chunk_bytes(plain, 256, 2));
  // 8192 tokens per rank, 32 heads of K and of V, 128 wide, BF16.
  EXPECT_DOUBLE_EQ(cp_chunk_bytes(repeated, 256, 2), 8192.0 * 32 * 256 * 2);
  EXPECT_GT(cp_kv_gather_s(repeated), cp_kv_gather_s(plain));
  EXPECT_GT(cp_dkv_pass_s(repeated), cp_dkv_pass_s(plain));
}

TEST(CpExchange, GatheredRingRunsItsGatherBesideTheFirstStepAndPassesFp32GradientsRoundTheRing) {
  const spec::Scenario s = gathered_ring("llama3.1-8b", "dgx-h100", 8, 1, 8, 0, true);
  const CpAroundAttention fwd = cp_around_attention(s, false), bwd = cp_around_attention(s, true);
  // One all-gather of cat(K, V) in each pass, beside step 0's 1/cp of the attention.
  EXPECT_DOUBLE_EQ(fwd.beside, cp_kv_gather_s(s));
  EXPECT_DOUBLE_EQ(fwd.share, 1.0 / 8);
  EXPECT_EQ(fwd.before + fwd.rest + fwd.after, 0);
  EXPECT_DOUBLE_EQ(bwd.beside, cp_kv_gather_s(s));
  // dK and dV passed after each of the cp steps: beside the next seven, the last one exposed.
  EXPECT_DOUBLE_EQ(bwd.rest, 7 * cp_dkv_pass_s(s));
  EXPECT_DOUBLE_EQ(bwd.after, cp_dkv_pass_s(s));
  // FP32 gradients: twice the bytes of the BF16 keys and values.
  EXPECT_DOUBLE_EQ(cp_chunk_bytes(s, 256, 4), 2 * cp_chunk_bytes(s, 256, 2));
}

TEST(CpExchange, BothEnginesAgreeOnTheGatheredRing) {
  // Alone on its links (TP and CP on NVLink, no gradient collectives beside it), and on the same
  // NVLink as FSDP's gathers and reduce-scatters (torchtitan's FSDP + CP).
  const spec::Scenario cases[] = {gathered_ring("llama3.1-8b", "dgx-h100", 16, 4, 4, 0, true),
                                  gathered_ring("llama3.1-8b", "dgx-h100", 8, 1, 8, 3, true),
                                  gathered_ring("llama3.1-70b", "dgx-h100", 16, 4, 2, 3, true)};
  for (const spec::Scenario& s : cases) {
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(analysis::simulate_metrics(s).step_time_s, e, 0.02 * e) << spec::dump(s);
  }
}

}  // namespace
}  // namespace stepcast::workload
