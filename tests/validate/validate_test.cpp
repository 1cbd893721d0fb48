#include "validate/validate.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "analytic/estimate.h"
#include "core/error.h"
#include "report/report.h"
#include "spec/presets.h"
#include "workload/step_costs.h"

namespace stepcast::validate {
namespace {

const char* kVtrainHeader =
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
    "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n";

const char* kPublishedHeader =
    "source,model,params_b,layers,hidden,ffn,heads,kv_heads,vocab,seq_len,gpu,cluster,num_gpus,tp,"
    "pp,dp,cp,ep,vp,global_batch_seqs,micro_batch,recompute,seq_parallel,measured_tflops_per_gpu,"
    "measured_mfu,measured_tokens_per_s,measured_iter_s,verified,notes\n";

// published_runs.csv line 19: Narayanan's GPT-3 under ZeRO-3, in TFLOP/s, recompute cell empty.
const char* kNarayananZero3Row =
    "Narayanan2021_SC21_Megatron_Table2,\"GPT-3 174.6B (ZeRO-3, no MP)\",174.6,96,12288,49152,96,96,"
    "51200,2048,A100-SXM4-80GB,dgx-a100-80g,384,1,1,384,,,,1536,4,,,144,,,,yes,\n";

// What reading `text` as v.csv throws, or "no error".
std::string error_of(const std::string& text) {
  try {
    read_table("v.csv", text, {});
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ReadTable, DetectsVtrainSchemaWithAndWithoutParametersColumn) {
  const std::string plain = std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,2,219.7\n";
  const std::string with_params =
      "Parameters (billion)," + std::string(kVtrainHeader) + "0.35,8,32,4,1024,16,24,1024,2,2,2,219.7\n";
  for (const std::string& text : {plain, with_params}) {
    const std::vector<Case> cases = read_table("v.csv", text, {});
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0].reason, "");
    EXPECT_EQ(cases[0].quantity, Quantity::kIterationTime);
    EXPECT_DOUBLE_EQ(cases[0].measured, 0.2197);
    EXPECT_EQ(cases[0].scenario.strategy.tp, 2);
    EXPECT_EQ(cases[0].scenario.cluster.name, "dgx-a100-80g");
  }
}

TEST(ReadTable, VtrainRowsSpanningMoreThanOneNodeOfTheClusterBelongToItsMultiNodeSource) {
  // Columns: GPUs, global batch, micro batch, hidden, heads, layers, sequence, TP, DP, PP, ms.
  const std::string text = std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,2,219.7\n" +
                           "16,32,4,1024,16,24,1024,2,4,2,219.7\n";
  const std::vector<Case> cases = read_table("v.csv", text, {});
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].source, "vTrain ground_truth_single (Megatron-DeepSpeed, 1 node A100)");
  EXPECT_EQ(cases[1].source, "vTrain ground_truth_multi (Megatron-DeepSpeed, A100 nodes)");
  Options on_vtrains_cluster;
  on_vtrains_cluster.cluster = spec::cluster_preset("vtrain-a100-cluster");
  EXPECT_EQ(read_table("v.csv", text, on_vtrains_cluster)[1].scenario.cluster.name,
            "vtrain-a100-cluster");
}

TEST(ReadTable, RejectsMissingColumnNamingItAndTheSchema) {
  const std::string text = "# GPUs,global batch,micro batch\n8,32,4\n";
  try {
    read_table("v.csv", text, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "v.csv:1: missing column \"hidden size\"");
    EXPECT_EQ(e.hint().rfind("the vTrain schema has the columns: # GPUs, global batch", 0), 0u);
  }
}

TEST(ReadTable, RejectsNonNumericCellNamingLineAndColumn) {
  const std::string text = std::string(kVtrainHeader) + "8,32,four,1024,16,24,1024,2,2,2,219.7\n";
  try {
    read_table("v.csv", text, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "v.csv:2: micro batch: expected a number, got \"four\"");
  }
}

