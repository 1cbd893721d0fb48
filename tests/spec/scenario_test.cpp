#include "spec/scenario.h"

#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>

#include "core/error.h"

namespace stepcast::spec {
namespace {

// Llama-3.1-8B's shape (32 layers, 32 heads, 8 kv heads) on a 64-GPU slice of a 16,384-GPU
// cluster: tp 8 x pp 2 leaves dp 4. Built by hand so the test depends on no preset.
Scenario valid_scenario() {
  Scenario s;
  s.model.name = "llama-like";
  s.model.layers = 32;
  s.model.hidden = 4096;
  s.model.ffn = 14336;
  s.model.heads = 32;
  s.model.kv_heads = 8;
  s.model.vocab = 128256;
  s.model.mlp = MlpKind::kSwiglu;
  s.model.norm = NormKind::kRmsNorm;
  s.model.position = PositionKind::kRope;
  s.cluster.name = "test-pod";
  s.cluster.max_gpus = 16384;
  s.gpus = 64;
  s.strategy.tp = 8;
  s.strategy.pp = 2;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 64;
  s.strategy.seq_len = 4096;
  return s;
}

// Mixtral's routing: 8 experts, top-2.
Scenario moe_scenario() {
  Scenario s = valid_scenario();
  s.model.moe.experts = 8;
  s.model.moe.top_k = 2;
  s.model.moe.expert_ffn = 14336;
  return s;
}

std::string error_of(const Scenario& s) {
  try {
    complete_and_validate(s);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "(no error)";
}

TEST(Scenario, RecomputeIntervalNeedsFullRecomputation) {
  Scenario s = valid_scenario();
  s.strategy.recompute_interval = 2;
  EXPECT_EQ(error_of(s),
            "recompute interval 2 (one layer in every 2) needs full recomputation, but recompute is "
            "none; use recompute full, or an interval of 1");
  s.strategy.recompute = spec::Recompute::kFull;
  EXPECT_EQ(error_of(s), "(no error)");
}

TEST(Scenario, Fp8WeightCacheNeedsFp8Matmuls) {
  Scenario s = valid_scenario();
  s.strategy.fp8_weight_cache = true;
  EXPECT_EQ(
      error_of(s),
      "the FP8 weight cache keeps each weight's FP8 cast for a step's later micro-batches, but "
      "the matmuls run in bf16; use dtype fp8 (--dtype fp8), or leave the cache off");
  s.strategy.dtype = spec::Dtype::kFp8;
  EXPECT_EQ(error_of(s), "(no error)");
}

TEST(Scenario, DerivesDpFromGpusAndModelParallelDegrees) {
  const Scenario s = complete_and_validate(valid_scenario());
  EXPECT_EQ(s.strategy.dp, 64 / (8 * 2 * 1));
  EXPECT_EQ(s.strategy.schedule, Schedule::k1F1B);
  EXPECT_EQ(s.strategy.micro_batches(), 64 / (4 * 1));
}

TEST(Scenario, DerivesDpAcrossContextParallelism) {
  Scenario s = valid_scenario();
  s.strategy.cp = 2;
  EXPECT_EQ(complete_and_validate(s).strategy.dp, 64 / (8 * 2 * 2));
}

TEST(Scenario, KeepsAnExplicitDpThatFits) {
  Scenario s = valid_scenario();
  s.strategy.dp = 4;
  EXPECT_EQ(complete_and_validate(s).strategy.dp, 4);
}

TEST(Scenario, VirtualStagesSelectTheInterleavedSchedule) {
  Scenario s = valid_scenario();
  s.strategy.vp = 2;
  EXPECT_EQ(complete_and_validate(s).strategy.schedule, Schedule::kInterleaved);
}

TEST(Scenario, ExpertParallelismSharesTheDataParallelRanks) {
  Scenario s = moe_scenario();
  s.strategy.ep = 4;  // dp is 4: the four dp ranks each hold 8 / 4 experts
  EXPECT_EQ(complete_and_validate(s).strategy.ep, 4);
}

TEST(Scenario, ReplicaGpusIsTheModelParallelProductUpToTheGpus) {
  Strategy st;
  st.tp = 8;
  st.pp = 16;
  EXPECT_EQ(replica_gpus(st, 16384), 128);
  EXPECT_EQ(replica_gpus(st, 128), 128);
  EXPECT_EQ(replica_gpus(st, 127), std::nullopt);
  st.cp = 2147483647;
  EXPECT_EQ(replica_gpus(st, 2147483647), std::nullopt);
}

TEST(Scenario, CudnnAttentionRunsWhereTheGpuHasItsMeasuredCurve) {
  Scenario s = valid_scenario();
  s.strategy.attention = AttentionKernel::kCudnn;
  s.cluster.gpu.cudnn_attention_efficiency = 0.582;
  s.cluster.gpu.cudnn_attention_half_keys = 838;
  EXPECT_NO_THROW(complete_and_validate(s));
}

TEST(Scenario, NotFittingInMemoryIsNotAViolation) {
  Scenario s = valid_scenario();
  s.model.layers = 128;
  s.model.hidden = 65536;
  s.cluster.gpu.hbm_bytes = 1;
  EXPECT_NO_THROW(complete_and_validate(s));
}

struct Violation {
  const char* name;
  bool moe;  // run on the mixture-of-experts model
  std::function<void(Scenario&)> edit;
  const char* message;
};

class ScenarioViolations : public testing::TestWithParam<Violation> {};

TEST_P(ScenarioViolations, ReportsWhatWouldBeValid) {
  const Violation& v = GetParam();
  Scenario s = v.moe ? moe_scenario() : valid_scenario();
  v.edit(s);
  EXPECT_EQ(error_of(s), v.message);
}

INSTANTIATE_TEST_SUITE_P(
    Scenario, ScenarioViolations,
    testing::Values(
        Violation{"ProductDoesNotMatchGpus", false,
                  [](Scenario& s) {
                    s.gpus = 16384;
                    s.strategy.pp = 16;
                    s.strategy.dp = 100;
                    s.strategy.global_batch = 1600;
                  },
                  "tp 8 x pp 16 x cp 1 x dp 100 = 12800, but --gpus is 16384; dp that fits: 128"},
        Violation{"ProductDoesNotMatchGpusAndNoDpFits", false,
                  [](Scenario& s) {
                    s.gpus = 16384;
                    s.strategy.pp = 4;
                    s.strategy.cp = 3;
                    s.strategy.dp = 100;
                    s.strategy.global_batch = 1600;
                    s.strategy.seq_len = 6144;
                  },
                  "tp 8 x pp 4 x cp 3 x dp 100 = 9600, but --gpus is 16384; no dp fits, as tp x "
                  "pp x cp = 96 does not divide 16384"},
        Violation{"ModelParallelDoesNotDivideGpus", false,
                  [](Scenario& s) {
                    s.gpus = 100;
                    s.strategy.pp = 4;
                  },
                  "tp 8 x pp 4 x cp 1 = 32 does not divide --gpus 100; nearest --gpus that fit: "
                  "96, 128"},
        Violation{
            "ModelParallelBeyondAnyIntegerProduct", false,
            [](Scenario& s) {
              s.strategy.tp = 2147483647;
              s.strategy.pp = 2147483647;
              s.strategy.cp = 2147483647;
            },
            "4 problems with the scenario:\n"
            "  tp 2147483647 x pp 2147483647 x cp 2147483647 is more than --gpus 64; one "
            "data-parallel replica needs tp x pp x cp GPUs\n"
            "  tp 2147483647 does not divide 32 heads; valid tp on this model: 1, 2, 4, 8\n"
            "  pp 2147483647 x vp 1 = 2147483647 pipeline chunks, but the model has only 32 "
            "layers; each chunk needs at least one\n"
            "  sequence length 4096 does not split into 2 x cp 2147483647 = 4294967294 chunks "
            "for context parallelism (two per rank, balancing the causal mask); nearest valid sequence "
            "lengths: none up to 2147483647"},
        Violation{"TpDoesNotDivideHeads", false,
                  [](Scenario& s) {
                    s.model.kv_heads = 32;
                    s.gpus = 96;
                    s.strategy.tp = 3;
                    s.strategy.pp = 1;
                    s.strategy.global_batch = 32;
                  },
                  "tp 3 does not divide 32 heads; valid tp on this model: 1, 2, 4, 8, 16, 32"},
        Violation{"TpListStopsAtGpus", false,
                  [](Scenario& s) {
                    s.model.kv_heads = 32;
                    s.gpus = 6;
                    s.strategy.tp = 6;
                    s.strategy.pp = 1;
                    s.strategy.global_batch = 1;
                  },
                  "tp 6 does not divide 32 heads; valid tp on this model: 1, 2, 4"},
        Violation{"TpDoesNotDivideKvHeads", false,
                  [](Scenario& s) {
                    s.strategy.tp = 16;
                    s.strategy.pp = 1;
                  },
                  "tp 16 does not divide 8 kv heads; valid tp on this model: 1, 2, 4, 8"},
        Violation{"MorePipelineChunksThanLayers", false, [](Scenario& s) { s.strategy.vp = 32; },
                  "pp 2 x vp 32 = 64 pipeline chunks, but the model has only 32 layers; each "
                  "chunk needs at least one"},
        Violation{"GlobalBatchNotAMultiple", false,
                  [](Scenario& s) {
                    s.gpus = 1024;
                    s.strategy.global_batch = 1000;
                  },
                  "global batch 1000 is not a multiple of dp 64 x micro batch 1 = 64; nearest "
                  "valid global batches: 960, 1024"},
        Violation{"GlobalBatchBelowOneStep", false,
                  [](Scenario& s) {
                    s.strategy.micro_batch = 2;
                    s.strategy.global_batch = 6;
                  },
                  "global batch 6 is not a multiple of dp 4 x micro batch 2 = 8; nearest valid "
                  "global batches: 8"},
        Violation{"GlobalBatchZero", false, [](Scenario& s) { s.strategy.global_batch = 0; },
                  "global batch is 0; it must be a positive multiple of dp 4 x micro batch 1 = 4"},
        Violation{"SequenceLengthZero", false, [](Scenario& s) { s.strategy.seq_len = 0; },
                  "sequence length is 0; it must be at least 1"},
        Violation{"SequenceNotInTwoCpChunks", false,
                  [](Scenario& s) {
                    s.strategy.cp = 4;
                    s.gpus = 256;
                    s.strategy.seq_len = 4100;
                  },
                  "sequence length 4100 does not split into 2 x cp 4 = 8 chunks for context "
                  "parallelism (two per rank, balancing the causal mask); nearest valid sequence "
                  "lengths: 4096, 4104"},
        Violation{"SequenceNotInTpSlicesUnderSequenceParallelism", false,
                  [](Scenario& s) {
                    s.strategy.sequence_parallel = true;
                    s.strategy.seq_len = 4100;
                  },
                  "sequence length 4100 does not split into cp 1 x tp 8 = 8 slices for sequence "
                  "parallelism; nearest valid sequence lengths: 4096, 4104"},
        Violation{"ContextParallelWithUnfusedAttention", false,
                  [](Scenario& s) {
                    s.strategy.cp = 2;
                    s.gpus = 128;
                    s.strategy.attention = AttentionKernel::kUnfused;
                  },
                  "cp 2 needs FlashAttention-style attention (ring attention merges one key/value "
                  "block at a time); use --attention flash, or cp 1 with unfused attention"},
        Violation{"TpBackwardCollectivesHoldingEverySm", false,
                  [](Scenario& s) {
                    s.cluster.gpu.sm_count = 132;
                    s.strategy.tp_backward_sms = 132;
                  },
                  "--tp-backward-sms 132 leaves no SM of the GPU's 132 for the GEMMs beside them; "
                  "valid: 0 (NCCL's channels) to 131"},
        Violation{"CudnnAttentionOnAGpuWithoutItsMeasuredCurve", false,
                  [](Scenario& s) {
                    s.cluster.gpu.name = "a100-80g";
                    s.strategy.attention = AttentionKernel::kCudnn;
                  },
                  "--attention cudnn needs the GPU's measured cuDNN attention rate, which a100-80g "
                  "has not (cudnn_attention_efficiency in its GPU file; measured for h100-sxm); use "
                  "--attention flash, or add cudnn_attention_efficiency and cudnn_attention_half_keys "
                  "to a GPU file"},
        Violation{
            "SequenceLongerThanLearnedPositions", false,
            [](Scenario& s) {
              s.model.position = PositionKind::kLearned;
              s.model.max_seq = 2048;
            },
            "sequence length 4096 is longer than the 2048 positions of llama-like's learned "
            "position embedding; valid: at most 2048 (or a model file with a larger max_seq)"},
        Violation{"ExpertParallelOnDenseModel", false, [](Scenario& s) { s.strategy.ep = 2; },
                  "ep 2 needs a mixture-of-experts model, but this model is dense; use ep 1"},
        Violation{"EpDoesNotDivideExperts", true, [](Scenario& s) { s.strategy.ep = 3; },
                  "ep 3 does not divide 8 experts; valid ep with dp 4: 1, 2, 4"},
        Violation{"EpDoesNotDivideDp", true, [](Scenario& s) { s.strategy.ep = 8; },
                  "ep 8 does not divide dp 4 (expert parallelism shares the data-parallel ranks); "
                  "valid ep with dp 4: 1, 2, 4"},
        Violation{"ZeroStageOutOfRange", false, [](Scenario& s) { s.strategy.zero_stage = 4; },
                  "zero stage 4 is not one of 0, 1, 2, 3"},
        Violation{"MoreGpusThanTheCluster", false,
                  [](Scenario& s) {
                    s.gpus = 32768;
                    s.strategy.global_batch = 2048;
                  },
                  "--gpus 32768 exceeds the 16384 GPUs of cluster test-pod; use at most 16384"},
        Violation{"MicroBatchZero", false, [](Scenario& s) { s.strategy.micro_batch = 0; },
                  "micro batch is 0; it must be at least 1"},
        Violation{"DegreeZero", false, [](Scenario& s) { s.strategy.tp = 0; },
                  "tp is 0; it must be at least 1"},
        Violation{"NegativeDp", false, [](Scenario& s) { s.strategy.dp = -1; },
                  "dp is -1; it must be at least 1, or 0 to derive it from --gpus"},
        Violation{"NoGpus", false, [](Scenario& s) { s.gpus = 0; },
                  "--gpus is 0; it must be at least 1"},
        Violation{"ModelWithoutLayers", false, [](Scenario& s) { s.model.layers = 0; },
                  "the model has 0 layers; it needs at least 1"},
        // 2^31 - 1 experts once overflowed the parameter count into a negative step time.
        Violation{"ExpertsBeyondWhatTheArithmeticHolds", false,
                  [](Scenario& s) {
                    s.model.moe = {.experts = 2147483647, .top_k = 2, .expert_ffn = 14336};
                  },
                  "the model's experts is 2147483647, more than the 65536 stepcast takes"},
        // With ep > 1 their divisors were listed as valid ep, counting to 2^31 - 1: a SIGFPE.
        Violation{"ExpertParallelOverExpertsBeyondWhatTheArithmeticHolds", false,
                  [](Scenario& s) {
                    s.model.moe = {.experts = 2147483647, .top_k = 2, .expert_ffn = 14336};
                    s.strategy.ep = 2;
                  },
                  "the model's experts is 2147483647, more than the 65536 stepcast takes"},
        Violation{"VirtualStagesWithGpipe", false,
                  [](Scenario& s) {
                    s.strategy.vp = 2;
                    s.strategy.schedule = Schedule::kGpipe;
                  },
                  "vp 2 needs the interleaved schedule, but the schedule is gpipe; use vp 1 with "
                  "gpipe"},
        Violation{
            "DeferredSendsUnderInterleaving", false,
            [](Scenario& s) {
              s.strategy.pp = 2;
              s.strategy.vp = 2;
              s.strategy.deferred_sends = true;
            },
            "deferred sends follow DeepSpeed's TrainSchedule, a 1f1b schedule, but the schedule "
            "is interleaved; use --schedule 1f1b with vp 1"},
        Violation{"InterleavedWithoutPipeline", false,
                  [](Scenario& s) {
                    s.strategy.pp = 1;
                    s.strategy.vp = 2;
                  },
                  "the interleaved schedule needs pp > 1, but pp is 1; use pp >= 2, or vp 1"},
        Violation{"InterleavedWithoutVirtualStages", false,
                  [](Scenario& s) { s.strategy.schedule = Schedule::kInterleaved; },
                  "the interleaved schedule needs vp > 1 virtual stages per rank, but vp is 1; "
                  "use vp >= 2, or the 1f1b schedule"}),
    [](const testing::TestParamInfo<Violation>& info) { return std::string(info.param.name); });

TEST(Scenario, ReportsEveryViolationTogether) {
  Scenario s = moe_scenario();
  s.gpus = 96;
  s.strategy.tp = 3;
  s.strategy.pp = 5;
  s.strategy.cp = 2;
  s.strategy.ep = 3;
  s.strategy.global_batch = 0;
  s.strategy.seq_len = 4097;
  s.strategy.zero_stage = 5;
  EXPECT_EQ(error_of(s),
            "6 problems with the scenario:\n"
            "  tp 3 x pp 5 x cp 2 = 30 does not divide --gpus 96; nearest --gpus that fit: 90, "
            "120\n"
            "  tp 3 does not divide 32 heads; valid tp on this model: 1, 2, 4, 8\n"
            "  global batch is 0; it must be at least 1\n"
            "  sequence length 4097 does not split into 2 x cp 2 = 4 chunks for context parallelism (two "
            "per rank, balancing the causal mask); "
            "nearest valid sequence lengths: 4096, 4100\n"
            "  ep 3 does not divide 8 experts; valid ep: 1, 2, 4, 8\n"
            "  zero stage 5 is not one of 0, 1, 2, 3");
}

TEST(Scenario, AViolationNamesTheOptionsItConcernsOnceEachInOrder) {
  Scenario s = moe_scenario();
  s.gpus = 96;
  s.strategy.tp = 3;
  s.strategy.pp = 5;
  try {
    complete_and_validate(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.settings(), (std::vector<std::string>{"gpus", "tp", "pp", "cp", "model"}));
  }
  // A derived dp stands for the options it was derived from.
  Scenario batch = moe_scenario();
  batch.strategy.global_batch = 3;
  try {
    complete_and_validate(batch);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.settings(),
              (std::vector<std::string>{"global-batch", "global-batch-tokens", "micro-batch", "gpus", "tp", "pp", "cp"}));
  }
}

TEST(Scenario, DumpsOneFieldPerLineAfterCompletion) {
  Scenario s = valid_scenario();
  s.strategy.vp = 2;
  s.cluster.levels.push_back({"nvlink", 8, 450e9, 2.5e-6, 1.0});
  const std::string text = dump(complete_and_validate(s));
  std::istringstream lines(text);
  std::string strategy, line;
  while (std::getline(lines, line)) {
    EXPECT_NE(line.find(" = "), std::string::npos) << line;
    if (line.starts_with("strategy.")) strategy += line + "\n";
  }
  EXPECT_EQ(strategy,
            "strategy.tp = 8\n"
            "strategy.sequence_parallel = false\n"
            "strategy.pp = 2\n"
            "strategy.vp = 2\n"
            "strategy.schedule = interleaved\n"
            "strategy.dp = 4\n"
            "strategy.zero_stage = 0\n"
            "strategy.cp = 1\n"
            "strategy.cp_exchange = ring\n"
            "strategy.repeat_kv = false\n"
            "strategy.ep = 1\n"
            "strategy.micro_batch = 1\n"
            "strategy.global_batch = 64\n"
            "strategy.seq_len = 4096\n"
            "strategy.recompute = none\n"
            "strategy.recompute_interval = 1\n"
            "strategy.dtype = bf16\n"
            "strategy.grad_reduce_dtype = bf16\n"
            "strategy.fp8_weight_cache = false\n" "strategy.autocast_fp32_weights = false\n"
            "strategy.attention = flash\n"
            "strategy.overlap_tp_comm = false\n"
            "strategy.tp_async_backward = false\n" "strategy.tp_backward_sms = 0\n"
            "strategy.elementwise = fused\n"
            "strategy.fused_cross_entropy = true\n"
            "strategy.host_dispatch_s = 4.24e-05\n"
            "strategy.host_reads_loss = false\n"
            "strategy.host_syncs_each_forward = false\n"
            "strategy.fsdp_root_reshards = false\n"
            "strategy.host_syncs_before_mlp = false\n"
            "strategy.deferred_sends = false\n"
            "strategy.launch_blocking = false\n"
            "strategy.pp_scatter_gather = false\n"
            "strategy.pipeline_transfers = host-sync\n"
            "strategy.overlap_dp_comm = true\n"
            "strategy.grad_sync = ready\n"
            "strategy.sharded_collectives = layer\n"
            "strategy.optimizer_step = master-weights\n"
            "strategy.grad_accumulation = separate\n"
            "strategy.bias_grad_in_gemm = false\n"
            "strategy.bias_add_kernel = false\n"
            "strategy.placement = tp,cp,ep,dp,pp\n");
  EXPECT_NE(text.find("model.name = \"llama-like\"\n"), std::string::npos);
  EXPECT_NE(text.find("model.mlp = swiglu\n"), std::string::npos);
  EXPECT_NE(text.find("cluster.levels[0].bandwidth_per_gpu_Bps = 450000000000\n"),
            std::string::npos);
  EXPECT_NE(text.find("cluster.levels[0].latency_s = 2.5e-06\n"), std::string::npos);
  EXPECT_TRUE(text.ends_with("gpus = 64\n"));
  EXPECT_EQ(dump(complete_and_validate(s)), text);
}

TEST(ScenarioNames, EachAttentionKernelIsNamedAsTheCommandLineSpellsIt) {
  EXPECT_STREQ(name(AttentionKernel::kFlash), "flash");
  EXPECT_STREQ(name(AttentionKernel::kCudnn), "cudnn");
  EXPECT_STREQ(name(AttentionKernel::kFlashV1), "flash-v1");
  EXPECT_STREQ(name(AttentionKernel::kUnfused), "unfused");
}

}  // namespace
}  // namespace stepcast::spec
