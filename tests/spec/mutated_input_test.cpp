// Bad input gets a clear error, never a crash and never a silent wrong number: every mutation of a
// real input file is either read, and the step it describes priced to a finite positive time, or
// rejected with an input error (invalid, or valid but not modelled: exit code 1), never an
// internal one. The mutations are those a hand edit or a cut-off download
// makes: bytes deleted, a hostile token inserted (a sign, an overflowing or tiny number, an
// unbalanced bracket, a NUL byte, a Latin-1 byte), a span repeated. Seeded, so a failure
// reproduces.
#include <gtest/gtest.h>

#include <cmath>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "analysis/simulate.h"
#include "analytic/estimate.h"
#include "core/csv.h"
#include "core/error.h"
#include "report/report.h"
#include "spec/hf_config.h"
#include "spec/presets.h"
#include "spec/scenario.h"
#include "spec/yaml_reader.h"
#include "validate/validate.h"

namespace stepcast {
namespace {

constexpr int kMutationsPerFile = 1000;

std::string mutated(const std::string& text, std::mt19937& rng) {
  static const std::vector<std::string> kTokens = {
      "0",      "-1",          "1e309",    "nan",  "inf",  "\"", "\n", "\t",
      ":",      "- ",          "[",        "]",    "{",    "}",  ",",  "999999999999",
      "1e-300", "\"-5 GB/s\"", "\"0 us\"", "null", "true", "#",  "\\", std::string(1, '\0'),
      "\xB6"};
  std::string out = text;
  const int edits = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, out.size())(rng);
    const std::size_t span = std::uniform_int_distribution<std::size_t>(1, 20)(rng);
    switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
      case 0:
        out.erase(at, span);
        break;
      case 1:
        out.insert(at,
                   kTokens[std::uniform_int_distribution<std::size_t>(0, kTokens.size() - 1)(rng)]);
        break;
      default: {
        const std::size_t from = std::uniform_int_distribution<std::size_t>(0, out.size())(rng);
        out.insert(at, out.substr(from, span));
      }
    }
  }
  return out;
}

spec::Scenario eight_gpus(spec::ModelSpec model, spec::ClusterSpec cluster) {
  spec::Scenario s;
  s.model = std::move(model);
  s.cluster = std::move(cluster);
  s.gpus = 8;
  s.strategy.tp = 2;
  s.strategy.pp = 2;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 8;
  s.strategy.seq_len = 1024;
  return s;
}

// Prices `s` and renders the result as `--json` does: names read from the file reach the JSON.
void expect_finite_step(const spec::Scenario& s, bool simulate) {
  const spec::Scenario valid = spec::complete_and_validate(s);
  const analytic::Estimate e =
      simulate ? analysis::simulate_metrics(valid) : analytic::estimate(valid);
  EXPECT_TRUE(std::isfinite(e.step_time_s) && e.step_time_s > 0) << "step time " << e.step_time_s;
  report::estimate_json(valid, e).dump();
}

// Mutates `original` kMutationsPerFile times and hands each text to `use`, which reads and prices
// it; only stepcast's input errors may come out.
template <typename Use>
void expect_read_or_rejected(const std::string& original, Use use) {
  std::mt19937 rng(20261124);
  int rejected = 0;
  for (int i = 0; i < kMutationsPerFile; ++i) {
    const std::string text = mutated(original, rng);
    try {
      use(text, i % 10 == 0);  // every tenth through the simulator too
    } catch (const Error& e) {
      ++rejected;
      EXPECT_NE(e.kind(), ErrorKind::kInternal) << "mutation " << i << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutation " << i << " escaped as a non-stepcast exception: " << e.what()
                    << "\n"
                    << text;
    }
  }
  // Both outcomes occur, so the mutations reach past the parser and into the model.
  EXPECT_GT(rejected, 0);
  EXPECT_LT(rejected, kMutationsPerFile);
}

TEST(MutatedInput, ModelYamlIsReadOrRejectedWithAnInputError) {
  expect_read_or_rejected(
      spec::preset_yaml("llama3.1-8b"), [](const std::string& text, bool simulate) {
        expect_finite_step(
            eight_gpus(spec::read_model_yaml("model.yaml", text), spec::cluster_preset("dgx-h100")),
            simulate);
      });
}