TEST(ReadTable, RejectsACountOfZeroNamingTheColumn) {
  // A parallel degree of 0 (a CP of 0 in the published schema) once divided by zero while the
  // row's defaults were chosen.
  EXPECT_EQ(error_of(std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,0,2,219.7\n"),
            "v.csv:2: data parallelism: expected a whole number from 1 to 10^9, got \"0\"");
  EXPECT_EQ(error_of(std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2.5,2,2,219.7\n"),
            "v.csv:2: tensor parallelism: expected a whole number from 1 to 10^9, got \"2.5\"");
}

TEST(ReadTable, QuotesACellWithALineBreakEscapedInItsError) {
  EXPECT_EQ(error_of(std::string(kVtrainHeader) + "\"8\n\",32,4,1024,16,24,1024,2,2,2,219.7\n"),
            "v.csv:2: # GPUs: expected a number, got \"8\\x0a\"");
}

TEST(ReadTable, RejectsAMeasurementOutsideWhatATrainingStepMeasuresOrAnMfuAboveOne) {
  EXPECT_EQ(error_of(std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,2,-5\n"),
            "v.csv:2: iteration time (ms): expected a measured value from 0.001 to 1e+12, got \"-5\"");
  // A value that parses but is no measurement: its error printed +inf% and a MAPE of inf%.
  EXPECT_EQ(error_of(std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,2,1e-308\n"),
            "v.csv:2: iteration time (ms): expected a measured value from 0.001 to 1e+12, got \"1e-308\"");
  EXPECT_EQ(error_of(std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,2,\n"),
            "v.csv:2: iteration time (ms): empty cell; this column is required");
  // MFU is a fraction in the published schema; 50.5 is a percentage.
  std::string row = kNarayananZero3Row;
  row.replace(row.find(",144,,"), 6, ",,50.5,");
  EXPECT_EQ(error_of(std::string(kPublishedHeader) + row),
            "v.csv:2: measured_mfu: expected a measured value from 1e-06 to 1, got \"50.5\"");
  row = kNarayananZero3Row;
  row.replace(row.find(",144,,"), 6, ",1e-300,,");
  EXPECT_EQ(error_of(std::string(kPublishedHeader) + row),
            "v.csv:2: measured_tflops_per_gpu: expected a measured value from 0.001 to 100000, got \"1e-300\"");
}

TEST(ReadTable, RejectsARecomputeOrSequenceParallelCellItDoesNotKnowSayingWhatIsValid) {
  const auto cell_error = [](const std::string& cells) {
    std::string row = kNarayananZero3Row;
    row.replace(row.find(",1536,4,,,"), 10, ",1536,4," + cells + ",");
    try {
      read_table("p.csv", std::string(kPublishedHeader) + row, {});
    } catch (const Error& e) {
      return std::string(e.what()) + " | " + e.hint();
    }
    return std::string("no error");
  };
  EXPECT_EQ(cell_error(",true"),
            "p.csv:2: seq_parallel: unknown sequence-parallel value \"true\" | valid: yes, no (or empty: the "
            "source's default)");
  EXPECT_EQ(cell_error("sometimes,"),
            "p.csv:2: recompute: unknown recompute \"sometimes\" | valid: none, selective, selective (op), "
            "selective (layer), full (or empty: the source's default)");
  EXPECT_EQ(cell_error("full,no"), "no error");
}

TEST(ReadTable, ListsImpossibleRowWithItsReasonInsteadOfDroppingIt) {
  // 8 GPUs but tp 2 x dp 2 x pp 1 = 4.
  const std::string text = std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,1,219.7\n";
  const std::vector<Case> cases = read_table("v.csv", text, {});
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_NE(cases[0].reason, "");
  const Report r = run(cases);
  EXPECT_EQ(r.overall.rows, 1);
  EXPECT_EQ(r.overall.predicted, 0);
}

TEST(ReadTable, ARowWhoseDegreesLeaveNoDataParallelRankIsListedWithItsReasonNotADivideByZero) {
  // Without a dp cell the defaults (the micro-batch here) are derived from the GPUs tp x pp
  // leaves: none at 2 GPUs, and tp x pp overflows an int at 65536 x 65536. Both crashed once.
  const std::string first = std::string(kPublishedHeader) +
                            "torchtitan x,Llama 3 8B,8,32,4096,14336,32,8,128256,8192,H100,dgx-h100,2,2,2,,,,,16,,"
                            "none,no,,,,1.0,yes,\n";
  const std::vector<Case> few = read_table("v.csv", first, {});
  ASSERT_EQ(few.size(), 1u);
  EXPECT_EQ(few[0].reason,
            "tp 2 x pp 2 x cp 1 is more than --gpus 2; one data-parallel replica needs tp x pp x cp GPUs");
  const std::string second = std::string(kPublishedHeader) +
                             "x,GPT-1.7B,1.7,24,2304,9216,24,24,51200,2048,A100,dgx-a100-80g,8,65536,65536,,,,,"
                             "512,,full,,137,,,,yes,\n";
  const std::vector<Case> huge = read_table("v.csv", second, {});
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_NE(huge[0].reason.find("tp 65536 x pp 65536 x cp 1 is more than --gpus 8"), std::string::npos)
      << huge[0].reason;
}

TEST(Run, ARowWhoseStepWouldTakeYearsIsListedWithTheReasonAndTheOthersArePredicted) {
  // A sequence of 10^9 tokens: valid, but the step is 1.6e11 s. It once stopped the whole run.
  const std::string text = std::string(kVtrainHeader) + "2,16,8,1024,16,24,1024,1,1,2,372.16\n" +
                           "8,32,4,1024,16,24,1000000000,2,2,2,219.73\n";
  for (Engine engine : {Engine::kAnalytic, Engine::kSimulation}) {
    const Report r = run(read_table("v.csv", text, {}), engine);
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_TRUE(r.rows[0].reason.empty());
    EXPECT_NE(r.rows[1].reason.find("an input is far out of range"), std::string::npos)
        << r.rows[1].reason;
    EXPECT_EQ(r.overall.predicted, 1);
  }
}

TEST(ReadTable, ARowNamingAnUnknownClusterIsListedWithADidYouMeanAndKeepsItsMeasurement) {
  std::string row = kNarayananZero3Row;
  row.replace(row.find("dgx-a100-80g"), 12, "dgx-a100-8g");
  const std::vector<Case> cases = read_table("p.csv", kPublishedHeader + row, {});
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].reason, "unknown cluster preset \"dgx-a100-8g\" (did you mean \"dgx-a100-80g\"?)");
  EXPECT_EQ(cases[0].model, "GPT-3 174.6B (ZeRO-3, no MP)");
  EXPECT_EQ(cases[0].quantity, Quantity::kTflopsPerGpu);
  EXPECT_DOUBLE_EQ(cases[0].measured, 144);
}

TEST(Report, ASourceWithNoPredictedRowPrintsDashesAndNullsNotAPerfectScore) {
  std::string row = kNarayananZero3Row;
  row.replace(row.find("dgx-a100-80g"), 12, "dgx-a100-8g");
  const Report r = run(read_table("p.csv", kPublishedHeader + row, {}));
  EXPECT_NE(report::validation_text(r).find("        1         0       -       -       -       -       -"),
            std::string::npos)
      << report::validation_text(r);
  const nlohmann::json j = report::validation_json(r);
  EXPECT_TRUE(j["summary"]["mape"].is_null());
  EXPECT_TRUE(j["per_source"][0]["speed_bias"].is_null());
  EXPECT_EQ(j["summary"]["rows"], 1);
}

TEST(Report, AnErrorBeyondWhatOneDecimalFitsIsPrintedInScientificNotationInItsColumn) {
  // A 2 us iteration, within the measurement bounds, predicted at about 0.39 s.
  const Report r = run(read_table("v.csv", std::string(kVtrainHeader) + "2,32,2,1024,16,12,1024,1,2,1,0.002\n", {}));
  const std::string text = report::validation_text(r);
  EXPECT_NE(text.find(" +2.0e+07%\n"), std::string::npos) << text;
  EXPECT_NE(text.find("1 2.0e+07% 2.0e+07% 2.0e+07% 2.0e+07% -100.0%      0"), std::string::npos) << text;
}

// llm-foundry's benchmark rows (published_runs.csv's columns after the source) read as a table.
std::vector<Case> llm_foundry_cases(std::initializer_list<std::string_view> rows) {
  std::string text = kPublishedHeader;
  for (const std::string_view row : rows)
    text += "MosaicML llm-foundry scripts/train/benchmarking/README.md (@061f2c7)," + std::string(row) + "\n";
  return read_table("p.csv", text, {});
}

TEST(ReadTable, LlmFoundrysRowsRunFirstGenerationFlashAttention) {
  // published_runs.csv lines 71 and 54: MPT-70B on 128 A100 40GB, from the benchmark script whose
  // attn_impl default is 'triton', and on 64 H100s, from the benchmark branch's later script,
  // which installs flash-attn 1.0.7 on the H100 and also defaults to 'triton' (stop 54).
  const std::vector<Case> cases = llm_foundry_cases(
      {"MPT-70b,64.86,80,8192,32768,,,50368,2048,A100-SXM4-40GB,mosaic-a100-40g-roce,128,1,1,128,,,,512,4,"
       "full,,,0.4891,48194,,yes,FULL_SHARD",
       "MPT-70b,64.86,80,8192,32768,,,50368,2048,H100-SXM5-80GB,mosaic-h100-roce,64,1,1,64,,,,2048,8,"
       "full,,421.3,0.4257,66523,,yes,FULL_SHARD"});
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].reason, "");
  EXPECT_EQ(cases[0].scenario.strategy.attention, spec::AttentionKernel::kFlashV1);
  EXPECT_EQ(cases[1].scenario.strategy.attention, spec::AttentionKernel::kFlashV1);
  EXPECT_EQ(cases[0].scenario.strategy.zero_stage, 3);
  // bf16 and PURE (the A100 40GB table): BF16 gradients reduced; amp_bf16 and DEFAULT: FP32.
  EXPECT_EQ(cases[0].scenario.strategy.grad_reduce_dtype, spec::Dtype::kBf16);
  EXPECT_EQ(cases[1].scenario.strategy.grad_reduce_dtype, spec::Dtype::kFp32);
  // A learned position table, as the table's NumParams grow with the sequence.
  EXPECT_EQ(cases[0].scenario.model.position, spec::PositionKind::kLearned);
}

TEST(ReadTable, LlmFoundrysMptHasLinearBiasesAndStepsComposersDecoupledAdamWLoop) {
  // published_runs.csv line 62: MPTConfig's no_bias default (NumParams count 9 x d_model of
  // biases a layer) and llm-foundry's decoupled_adamw, Composer's per-tensor loop.
  const std::vector<Case> cases = llm_foundry_cases(
      {"MPT-13b,12.85,40,5120,20480,,,50368,2048,H100-SXM5-80GB,mosaic-h100-roce,8,1,1,8,,,,16,2,"
       "none,,393.7,0.3979,38336,,yes,FULL_SHARD"});
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_TRUE(cases[0].scenario.model.bias);
  EXPECT_EQ(cases[0].scenario.strategy.optimizer_step, spec::OptimizerStep::kInPlaceLoop);
}

TEST(ReadTable, LlmFoundrysA100EightyGbSeventyBRowsRanPureBf16AndTheRestReduceFp32) {
  // published_runs.csv lines 66 and 68: the A100 80GB table's MPT-70B row reads bf16 and PURE,
  // its MPT-30B row amp_bf16 and DEFAULT.
  const std::vector<Case> cases = llm_foundry_cases(
      {"MPT-70b,64.86,80,8192,32768,,,50368,2048,A100-SXM4-80GB,mosaic-a100-80g-roce,64,1,1,64,,,,2048,8,"
       "full,,,0.5333,26274,,yes,FULL_SHARD",
       "MPT-30b,29.98,48,7168,28672,,,50368,2048,A100-SXM4-80GB,mosaic-a100-80g-roce,8,1,1,8,,,,504,3,"
       "full,,,0.553,7330,,yes,FULL_SHARD"});
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].scenario.strategy.grad_reduce_dtype, spec::Dtype::kBf16);
  EXPECT_EQ(cases[1].scenario.strategy.grad_reduce_dtype, spec::Dtype::kFp32);
}

