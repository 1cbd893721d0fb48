#include "spec/presets.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "../error_text.h"
#include "core/csv.h"
#include "core/error.h"
#include "spec/yaml_reader.h"

namespace stepcast::spec {
namespace {

using testing::error_of;

const std::string kSharedDir = STEPCAST_SHARED_DIR;

TEST(Presets, ShipsTheRequiredPresets) {
  const std::vector<std::string> models = {"deepseek-v3",
                                           "gemma-2-9b",
                                           "gpt-oss-120b",
                                           "gpt3-175b",
                                           "llama2-13b",
                                           "llama2-70b",
                                           "llama2-7b",
                                           "llama3.1-405b",
                                           "llama3.1-70b",
                                           "llama3.1-8b",
                                           "llama4-maverick",
                                           "llama4-scout",
                                           "megatron-gpt-1.7b",
                                           "megatron-gpt-145.6b",
                                           "megatron-gpt-18.4b",
                                           "megatron-gpt-1t",
                                           "megatron-gpt-3.6b",
                                           "megatron-gpt-310.1b",
                                           "megatron-gpt-39.1b",
                                           "megatron-gpt-529.6b",
                                           "megatron-gpt-7.5b",
                                           "megatron-gpt-76.1b",
                                           "mixtral-8x7b",
                                           "mpt-13b",
                                           "mpt-30b",
                                           "mpt-70b",
                                           "mpt-7b",
                                           "mt-nlg-530b",
                                           "qwen3-32b"};
  EXPECT_EQ(preset_names(PresetKind::kModel), models);
  const std::vector<std::string> gpus = {"a100-40g",      "a100-80g", "b200", "gb200",
                                         "h100-96g-500w", "h100-sxm", "h200", "mi300x"};
  EXPECT_EQ(preset_names(PresetKind::kGpu), gpus);
  const std::vector<std::string> clusters = {"dgx-a100-40g",
                                             "dgx-a100-80g",
                                             "dgx-b200",
                                             "dgx-h100",
                                             "dgx-h200",
                                             "gb200-nvl72",
                                             "h100-96g-500w-roce",
                                             "jean-zay-a100",
                                             "llama3-h100-roce",
                                             "mosaic-a100-40g-roce",
                                             "mosaic-a100-80g-roce",
                                             "mosaic-h100-roce",
                                             "vtrain-a100-cluster"};
  EXPECT_EQ(preset_names(PresetKind::kCluster), clusters);
}

TEST(Presets, EveryPresetParsesAndCarriesItsFileName) {
  std::set<std::string> all;
  for (PresetKind kind : {PresetKind::kModel, PresetKind::kGpu, PresetKind::kCluster}) {
    for (const std::string& name : preset_names(kind)) {
      // Lowercase words joined by hyphens; a dot only inside a version or size ("llama3.1-8b").
      EXPECT_TRUE(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") ==
                      std::string::npos &&
                  name.front() >= 'a' && name.front() <= 'z' && name.back() != '-' &&
                  name.find("--") == std::string::npos)
          << name;
      EXPECT_TRUE(all.insert(name).second) << name << " names presets of two kinds";
      const std::string parsed = kind == PresetKind::kModel ? model_preset(name).name
                                 : kind == PresetKind::kGpu ? gpu_preset(name).name
                                                            : cluster_preset(name).name;
      EXPECT_EQ(parsed, name);
    }
  }
}

TEST(Presets, EveryGpuCitesItsSourcesAndHasSaneFractions) {
  for (const std::string& name : preset_names(PresetKind::kGpu)) {
    const GpuSpec g = gpu_preset(name);
    EXPECT_NE(preset_yaml(name).find("# "), std::string::npos) << name;
    for (double f : {g.matmul_efficiency, g.memory_efficiency, g.attention_efficiency}) {
      EXPECT_GT(f, 0.2) << name;
      EXPECT_LE(f, 1.0) << name;
    }
    EXPECT_GT(g.peak_bf16_flops, g.peak_tf32_flops) << name;
    EXPECT_GT(g.peak_tf32_flops, g.peak_fp32_flops) << name;
    if (g.peak_fp8_flops > 0) {
      // FP8 doubles the BF16 rate on every part listed (datasheets round both).
      EXPECT_NEAR(g.peak_fp8_flops / g.peak_bf16_flops, 2.0, 0.01) << name;
    }
  }
}

// The table "The `cluster` column" of ../shared/validation/README.md, figure by figure.
TEST(Presets, ValidationClustersHoldExactlyTheFactsOfTheValidationReadme) {
  struct Facts {
    const char* cluster;
    double peak_bf16_tflops;
    double hbm_tb_per_s;
    double tdp_w;
    double power_limit_w;                // 0: none stated
    double nvlink_both_directions_gb_s;  // per GPU
    double scale_out_gbit_s_per_node;    // all NICs of one node together
  };
  const Facts facts[] = {
      {"dgx-a100-40g", 312, 1.555, 400, 0, 600, 8 * 200},
      {"dgx-a100-80g", 312, 2.039, 400, 0, 600, 8 * 200},
      {"dgx-h100", 989, 3.35, 700, 0, 900, 8 * 400},
      {"llama3-h100-roce", 989, 3.35, 700, 0, 900, 8 * 400},  // 400 Gb/s per GPU, 8 per node
      {"h100-96g-500w-roce", 989, 2.4, 700, 500, 900, 8 * 400},
      {"mosaic-h100-roce", 989, 3.35, 700, 0, 900, 1600},
      {"mosaic-a100-80g-roce", 312, 2.039, 400, 0, 600, 1600},
      {"mosaic-a100-40g-roce", 312, 1.555, 400, 0, 600, 1600},
  };
  for (const Facts& f : facts) {
    SCOPED_TRACE(f.cluster);
    const ClusterSpec c = cluster_preset(f.cluster);
    EXPECT_EQ(c.gpus_per_node, 8);
    EXPECT_DOUBLE_EQ(c.gpu.peak_bf16_flops, f.peak_bf16_tflops * 1e12);
    EXPECT_DOUBLE_EQ(c.gpu.hbm_bandwidth_Bps, f.hbm_tb_per_s * 1e12);
    EXPECT_DOUBLE_EQ(c.gpu.tdp_w, f.tdp_w);
    EXPECT_DOUBLE_EQ(c.gpu.power_limit_w, f.power_limit_w);
    ASSERT_GE(c.levels.size(), 2u);
    EXPECT_EQ(c.levels[0].domain_gpus, 8);
    // Levels hold per-direction bandwidth: half the "both directions" datasheet figure.
    EXPECT_DOUBLE_EQ(c.levels[0].bandwidth_per_gpu_Bps, f.nvlink_both_directions_gb_s * 1e9 / 2);
    // A node's NICs shared by its 8 GPUs, bits to bytes.
    EXPECT_DOUBLE_EQ(c.levels[1].bandwidth_per_gpu_Bps, f.scale_out_gbit_s_per_node * 1e9 / 8 / 8);
    for (const TopologyLevel& l : c.levels) {
      if (std::string(f.cluster) != "llama3-h100-roce") {
        EXPECT_DOUBLE_EQ(l.oversubscription, 1);
      }
    }
  }
  EXPECT_DOUBLE_EQ(cluster_preset("dgx-h100").gpu.peak_fp8_flops, 1979e12);
  EXPECT_DOUBLE_EQ(cluster_preset("dgx-a100-40g").gpu.peak_fp8_flops, 0);
  // Llama 3: full bisection inside pods of 3,072 GPUs, 1:7 oversubscribed between pods.
  const ClusterSpec llama = cluster_preset("llama3-h100-roce");
  ASSERT_EQ(llama.levels.size(), 3u);
  EXPECT_EQ(llama.levels[1].domain_gpus, 3072);
  EXPECT_DOUBLE_EQ(llama.levels[1].oversubscription, 1);
  EXPECT_EQ(llama.levels[2].domain_gpus, 0);
  EXPECT_DOUBLE_EQ(llama.levels[2].oversubscription, 7);
  EXPECT_DOUBLE_EQ(llama.levels[2].bandwidth_per_gpu_Bps, 400e9 / 8);
}

// vTrain's multi-node validation configs (config/validation/multi/*.json): "node_size": 8,
// "inter_node_bandwidth": 800 (Gbit/s per node), A100 GPUs.
TEST(Presets, VtrainClusterHoldsTheFactsOfVtrainsMultiNodeConfigs) {
  const ClusterSpec c = cluster_preset("vtrain-a100-cluster");
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(c.gpu.peak_bf16_flops, 312e12);
  ASSERT_EQ(c.levels.size(), 2u);
  EXPECT_EQ(c.levels[0].domain_gpus, 8);
  EXPECT_DOUBLE_EQ(c.levels[1].bandwidth_per_gpu_Bps, 800e9 / 8 / 8);
}

TEST(Presets, EveryClusterOfThePublishedRunsIsAPreset) {
  const std::string path = kSharedDir + "/validation/published_runs.csv";
  const core::CsvTable runs = core::read_csv(path, core::read_file(path));
  const int column = runs.column("cluster");
  ASSERT_GE(column, 0);
  for (const core::CsvRow& row : runs.rows) {
    EXPECT_NO_THROW(cluster_preset(row.cells[static_cast<size_t>(column)])) << "line " << row.line;
  }
}

// Shapes of the published runs (layers, hidden, ffn, heads, vocab) against the model presets.
TEST(Presets, ModelShapesMatchThePublishedRuns) {
  const std::map<std::string, std::string> preset_of = {{"GPT-1.7B", "megatron-gpt-1.7b"},
                                                        {"GPT-3.6B", "megatron-gpt-3.6b"},
                                                        {"GPT-7.5B", "megatron-gpt-7.5b"},
                                                        {"GPT-18.4B", "megatron-gpt-18.4b"},
                                                        {"GPT-39.1B", "megatron-gpt-39.1b"},
                                                        {"GPT-76.1B", "megatron-gpt-76.1b"},
                                                        {"GPT-145.6B", "megatron-gpt-145.6b"},
                                                        {"GPT-310.1B", "megatron-gpt-310.1b"},
                                                        {"GPT-529.6B", "megatron-gpt-529.6b"},
                                                        {"GPT-1008.0B", "megatron-gpt-1t"},
                                                        {"GPT-3 175B", "gpt3-175b"},
                                                        {"MPT-7b", "mpt-7b"},
                                                        {"MPT-13b", "mpt-13b"},
                                                        {"MPT-30b", "mpt-30b"},
                                                        {"MPT-70b", "mpt-70b"},
                                                        {"Llama 2 13B", "llama2-13b"},
                                                        {"Llama 2 70B", "llama2-70b"}};
  const std::string path = kSharedDir + "/validation/published_runs.csv";
  const core::CsvTable runs = core::read_csv(path, core::read_file(path));
  int checked = 0;
  for (const core::CsvRow& row : runs.rows) {
    const auto cell = [&](const char* name) { return row.cells[runs.column(name)]; };
    const auto it = preset_of.find(cell("model"));
    if (it == preset_of.end()) continue;
    SCOPED_TRACE(it->second + " at line " + std::to_string(row.line));
    const ModelSpec m = model_preset(it->second);
    EXPECT_EQ(std::to_string(m.layers), cell("layers"));
    EXPECT_EQ(std::to_string(m.hidden), cell("hidden"));
    EXPECT_EQ(std::to_string(m.ffn), cell("ffn"));
    EXPECT_EQ(std::to_string(m.vocab), cell("vocab"));
    if (!cell("heads").empty()) {
      EXPECT_EQ(std::to_string(m.heads), cell("heads"));
    }
    if (!cell("kv_heads").empty()) {
      EXPECT_EQ(std::to_string(m.kv_heads), cell("kv_heads"));
    }
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST(Presets, UnknownNameSuggestsTheNearestPreset) {
  EXPECT_EQ(error_of([] { model_preset("llama3-405b"); }),
            "unknown model preset \"llama3-405b\"\n"
            "hint: did you mean \"llama3.1-405b\"?");
  EXPECT_EQ(error_of([] { cluster_preset("dgx-h10"); }),
            "unknown cluster preset \"dgx-h10\"\n"
            "hint: did you mean \"dgx-h100\"?");
  EXPECT_EQ(error_of([] { gpu_preset("tpu-v5p"); }),
            "unknown GPU preset \"tpu-v5p\"\n"
            "hint: valid: a100-40g, a100-80g, b200, gb200, h100-96g-500w, h100-sxm, h200, mi300x");
  EXPECT_EQ(error_of([] { preset_yaml("mixtral-8x7"); }),
            "unknown preset \"mixtral-8x7\"\n"
            "hint: did you mean \"mixtral-8x7b\"?");
}

TEST(Presets, PresetYamlIsTheDataFileVerbatimAndReadsBackTheSame) {
  std::ifstream in(std::string(STEPCAST_SOURCE_DIR) + "/data/clusters/llama3-h100-roce.yaml");
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(preset_yaml("llama3-h100-roce"), file);
  const ClusterSpec a = cluster_preset("llama3-h100-roce");
  const ClusterSpec b = read_cluster_yaml("edited.yaml", preset_yaml("llama3-h100-roce"));
  ASSERT_EQ(a.levels.size(), b.levels.size());
  EXPECT_DOUBLE_EQ(a.levels[2].oversubscription, b.levels[2].oversubscription);
  EXPECT_EQ(read_model_yaml("m.yaml", preset_yaml("deepseek-v3")).moe.experts, 256);
  EXPECT_EQ(read_gpu_yaml("g.yaml", preset_yaml("h200")).sm_count, 132);
}

class LoadFromFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    // ctest runs each test in its own process, in parallel: the directory names both.
    dir_ = std::filesystem::temp_directory_path() /
           ("stepcast_presets_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  std::filesystem::path dir_;
};

TEST_F(LoadFromFiles, ReadsYamlJsonAndPresetNames) {
  const std::string model = write("tiny.yml", preset_yaml("llama3.1-8b"));
  EXPECT_EQ(load_model(model).ffn, 14336);
  EXPECT_EQ(load_model("llama3.1-8b").ffn, 14336);
  const std::string config =
      std::string(STEPCAST_SOURCE_DIR) + "/tests/data/good/Llama-3.1-8B/config.json";
  EXPECT_EQ(load_model(config).kv_heads, 8);
  const std::string cluster = write("mine.yaml", preset_yaml("dgx-h100"));
  EXPECT_EQ(load_cluster(cluster).levels.size(), 2u);
  EXPECT_EQ(load_cluster("dgx-h100").gpu.name, "h100-sxm");
}

TEST_F(LoadFromFiles, AClusterFileNamesAGpuFileBesideIt) {
  std::string gpu = preset_yaml("h100-sxm");
  gpu.replace(gpu.find("name: h100-sxm"), 14, "name: my-h100");
  write("my-h100.yaml", gpu);
  std::string text = preset_yaml("dgx-h100");
  const size_t at = text.find("gpu: h100-sxm");
  text.replace(at, 13, "gpu: my-h100.yaml");
  const std::string cluster = write("mine.yaml", text);
  EXPECT_EQ(load_cluster(cluster).gpu.name, "my-h100");
  EXPECT_EQ(load_gpu((dir_ / "my-h100.yaml").string()).peak_bf16_flops, gpu_preset("h100-sxm").peak_bf16_flops);

  // The error of a GPU file that is not there is given at the cluster file's `gpu:`.
  text.replace(at, 17, "gpu: gone.yaml");
  const std::string broken = write("broken.yaml", text);
  EXPECT_EQ(error_of([&] { load_cluster(broken); }),
            broken + ":7:6: gpu: " + (dir_ / "gone.yaml").string() +
                ": cannot open for reading: No such file or directory\n"
                "  gpu: gone.yaml\n"
                "       ^");
  // A cluster file naming itself as its GPU is told so.
  text.replace(text.find("gpu: gone.yaml"), 14, "gpu: broken.yaml");
  write("broken.yaml", text);
  EXPECT_EQ(error_of([&] { load_cluster(broken); }).rfind(broken + ":7:6: gpu: " + broken + " is this cluster file itself\n", 0),
            0u);
  // One inside the GPU file is given there.
  gpu.replace(gpu.find("sm_count: 132"), 13, "sm_count: 0");
  const std::string bad_gpu = write("my-h100.yaml", gpu);
  EXPECT_EQ(error_of([&] { load_cluster(cluster); }).rfind(bad_gpu + ":12:11: sm_count:", 0), 0u);
}

TEST_F(LoadFromFiles, AFolderNamedLikeAPresetDoesNotHideThePreset) {
  // Found when `validate` on the H200 rows ran beside a folder named h200: dgx-h200's `gpu: h200`
  // was read as that folder, and every row failed ("h200: is a directory, not a GPU file").
  for (const char* name : {"h200", "dgx-h200", "llama3.1-8b"}) std::filesystem::create_directory(dir_ / name);
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  EXPECT_EQ(load_cluster("dgx-h200").gpu.name, "h200");
  EXPECT_EQ(load_gpu("h200").sm_count, 132);
  EXPECT_EQ(load_model("llama3.1-8b").ffn, 14336);
  // Written as a path, the folder is what is read.
  const std::string as_path = error_of([] { load_gpu("./h200"); });
  std::filesystem::current_path(before);
  EXPECT_EQ(as_path.rfind("./h200: is a directory, not a GPU file", 0), 0u) << as_path;
}

TEST_F(LoadFromFiles, ErrorsNameThePath) {
  const std::string missing = (dir_ / "missing.yaml").string();
  try {
    load_model(missing);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(std::string(e.what()),
              missing + ": cannot open for reading: No such file or directory");
  }
  const std::string bad = write("bad.yaml", "name: x\nlayers: [\n");
  EXPECT_EQ(error_of([&] { load_model(bad); }).substr(0, bad.size() + 4), bad + ":3:1");
  const std::string json = write("cluster.json", "{}");
  EXPECT_EQ(error_of([&] { load_cluster(json); }),
            json +
                ": a cluster is read from YAML, not JSON\n"
                "hint: give a cluster preset name or a .yaml file");
}

}  // namespace
}  // namespace stepcast::spec