TEST(MutatedInput, ClusterYamlIsReadOrRejectedWithAnInputError) {
  expect_read_or_rejected(
      spec::preset_yaml("dgx-h100"), [](const std::string& text, bool simulate) {
        expect_finite_step(eight_gpus(spec::model_preset("llama3.1-8b"),
                                      spec::read_cluster_yaml("cluster.yaml", text)),
                           simulate);
      });
}

TEST(MutatedInput, GpuYamlIsReadOrRejectedWithAnInputError) {
  expect_read_or_rejected(
      spec::preset_yaml("h100-sxm"), [](const std::string& text, bool simulate) {
        spec::ClusterSpec cluster = spec::cluster_preset("dgx-h100");
        cluster.gpu = spec::read_gpu_yaml("gpu.yaml", text);
        expect_finite_step(eight_gpus(spec::model_preset("llama3.1-8b"), cluster), simulate);
      });
}

TEST(MutatedInput, HuggingFaceConfigIsReadOrRejectedWithAnInputError) {
  const std::string config = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
  "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
  "max_position_embeddings": 131072, "hidden_act": "silu", "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16"
})";
  expect_read_or_rejected(config, [](const std::string& text, bool simulate) {
    expect_finite_step(
        eight_gpus(spec::read_hf_config("config.json", text), spec::cluster_preset("dgx-h100")),
        simulate);
  });
}

TEST(MutatedInput, ScenarioFileIsReadOrRejectedWithAnInputError) {
  const std::string file = core::read_file(std::string(STEPCAST_SOURCE_DIR) + "/examples/llama3.1-405b-llama3-paper.yaml");
  expect_read_or_rejected(file, [](const std::string& text, bool) {
    // A key that survives must still have a value to hand to its option.
    for (const spec::YamlSetting& s : spec::read_yaml_settings("run.yaml", text)) EXPECT_FALSE(s.value.empty());
  });
}

// Reads a measured-runs table and validates it; every row must be predicted to a finite number
// or listed with its reason.
void expect_rows_predicted_or_explained(const char* source_name, const std::string& text,
                                        bool simulate) {
  const validate::Report report =
      validate::run(validate::read_table(source_name, text, {}),
                    simulate ? validate::Engine::kSimulation : validate::Engine::kAnalytic);
  for (const validate::RowResult& row : report.rows) {
    EXPECT_TRUE(!row.reason.empty() || std::isfinite(row.predicted)) << "line " << row.line;
  }
}

TEST(MutatedInput, PublishedRunsTableIsReadOrRejectedWithAnInputError) {
  const std::string table =
      R"(source,model,params_b,layers,hidden,ffn,heads,kv_heads,vocab,seq_len,gpu,cluster,num_gpus,tp,pp,dp,cp,ep,vp,global_batch_seqs,micro_batch,recompute,seq_parallel,measured_tflops_per_gpu,measured_mfu,measured_tokens_per_s,measured_iter_s,verified,notes
Narayanan2021_SC21_Megatron_Table1,GPT-1.7B,1.7,24,2304,9216,24,,51200,2048,A100,dgx-a100-80g,32,1,1,32,,,,512,,,,137,,,,yes,
MosaicML,MPT-7b,6.7,32,4096,16384,32,,50368,2048,A100,dgx-a100-80g,8,1,1,8,,,,96,6,none,,,0.64,37130,,yes,FSDP FULL_SHARD
)";
  expect_read_or_rejected(table, [](const std::string& text, bool simulate) {
    expect_rows_predicted_or_explained("runs.csv", text, simulate);
  });
}

TEST(MutatedInput, VtrainTableIsReadOrRejectedWithAnInputError) {
  const std::string table =
      R"(# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
2,16,8,1024,16,24,1024,1,1,2,372.160408
8,32,4,1024,16,24,1024,2,2,2,219.732754
)";
  expect_read_or_rejected(table, [](const std::string& text, bool simulate) {
    expect_rows_predicted_or_explained("vtrain.csv", text, simulate);
  });
}

}  // namespace
}  // namespace stepcast