TEST(ReadTable,
     VtrainPipelinesRunInDeepSpeedsPipelineEnginePartitionedAndHostSynchronisedOnlyWithTp) {
  // Columns: GPUs, global batch, micro batch, hidden, heads, layers, sequence, TP, DP, PP, ms.
  const std::string text = std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,2,219.7\n" +
                           "8,32,4,1024,16,24,1024,1,4,2,219.7\n";
  const std::vector<Case> cases = read_table("v.csv", text, {});
  ASSERT_EQ(cases.size(), 2u);
  const spec::Strategy& tp2 = cases[0].scenario.strategy;
  const spec::Strategy& tp1 = cases[1].scenario.strategy;
  EXPECT_TRUE(tp2.pp_scatter_gather);
  EXPECT_EQ(tp2.pipeline_transfers, spec::PipelineTransfers::kHostSynchronised);
  EXPECT_EQ(tp1.pipeline_transfers, spec::PipelineTransfers::kStreamOrdered);
  EXPECT_TRUE(tp1.host_reads_loss);
  // The pipeline engine's throughput timer never synchronises (it waits for steps counted by
  // engine.step(), which the pipeline engine never calls).
  EXPECT_FALSE(tp1.host_syncs_each_forward);
  // Megatron-DeepSpeed's layers make two scalars on the GPU with torch.tensor before the MLP.
  EXPECT_TRUE(tp1.host_syncs_before_mlp);
  EXPECT_TRUE(tp2.host_syncs_before_mlp);
}

TEST(ReadTable, NarayanansPipelinesScatterAndGatherTheirTensors) {
  // published_runs.csv line 11: GPT-1T, TP 8 x PP 64, Megatron-LM 2021.
  const std::string row =
      "Narayanan2021_SC21_Megatron_Table1,GPT-1008.0B,1008,128,25600,102400,160,160,51200,2048,"
      "A100-SXM4-80GB,"
      "dgx-a100-80g,3072,8,64,6,,,,3072,,,,163,,,,yes,\n";
  const std::vector<Case> cases = read_table("p.csv", std::string(kPublishedHeader) + row, {});
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_TRUE(cases[0].scenario.strategy.pp_scatter_gather);
  EXPECT_FALSE(cases[0].scenario.strategy.sequence_parallel);
  // Before gradient accumulation fusion: a kernel adds each weight gradient into the main one.
  EXPECT_EQ(cases[0].scenario.strategy.grad_accumulation, spec::GradAccumulation::kSeparateKernel);
}

TEST(ReadTable, MegatronBridgeRowsRunNvidiasPerformanceRecipes) {
  // data/validation/megatron_bridge_h100.csv line 2: Llama 3 70B, TP 4 x PP 8 x VP 5, FP8.
  const std::string row =
      "Megatron-Bridge performance summary (DGX-H100),Llama 3 70B "
      "[FP8-CS],70,80,8192,28672,64,8,128256,"
      "8192,H100 SXM 80GB (DGX-H100),dgx-h100,64,4,8,2,1,1,5,128,1,none,yes,,,103616,,yes,\n";
  const std::vector<Case> cases = read_table("m.csv", std::string(kPublishedHeader) + row, {});
  ASSERT_EQ(cases.size(), 1u);
  ASSERT_EQ(cases[0].reason, "");
  const spec::Strategy& st = cases[0].scenario.strategy;
  EXPECT_EQ(st.dtype, spec::Dtype::kFp8);
  EXPECT_EQ(st.zero_stage, 1);
  EXPECT_EQ(st.grad_reduce_dtype, spec::Dtype::kBf16);
  EXPECT_TRUE(st.sequence_parallel);
  EXPECT_TRUE(st.overlap_tp_comm);
  EXPECT_EQ(st.pipeline_transfers, spec::PipelineTransfers::kAsynchronous);
  EXPECT_EQ(st.schedule, spec::Schedule::kInterleaved);
  EXPECT_EQ(st.recompute, spec::Recompute::kNone);
  EXPECT_TRUE(st.fp8_weight_cache);
  EXPECT_EQ(st.grad_sync, spec::GradSync::kAligned);
  EXPECT_EQ(st.grad_accumulation, spec::GradAccumulation::kFusedIntoGemm);
}

TEST(ReadTable, MeasuredH100StepsRunTorchtitansTrainingWithTheAttentionSdpaRan) {
  // data/validation/measured_h100_steps.csv lines 2 and 3, notes left out: SDPA's default
  // (cuDNN on an H100) and FlashAttention-2 forced.
  const std::string rows =
      "\"stepcast tools/measure_step.py, one H100 (PyTorch 2.11)\",\"Llama 3.1 8B, 4 of 32 layers\","
      "1.923,4,4096,14336,32,8,128256,8192,H100 80GB HBM3 (700 W),dgx-h100,1,1,1,1,1,1,1,1,1,none,no,,,,0.20021,yes,\n"
      "\"stepcast tools/measure_step.py, one H100 (PyTorch 2.11)\",\"Llama 3.1 8B, 4 of 32 layers "
      "[FlashAttention-2]\",1.923,4,4096,14336,32,8,128256,8192,H100 80GB HBM3 (700 W),dgx-h100,1,1,1,1,1,1,1,1,1,"
      "none,no,,,,0.21373,yes,\n";
  const std::vector<Case> cases = read_table("m.csv", std::string(kPublishedHeader) + rows, {});
  ASSERT_EQ(cases.size(), 2u);
  for (const Case& c : cases) {
    ASSERT_EQ(c.reason, "");
    const spec::Strategy& st = c.scenario.strategy;
    EXPECT_EQ(st.zero_stage, 3);
    EXPECT_EQ(st.sharded_collectives, spec::ShardedCollectives::kPerParameter);
    EXPECT_EQ(st.optimizer_step, spec::OptimizerStep::kInPlace);
    EXPECT_EQ(st.elementwise, spec::Elementwise::kEager);
    EXPECT_EQ(c.scenario.model.hidden_dropout, 0);
  }
  EXPECT_EQ(cases[0].scenario.strategy.attention, spec::AttentionKernel::kCudnn);
  EXPECT_EQ(cases[1].scenario.strategy.attention, spec::AttentionKernel::kFlash);
}

TEST(ReadTable, ABf16MegatronBridgeRowIsPredictedWithoutTheFp8WeightCache) {
  // The same row relabelled BF16: Transformer Engine's weight cache exists only for FP8 weights,
  // so the row must not ask for it (an FP8 weight cache without FP8 GEMMs is an input error).
  const std::string row =
      "Megatron-Bridge performance summary (DGX-H100),Llama 3 70B "
      "[BF16],70,80,8192,28672,64,8,128256,"
      "8192,H100 SXM 80GB (DGX-H100),dgx-h100,64,4,8,2,1,1,5,128,1,none,yes,,,103616,,yes,\n";
  const std::vector<Case> cases = read_table("m.csv", std::string(kPublishedHeader) + row, {});
  ASSERT_EQ(cases.size(), 1u);
  ASSERT_EQ(cases[0].reason, "");
  const spec::Strategy& st = cases[0].scenario.strategy;
  EXPECT_EQ(st.dtype, spec::Dtype::kBf16);
  EXPECT_FALSE(st.fp8_weight_cache);
  EXPECT_GT(analytic::estimate(spec::complete_and_validate(cases[0].scenario)).tokens_per_s, 0);
}

TEST(ReadTable, KorthikantiRowsRunMegatronLmOf2022) {
  // data/validation/korthikanti_2022_a100.csv lines 6 and 7, GPU cell and notes shortened: GPT-530B
  // with full recomputation, and with sequence parallelism and selective recomputation.
  const std::string row =
      "Korthikanti2022_MLSys_Table5,GPT-530B,530,105,20480,81920,128,128,51200,2048,A100,"
      "dgx-a100-80g,280,8,35,1,1,,3,280,1,";
  const std::string text = std::string(kPublishedHeader) + row + "full,no,,,,49.05,yes,\n" + row +
                           "selective,yes,,,,37.83,yes,\n";
  const std::vector<Case> cases = read_table("k.csv", text, {});
  ASSERT_EQ(cases.size(), 2u);
  for (const Case& c : cases) {
    ASSERT_EQ(c.reason, "");
    EXPECT_EQ(c.quantity, Quantity::kIterationTime);
    const spec::Strategy& st = c.scenario.strategy;
    EXPECT_EQ(st.attention, spec::AttentionKernel::kUnfused);
    EXPECT_FALSE(st.fused_cross_entropy);
    EXPECT_FALSE(st.overlap_dp_comm);
    EXPECT_EQ(st.schedule, spec::Schedule::kInterleaved);
    EXPECT_EQ(st.vp, 3);
    // Megatron-LM scatters the pipeline tensors over the TP ranks; with SP they are split already.
    EXPECT_TRUE(st.pp_scatter_gather);
    EXPECT_EQ(st.grad_accumulation, spec::GradAccumulation::kFusedIntoGemm);  // by 2022
    EXPECT_TRUE(st.tp_async_backward);  // its column-parallel layers' backward collectives
  }
  EXPECT_EQ(cases[0].scenario.strategy.recompute, spec::Recompute::kFull);
  EXPECT_FALSE(cases[0].scenario.strategy.sequence_parallel);
  EXPECT_EQ(cases[1].scenario.strategy.recompute, spec::Recompute::kSelective);
  EXPECT_TRUE(cases[1].scenario.strategy.sequence_parallel);
  EXPECT_EQ(workload::pp_gather_s(spec::complete_and_validate(cases[1].scenario)), 0);
  EXPECT_GT(workload::pp_gather_s(spec::complete_and_validate(cases[0].scenario)), 0);
}

TEST(ReadTable, TheBloomRowRunsBigSciencesTrainingSetUp) {
  // data/validation/bloom_176b_a100.csv, the notes shortened.
  const std::string text =
      std::string(kPublishedHeader) +
      "BigScience BLOOM-176B training (tr11-176B-ml),BLOOM-176B,176,70,14336,57344,112,112,"
      "250880,2048,A100-SXM4-80GB (400W),jean-zay-a100,384,4,12,8,1,1,1,2048,2,full,no,"
      "149.02,,,105.22,yes,CUDA_LAUNCH_BLOCKING=1\n";
  const std::vector<Case> cases = read_table("b.csv", text, {});
  ASSERT_EQ(cases.size(), 1u);
  const Case& c = cases[0];
  ASSERT_EQ(c.reason, "");
  EXPECT_EQ(c.quantity, Quantity::kIterationTime);
  EXPECT_EQ(c.scenario.model.position, spec::PositionKind::kAlibi);
  EXPECT_EQ(c.scenario.cluster.name, "jean-zay-a100");
  const spec::Strategy& st = c.scenario.strategy;
  EXPECT_TRUE(st.launch_blocking);
  EXPECT_EQ(st.zero_stage, 1);
  EXPECT_EQ(st.grad_reduce_dtype, spec::Dtype::kFp32);
  EXPECT_FALSE(st.overlap_dp_comm);
  EXPECT_EQ(st.attention, spec::AttentionKernel::kUnfused);
  EXPECT_TRUE(st.pp_scatter_gather);
  EXPECT_EQ(st.pipeline_transfers, spec::PipelineTransfers::kHostSynchronised);
}

TEST(ReadTable, FlashAttentionRowsRunItsNovember2022TrainingScripts) {
  // data/validation/flash_attention_gpt3_a100.csv lines 3 and 5: GPT3-355M under plain DDP, and
  // GPT3-1.3B with ZeRO-1, which its notes name.
  const std::string source = "flash-attention training/README.md (Nov 2022 GPT3 on The Pile),";
  const std::string text = std::string(kPublishedHeader) + source +
                           "GPT3-355M,0.355,24,1024,4096,16,16,50264,2048,A100-SXM4-80GB "
                           "(400W),dgx-a100-80g,8,1,1,8,1,1,1,"
                           "256,16,none,no,,,503000,,yes,DDP\n" +
                           source +
                           "GPT3-1.3B,1.3,24,2048,8192,16,16,50264,2048,A100-SXM4-80GB "
                           "(400W),dgx-a100-80g,8,1,1,8,1,1,1,"
                           "512,8,none,no,,,169000,,yes,DDP with ZeRO-1\n";
  const std::vector<Case> cases = read_table("f.csv", text, {});
  ASSERT_EQ(cases.size(), 2u);
  for (const Case& c : cases) {
    ASSERT_EQ(c.reason, "");
    const spec::Strategy& st = c.scenario.strategy;
    EXPECT_EQ(st.attention, spec::AttentionKernel::kFlashV1);
    EXPECT_TRUE(st.bias_grad_in_gemm);  // FusedDense
    EXPECT_EQ(st.grad_reduce_dtype, spec::Dtype::kFp32);
    EXPECT_TRUE(st.overlap_dp_comm);
    EXPECT_EQ(st.recompute, spec::Recompute::kNone);
    EXPECT_TRUE(st.autocast_fp32_weights);  // Lightning's bf16 autocast over FP32 weights
  }
  EXPECT_EQ(cases[0].scenario.strategy.zero_stage, 0);
  EXPECT_EQ(cases[1].scenario.strategy.zero_stage, 1);
}

TEST(ReadTable, NarayananRowsWithoutARecomputeCellRecomputeFully) {
  const std::string text = std::string(kPublishedHeader) + kNarayananZero3Row;
  const std::vector<Case> cases = read_table("p.csv", text, {});
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].scenario.strategy.recompute, spec::Recompute::kFull);
  EXPECT_EQ(cases[0].scenario.strategy.zero_stage, 3);
}

TEST(ReadTable, UnstatedMicroBatchIsOneOrTheSmallestThe2021FusedSoftmaxTakesForNarayanan) {
  // GPT-18.4B at TP 8, 48 heads (6 per rank), micro-batch cell empty, at a batch of 512 that the
  // authors' Table 1 script did not run. Megatron-LM 2021's softmax kernel needs micro-batch x 6 to
  // be a multiple of 4: 2, not 1.
  const std::string row =
      "Table1,GPT-18.4B,18.4,40,6144,24576,48,48,51200,2048,A100-SXM4-80GB,dgx-a100-80g,"
      "256,8,1,32,,,,512,,full,no,135,,,,yes,\n";
  const auto micro_batch = [&](const std::string& source) {
    const std::vector<Case> cases = read_table("p.csv", kPublishedHeader + source + row, {});
    return cases.at(0).scenario.strategy.micro_batch;
  };
  EXPECT_EQ(micro_batch("Narayanan2021_SC21_Megatron_"), 2);
  EXPECT_EQ(micro_batch("Some other source "), 1);
}

TEST(ReadTable, NarayananTable1RowsRunAsTheAuthorsScriptsLaunchedThem) {
  // Megatron-LM examples/sc21/run_table_1.sh: GPT-18.4B at micro-batch 8 under PyTorch's DDP,
  // GPT-76.1B at micro-batch 2 with 5 layers per virtual stage (15 per stage: 3 virtual stages)
  // under Megatron's local DDP, GPT-1T without interleaving though the row's notes name it.
  const auto strategy = [](const std::string& row) {
    const std::vector<Case> cases =
        read_table("p.csv",
                   std::string(kPublishedHeader) + "Narayanan2021_SC21_Megatron_Table1," + row +
                       ",full,no,140,,,,yes,interleaved 1F1B\n",
                   {});
    return cases.at(0).scenario.strategy;
  };
  const spec::Strategy gpt18 = strategy(
      "GPT-18.4B,18.4,40,6144,24576,48,48,51200,2048,A100,dgx-a100-80g,256,8,1,32,,,,1024,");
  EXPECT_EQ(gpt18.micro_batch, 8);
  EXPECT_FALSE(gpt18.tp_async_backward);  // Megatron-LM of early 2021 had no asynchronous backward
  EXPECT_EQ(gpt18.vp, 1);
  EXPECT_TRUE(gpt18.overlap_dp_comm);
  const spec::Strategy gpt76 = strategy(
      "GPT-76.1B,76.1,60,10240,40960,80,80,51200,2048,A100,dgx-a100-80g,1024,8,4,32,,,,1792,");
  EXPECT_EQ(gpt76.micro_batch, 2);
  EXPECT_EQ(gpt76.vp, 3);
  EXPECT_EQ(gpt76.schedule, spec::Schedule::kInterleaved);
  EXPECT_FALSE(gpt76.overlap_dp_comm);
  const spec::Strategy gpt1t = strategy(
      "GPT-1008.0B,1008,128,25600,102400,160,160,51200,2048,A100,dgx-a100-80g,3072,8,64,6,,,,"
      "3072,");
  EXPECT_EQ(gpt1t.vp, 1);
  EXPECT_EQ(gpt1t.schedule, spec::Schedule::k1F1B);
  // A micro-batch the row states wins over the script's.
  EXPECT_EQ(
      strategy(
          "GPT-18.4B,18.4,40,6144,24576,48,48,51200,2048,A100,dgx-a100-80g,256,8,1,32,,,,1024,4")
          .micro_batch,
      4);
}

TEST(ReadTable, TorchtitanSelectiveCellsMapToItsCheckpointingPolicies) {
  const std::string header = kPublishedHeader;
  const std::string row = "torchtitan docs/performance.md,Llama 3 8B,8,32,4096,14336,32,8,128256,8192,A100,"
                          "dgx-a100-80g,64,1,1,,,,,64,1,";
  auto strategy = [&](const std::string& cell) {
    const std::vector<Case> cases = read_table("p.csv", header + row + cell + ",,,0.5,,,yes,\n", {});
    return cases.at(0).scenario.strategy;
  };
  EXPECT_EQ(strategy("selective").recompute, spec::Recompute::kOp);
  EXPECT_EQ(strategy("selective (op)").recompute, spec::Recompute::kOp);
  EXPECT_EQ(strategy("selective (layer)").recompute, spec::Recompute::kFull);
  EXPECT_EQ(strategy("selective (layer)").recompute_interval, 2);
  EXPECT_EQ(strategy("full").recompute_interval, 1);
}

TEST(Run, SummarisesAbsoluteErrorsPerSource) {
  const std::string text = std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,2,219.7\n" +
                           "4,16,4,2048,16,24,1024,1,2,2,410.5\n";
  const Report r = run(read_table("v.csv", text, {}));
  ASSERT_EQ(r.rows.size(), 2u);
  const double a = std::abs(r.rows[0].error), b = std::abs(r.rows[1].error);
  EXPECT_NEAR(r.overall.mape, (a + b) / 2, 1e-12);
  EXPECT_NEAR(r.overall.max_ape, std::max(a, b), 1e-12);
  EXPECT_NEAR(r.overall.median_ape, (a + b) / 2, 1e-12);
  ASSERT_EQ(r.per_source.size(), 1u);
  EXPECT_EQ(r.per_source[0].predicted, 2);
}

TEST(Run, SpeedBiasAveragesSpeedRatiosWithOneSignForTimesAndRates) {
  // Iteration times: the speed ratio is measured / predicted, so a time predicted 20% short reads
  // as +25% speed, and the sign means "too fast" for every quantity.
  const std::string text = std::string(kVtrainHeader) + "8,32,4,1024,16,24,1024,2,2,2,219.7\n" +
                           "4,16,4,2048,16,24,1024,1,2,2,410.5\n";
  const Report r = run(read_table("v.csv", text, {}));
  ASSERT_EQ(r.rows.size(), 2u);
  double expected = 0;
  for (const RowResult& row : r.rows) expected += (row.measured / row.predicted - 1) / 2;
  EXPECT_NEAR(r.overall.speed_bias, expected, 1e-12);

  // A throughput row: the speed ratio is the row's own signed error.
  const Report p = run(read_table("p.csv", std::string(kPublishedHeader) + kNarayananZero3Row, {}));
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_NEAR(p.overall.speed_bias, p.rows[0].error, 1e-12);
}

TEST(Run, CountsRowsWhoseMeasuredRunTheMemoryModelSaysCouldNotFit) {
  // A 39B-parameter model on one 80 GB A100 without sharding: its weights, gradients and Adam
  // state alone take over 600 GB, yet the row claims a measured time.
  const std::string text = std::string(kVtrainHeader) + "1,8,1,8192,64,48,2048,1,1,1,5000.0\n" +
                           "8,32,4,1024,16,24,1024,2,2,2,219.7\n";
  const Report r = run(read_table("v.csv", text, {}));
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_FALSE(r.rows[0].fits);
  EXPECT_GT(r.rows[0].memory_bytes, 600e9);
  EXPECT_DOUBLE_EQ(r.rows[0].capacity_bytes, 80.0 * (1 << 30));
  EXPECT_TRUE(r.rows[1].fits);
  EXPECT_EQ(r.overall.not_fitting, 1);
}

}  // namespace
}  // namespace stepcast::validate
