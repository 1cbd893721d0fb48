#include "spec/yaml_reader.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "../error_text.h"
#include "core/error.h"
#include "spec/presets.h"

namespace stepcast::spec {
namespace {

using testing::error_of;

const char* const kModel =
    "name: tiny\n"
    "layers: 2\n"
    "hidden: 64\n"
    "ffn: 256\n"
    "heads: 4\n"
    "vocab: 100\n"
    "max_seq: 128\n"
    "mlp: swiglu\n"
    "norm: rmsnorm\n"
    "position: rope\n"
    "tied_embeddings: false\n"
    "bias: false\n";

const char* const kGpu =
    "name: gpu\n"
    "peak_fp32: \"60 TFLOP/s\"\n"
    "peak_tf32: \"500 TFLOP/s\"\n"
    "peak_bf16: \"1000 TFLOP/s\"\n"
    "hbm: \"80 GiB\"\n"
    "hbm_bandwidth: \"3 TB/s\"\n"
    "tdp: \"700 W\"\n"
    "sm_count: 132\n"
    "matmul_efficiency: 0.8\n"
    "memory_efficiency: 0.9\n"
    "attention_efficiency: 0.4\n"
    "kernel_overhead: \"3 us\"\n";

// The hint an unknown model key gets: every key the model schema reads, in the order it reads them.
const char* const kValidModelKeys =
    "hint: valid: name, layers, hidden, ffn, heads, kv_heads, head_dim, vocab, max_seq, mlp, norm, "
    "position, tied_embeddings, bias, qk_norm, sandwich_norm, logit_softcap, hidden_dropout, "
    "attention_window, local_layers, attention_chunked, moe, mla";

const char* const kCluster =
    "name: mine\n"
    "gpu: h100-sxm\n"
    "gpus_per_node: 8\n"
    "levels:\n"
    "  - name: nvlink\n"
    "    domain_gpus: 8\n"
    "    bandwidth_per_gpu: \"450 GB/s\"\n"
    "    latency: \"1 us\"\n"
    "  - name: ib\n"
    "    domain_gpus: 0\n"
    "    nics_per_node: 8\n"
    "    nic_bandwidth: \"400 Gbit/s\"\n"
    "    latency: \"3 us\"\n";

// `base` with the first occurrence of `from` replaced by `to`.
std::string edit(std::string base, const std::string& from, const std::string& to) {
  const size_t at = base.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) base.replace(at, from.size(), to);
  return base;
}

TEST(YamlReader, ReadsModelAndDefaultsKvHeadsToHeads) {
  const ModelSpec m = read_model_yaml("m.yaml", kModel);
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.layers, 2);
  EXPECT_EQ(m.hidden, 64);
  EXPECT_EQ(m.ffn, 256);
  EXPECT_EQ(m.heads, 4);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.head_dim, 0);
  EXPECT_EQ(m.vocab, 100);
  EXPECT_EQ(m.max_seq, 128);
  EXPECT_EQ(m.mlp, MlpKind::kSwiglu);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.position, PositionKind::kRope);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.bias);
  EXPECT_EQ(m.hidden_dropout, 0);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_FALSE(m.is_moe());
}

TEST(YamlReader, ReadsLatentAttention) {
  const ModelSpec m = read_model_yaml(
      "m.yaml",
      std::string(kModel) +
          "mla:\n  q_lora_rank: 32\n  kv_lora_rank: 16\n  qk_rope_head_dim: 8\n  v_head_dim: 12\n");
  ASSERT_TRUE(m.is_mla());
  EXPECT_EQ(m.mla.q_lora_rank, 32);
  EXPECT_EQ(m.mla.kv_lora_rank, 16);
  EXPECT_EQ(m.mla.qk_rope_head_dim, 8);
  EXPECT_EQ(m.value_head_dim(), 12);
  EXPECT_EQ(m.effective_head_dim(), 16);  // 64 / 4 heads: queries and keys keep head_dim
}

TEST(YamlReader, ReadsASlidingWindowOnEveryLayerOrOnSome) {
  const ModelSpec every = read_model_yaml("m.yaml", std::string(kModel) + "attention_window: 64\n");
  EXPECT_EQ(every.attention_window, 64);
  EXPECT_EQ(every.local_layers, 2);
  EXPECT_EQ(
      read_model_yaml("m.yaml", std::string(kModel) + "attention_window: 64\nlocal_layers: 1\n")
          .local_layers,
      1);
}

TEST(YamlReader, ReadsMoeLayersEveryOtherLayer) {
  const ModelSpec m = read_model_yaml(
      "m.yaml", std::string(kModel) +
                    "moe:\n  experts: 4\n  top_k: 1\n  expert_ffn: 128\n  layer_interval: 2\n");
  EXPECT_TRUE(m.is_moe_layer(0));
  EXPECT_FALSE(m.is_moe_layer(1));
  EXPECT_EQ(m.moe_layers(), 1);
}

TEST(YamlReader, MaxSeqIsOptionalWithoutLearnedPositions) {
  EXPECT_EQ(read_model_yaml("m.yaml", edit(kModel, "max_seq: 128\n", "")).max_seq, 0);
}

TEST(YamlReader, ReadsQueryKeyNorms) {
  EXPECT_TRUE(read_model_yaml("m.yaml", std::string(kModel) + "qk_norm: true\n").qk_norm);
}

TEST(YamlReader, ReadsGemmasGeluGateSandwichNormsAndLogitCap) {
  const ModelSpec m = read_model_yaml("m.yaml", edit(kModel, "mlp: swiglu", "mlp: geglu") +
                                                    "sandwich_norm: true\nlogit_softcap: 30\n");
  EXPECT_EQ(m.mlp, MlpKind::kGeglu);
  EXPECT_TRUE(m.sandwich_norm);
  EXPECT_EQ(m.logit_softcap, 30);
}

TEST(YamlReader, ReadsHiddenDropoutAsAProbability) {
  EXPECT_EQ(read_model_yaml("m.yaml", std::string(kModel) + "hidden_dropout: 0.1\n").hidden_dropout, 0.1);
  try {
    read_model_yaml("m.yaml", std::string(kModel) + "hidden_dropout: 10%\n");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hidden_dropout: expected a number in [0, 1], got \"10%\""),
              std::string::npos)
        << e.what();
  }
}

TEST(YamlReader, ReadsMoeBlockWithDefaults) {
  const ModelSpec m = read_model_yaml("m.yaml", std::string(kModel) +
                                                    "kv_heads: 2\nmoe:\n  experts: 8\n  top_k: 2\n"
                                                    "  expert_ffn: 128\n");
  EXPECT_EQ(m.kv_heads, 2);
  EXPECT_EQ(m.moe.experts, 8);
  EXPECT_EQ(m.moe.top_k, 2);
  EXPECT_EQ(m.moe.expert_ffn, 128);
  EXPECT_EQ(m.moe.shared_experts, 0);
  EXPECT_EQ(m.moe.dense_layers, 0);
  EXPECT_DOUBLE_EQ(m.moe.capacity_factor, 1.0);
}

TEST(YamlReader, ReadsAGemmGridInMThenNThenKOrder) {
  const GpuSpec g = read_gpu_yaml("g.yaml", std::string(kGpu) +
                                                "gemm_efficiency:\n  sizes: [256, 512]\n  bf16:\n"
                                                "    - [[0.1, 0.2], [0.3, 0.4]]\n    - [[0.5, 0.6], [0.7, 0.8]]\n");
  EXPECT_EQ(g.gemm_grid.sizes, (std::vector<double>{256, 512}));
  EXPECT_EQ(g.gemm_grid.efficiency, (std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}));
  EXPECT_TRUE(read_gpu_yaml("g.yaml", kGpu).gemm_grid.sizes.empty());
}

TEST(YamlReader, ReadsGpuQuantitiesInSiUnits) {
  const GpuSpec g = read_gpu_yaml("g.yaml", std::string(kGpu) + "power_limit: \"500 W\"\n");
  EXPECT_DOUBLE_EQ(g.peak_bf16_flops, 1000e12);
  EXPECT_DOUBLE_EQ(g.hbm_bytes, 80.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth_Bps, 3e12);
  EXPECT_DOUBLE_EQ(g.peak_fp8_flops, 0);  // absent: no FP8 tensor cores
  EXPECT_DOUBLE_EQ(g.power_limit_w, 500);
  EXPECT_DOUBLE_EQ(g.kernel_overhead_s, 3e-6);
  EXPECT_DOUBLE_EQ(g.fp8_matmul_efficiency, 0);
}

TEST(YamlReader, EagerRmsNormBytesDefaultToTheA100sMeasurementAndStayWithinAThousand) {
  const spec::GpuSpec none = read_gpu_yaml("g.yaml", kGpu);
  EXPECT_EQ(none.eager_rmsnorm_bytes, 58);
  EXPECT_EQ(none.eager_rmsnorm_backward_bytes, 155);
  const spec::GpuSpec given = read_gpu_yaml(
      "g.yaml", std::string(kGpu) + "eager_rmsnorm_bytes: 46\neager_rmsnorm_backward_bytes: 108\n");
  EXPECT_EQ(given.eager_rmsnorm_bytes, 46);
  EXPECT_EQ(given.eager_rmsnorm_backward_bytes, 108);
  EXPECT_THROW(read_gpu_yaml("g.yaml", std::string(kGpu) + "eager_rmsnorm_bytes: 0\n"), Error);
  EXPECT_THROW(read_gpu_yaml("g.yaml", std::string(kGpu) + "eager_rmsnorm_backward_bytes: 1080\n"), Error);
}

TEST(YamlReader, MeasuredRatesOfOddWidthGemmsAndOptimizerKernelsAreOptionalFractions) {
  const spec::GpuSpec none = read_gpu_yaml("g.yaml", kGpu);
  EXPECT_EQ(none.misaligned_gemm_efficiency, 0);
  EXPECT_EQ(none.optimizer_memory_efficiency, 0);
  const spec::GpuSpec given = read_gpu_yaml(
      "g.yaml", std::string(kGpu) + "misaligned_gemm_efficiency: 0.13\noptimizer_memory_efficiency: 0.763\n");
  EXPECT_DOUBLE_EQ(given.misaligned_gemm_efficiency, 0.13);
  EXPECT_DOUBLE_EQ(given.optimizer_memory_efficiency, 0.763);
  EXPECT_THROW(read_gpu_yaml("g.yaml", std::string(kGpu) + "optimizer_memory_efficiency: 76.3\n"), Error);
  // Narrow heads' rates default to the 128-wide rate.
  EXPECT_EQ(none.attention_head64_rate, 1);
  EXPECT_EQ(none.cudnn_attention_head64_rate, 1);
  EXPECT_DOUBLE_EQ(read_gpu_yaml("g.yaml", std::string(kGpu) + "cudnn_attention_head64_rate: 0.813\n")
                       .cudnn_attention_head64_rate,
                   0.813);
}

TEST(YamlReader, AttentionHalfKeysDefaultsToTheA100CurveAndCudnnsCurveToNone) {
  EXPECT_DOUBLE_EQ(read_gpu_yaml("g.yaml", kGpu).attention_half_keys, 384);
  EXPECT_DOUBLE_EQ(read_gpu_yaml("g.yaml", std::string(kGpu) + "attention_half_keys: 310\n").attention_half_keys, 310);
  // cuDNN's curve is optional: absent, the GPU has none (--attention cudnn is refused).
  EXPECT_EQ(read_gpu_yaml("g.yaml", kGpu).cudnn_attention_efficiency, 0);
  const spec::GpuSpec cudnn = read_gpu_yaml(
      "g.yaml", std::string(kGpu) + "cudnn_attention_efficiency: 0.582\ncudnn_attention_half_keys: 838\n");
  EXPECT_DOUBLE_EQ(cudnn.cudnn_attention_efficiency, 0.582);
  EXPECT_DOUBLE_EQ(cudnn.cudnn_attention_half_keys, 838);
}

TEST(YamlReader, ConvertsNicsPerNodeToPerGpuBandwidth) {
  const ClusterSpec c = read_cluster_yaml("c.yaml", kCluster);
  EXPECT_EQ(c.gpu.name, "h100-sxm");
  EXPECT_EQ(c.max_gpus, 0);
  ASSERT_EQ(c.levels.size(), 2u);
  EXPECT_DOUBLE_EQ(c.levels[0].bandwidth_per_gpu_Bps, 450e9);
  EXPECT_DOUBLE_EQ(c.levels[0].latency_s, 1e-6);
  // 8 NICs of 400 Gbit/s shared by 8 GPUs: 400e9 / 8 bytes/s per GPU and direction.
  EXPECT_DOUBLE_EQ(c.levels[1].bandwidth_per_gpu_Bps, 8 * 400e9 / 8 / 8);
  EXPECT_DOUBLE_EQ(c.levels[1].oversubscription, 1.0);
}

TEST(YamlReader, ReadsInlineGpuMap) {
  std::string gpu = "gpu:\n";
  for (size_t start = 0; start < std::string(kGpu).size();) {
    const size_t end = std::string(kGpu).find('\n', start);
    gpu += "  " + std::string(kGpu).substr(start, end + 1 - start);
    start = end + 1;
  }
  const ClusterSpec c = read_cluster_yaml("c.yaml", edit(kCluster, "gpu: h100-sxm\n", gpu));
  EXPECT_EQ(c.gpu.name, "gpu");
  EXPECT_DOUBLE_EQ(c.gpu.peak_bf16_flops, 1000e12);
}

struct ErrorCase {
  const char* what;
  std::function<void()> read;
  std::string expected;
};

// Every error site of the reader, message text verbatim (STYLE.md §3.7).
TEST(YamlReader, ErrorMessages) {
  const ErrorCase cases[] = {
      {"malformed YAML is located at file:line:column",
       [] { read_model_yaml("m.yaml", "name: x\nlayers: [1, 2\nhidden: 3\n"); },
       "m.yaml:3:7: malformed YAML: end of sequence flow not found\n"
       "  hidden: 3\n"
       "        ^"},
      {"bare number where a unit is required",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "\"450 GB/s\"", "450")); },
       "c.yaml:7:24: levels[0].bandwidth_per_gpu: expected a bandwidth such as \"900 GB/s\" or "
       "\"400 Gbit/s\", got \"450\"\n"
       "      bandwidth_per_gpu: 450\n"
       "                         ^\n"
       "hint: accepted units: B/s, KB/s, MB/s, GB/s, TB/s, bit/s, Kbit/s, Mbit/s, Gbit/s, "
       "Tbit/s, Gb/s, Gbps, Tb/s, Mb/s"},
      {"a scale-up domain that neither fits in a node nor makes whole nodes",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "gpus_per_node: 8", "gpus_per_node: 3")); },
       "c.yaml:6:18: levels[0].domain_gpus: 8 GPUs neither lie within a node of 3 nor make whole "
       "nodes\n"
       "      domain_gpus: 8\n"
       "                   ^\n"
       "hint: give a divisor or a multiple of gpus_per_node"},
      {"a domain that is not made of whole domains of the level inside it",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "domain_gpus: 0", "domain_gpus: 20")); },
       "c.yaml:10:18: levels[1].domain_gpus: expected a multiple of the 8 GPUs of the level "
       "inside it, got 20\n"
       "      domain_gpus: 20\n"
       "                   ^"},
      {"two levels of one name",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "name: ib", "name: nvlink")); },
       "c.yaml:9:11: levels[1].name: a second level named \"nvlink\"\n"
       "    - name: nvlink\n"
       "            ^\n"
       "hint: each level needs its own name: reports and traces tell the levels apart by it"},
      {"unknown top-level key",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "gpus_per_node", "gpus_per_nodes")); },
       "c.yaml:3:1: unknown key \"gpus_per_nodes\"\n"
       "  gpus_per_nodes: 8\n"
       "  ^\n"
       "hint: did you mean \"gpus_per_node\"?"},
      {"unknown key inside a level",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "latency: \"3 us\"", "latncy: \"3 us\"")); },
       "c.yaml:13:5: levels[1]: unknown key \"latncy\"\n"
       "      latncy: \"3 us\"\n"
       "      ^\n"
       "hint: did you mean \"latency\"?"},
      {"unknown key with nothing close lists the valid keys",
       [] { read_model_yaml("m.yaml", std::string(kModel) + "dropout: 0.1\n"); },
       "m.yaml:13:1: unknown key \"dropout\"\n"
       "  dropout: 0.1\n"
       "  ^\n" +
           std::string(kValidModelKeys)},
      {"an optional key that is present is listed once among the valid keys",
       [] { read_model_yaml("m.yaml", std::string(kModel) + "kv_heads: 2\ndropout: 0.1\n"); },
       "m.yaml:14:1: unknown key \"dropout\"\n"
       "  dropout: 0.1\n"
       "  ^\n" +
           std::string(kValidModelKeys)},
      {"a count too large for the model",
       [] { read_model_yaml("m.yaml", edit(kModel, "hidden: 64", "hidden: 99999999999")); },
       "m.yaml:3:9: hidden: expected a whole number from 1 to 2147483647, got \"99999999999\"\n"
       "  hidden: 99999999999\n"
       "          ^"},
      // A count the arithmetic holds but no model has, refused at its line.
      {"a count beyond what stepcast takes",
       [] { read_model_yaml("m.yaml", edit(kModel, "hidden: 64", "hidden: 2097152")); },
       "m.yaml:3:9: hidden: the model's hidden is 2097152, more than the 1048576 stepcast takes\n"
       "  hidden: 2097152\n"
       "          ^"},
      {"experts beyond what stepcast takes",
       [] {
         read_model_yaml("m.yaml", std::string(kModel) +
                                       "moe:\n  experts: 2147483647\n  top_k: 2\n  expert_ffn: 64\n");
       },
       "m.yaml:14:12: moe.experts: the model's experts is 2147483647, more than the 65536 stepcast takes\n"
       "    experts: 2147483647\n"
       "             ^"},
      // An interval of 2^31 - 1 once wrapped the count of MoE layers to none, silently.
      {"a MoE interval beyond what stepcast takes",
       [] {
         read_model_yaml("m.yaml", std::string(kModel) + "moe:\n  experts: 4\n  top_k: 2\n  expert_ffn: 64\n"
                                                          "  layer_interval: 2147483647\n");
       },
       "m.yaml:17:19: moe.layer_interval: the model's layer_interval is 2147483647, more than the 65536 "
       "stepcast takes\n"
       "    layer_interval: 2147483647\n"
       "                    ^"},
      // "moe" is one edit from "mlp", but a key of the schema, not a misspelt "mlp".
      {"missing mlp beside a moe block",
       [] {
         read_model_yaml("m.yaml", edit(kModel, "mlp: swiglu\n", "") +
                                       "moe:\n  experts: 4\n  top_k: 2\n  expert_ffn: 64\n");
       },
       "m.yaml:1:1: missing required key \"mlp\"\n"
       "  name: tiny\n"
       "  ^"},
      {"missing required key", [] { read_model_yaml("m.yaml", edit(kModel, "vocab: 100\n", "")); },
       "m.yaml:1:1: missing required key \"vocab\"\n"
       "  name: tiny\n"
       "  ^"},
      {"duplicate key", [] { read_model_yaml("m.yaml", std::string(kModel) + "layers: 3\n"); },
       "m.yaml:13:1: duplicate key \"layers\"\n"
       "  layers: 3\n"
       "  ^"},
      {"wrong type for a count",
       [] { read_model_yaml("m.yaml", edit(kModel, "layers: 2", "layers: 2.5")); },
       "m.yaml:2:9: layers: expected a whole number from 1 to 2147483647, got \"2.5\"\n"
       "  layers: 2.5\n"
       "          ^"},
      {"a list where a count belongs",
       [] { read_model_yaml("m.yaml", edit(kModel, "heads: 4", "heads: [4]")); },
       "m.yaml:5:8: heads: expected a whole number from 1 to 2147483647, got a list\n"
       "  heads: [4]\n"
       "         ^"},
      {"bad enum value",
       [] { read_model_yaml("m.yaml", edit(kModel, "mlp: swiglu", "mlp: swigle")); },
       "m.yaml:8:6: mlp: unknown value \"swigle\"\n"
       "  mlp: swigle\n"
       "       ^\n"
       "hint: did you mean \"swiglu\"?"},
      {"bad enum value with nothing close",
       [] { read_model_yaml("m.yaml", edit(kModel, "position: rope", "position: xpos")); },
       "m.yaml:10:11: position: unknown value \"xpos\"\n"
       "  position: xpos\n"
       "            ^\n"
       "hint: valid: learned, rope, alibi, none"},
      {"bool that is not one",
       [] { read_model_yaml("m.yaml", edit(kModel, "bias: false", "bias: maybe")); },
       "m.yaml:12:7: bias: expected true or false, got \"maybe\"\n"
       "  bias: maybe\n"
       "        ^"},
      {"a collective holding every SM",
       [] { read_gpu_yaml("g.yaml", std::string(kGpu) + "collective_sms: 132\n"); },
       "g.yaml:13:17: collective_sms: collective_sms 132 leaves no SM of the 132 for compute; "
       "valid: 0 to 131\n"
       "  collective_sms: 132\n"
       "                  ^"},
      {"a negative attention_half_keys",
       [] { read_gpu_yaml("g.yaml", std::string(kGpu) + "attention_half_keys: -5\n"); },
       "g.yaml:13:22: attention_half_keys: expected a number in [0, 1000000], got \"-5\"\n"
       "  attention_half_keys: -5\n"
       "                       ^"},
      {"kv_heads that do not divide heads",
       [] { read_model_yaml("m.yaml", std::string(kModel) + "kv_heads: 3\n"); },
       "m.yaml:13:11: kv_heads: kv_heads 3 does not divide heads 4\n"
       "  kv_heads: 3\n"
       "            ^"},
      {"heads that do not divide the hidden size",
       [] { read_model_yaml("m.yaml", edit(kModel, "heads: 4", "heads: 3")); },
       "m.yaml:5:8: heads: 3 heads do not divide hidden 64\n"
       "  heads: 3\n"
       "         ^\n"
       "hint: give head_dim, or a head count that divides the hidden size"},
      {"top_k above the expert count",
       [] {
         read_model_yaml("m.yaml",
                         std::string(kModel) + "moe:\n  experts: 2\n  top_k: 4\n  expert_ffn: 8\n");
       },
       "m.yaml:15:10: moe.top_k: top_k 4 exceeds the 2 experts\n"
       "    top_k: 4\n"
       "           ^"},
      {"GEMM grid sizes out of order",
       [] {
         read_gpu_yaml("g.yaml", std::string(kGpu) + "gemm_efficiency:\n  sizes: [512, 256]\n  bf16: []\n");
       },
       "g.yaml:14:16: gemm_efficiency.sizes[1]: expected a number > 512, got \"256\"\n"
       "    sizes: [512, 256]\n"
       "                 ^"},
      {"GEMM grid missing a k entry",
       [] {
         read_gpu_yaml("g.yaml", std::string(kGpu) +
                                     "gemm_efficiency:\n  sizes: [256, 512]\n"
                                     "  bf16:\n    - [[0.1, 0.2], [0.1, 0.2]]\n    - [[0.1, 0.2], [0.1]]\n");
       },
       "g.yaml:17:20: gemm_efficiency.bf16[1][1]: expected a list of 2 entries, got a list of 1\n"
       "      - [[0.1, 0.2], [0.1]]\n"
       "                     ^"},
      {"efficiency above one",
       [] {
         read_gpu_yaml("g.yaml", edit(kGpu, "memory_efficiency: 0.9", "memory_efficiency: 90"));
       },
       "g.yaml:10:20: memory_efficiency: expected a number in [0.000001, 1], got \"90\"\n"
       "  memory_efficiency: 90\n"
       "                     ^"},
      // The cost model divides by it: a denormal one was an infinite step time naming no field.
      {"efficiency under a millionth",
       [] {
         read_gpu_yaml("g.yaml", edit(kGpu, "memory_efficiency: 0.9", "memory_efficiency: 1e-320"));
       },
       "g.yaml:10:20: memory_efficiency: expected a number in [0.000001, 1], got \"1e-320\"\n"
       "  memory_efficiency: 1e-320\n"
       "                     ^"},
      {"zero bandwidth", [] { read_gpu_yaml("g.yaml", edit(kGpu, "\"3 TB/s\"", "\"0 TB/s\"")); },
       "g.yaml:6:16: hbm_bandwidth: expected a value above zero, got \"0 TB/s\"\n"
       "  hbm_bandwidth: \"0 TB/s\"\n"
       "                 ^"},
      // Not zero, but a denormal whose quotients overflow to an infinite step time.
      {"bandwidth under a byte per second",
       [] { read_gpu_yaml("g.yaml", edit(kGpu, "\"3 TB/s\"", "\"1e-320 TB/s\"")); },
       "g.yaml:6:16: hbm_bandwidth: expected at least 1 B/s, got \"1e-320 TB/s\"\n"
       "  hbm_bandwidth: \"1e-320 TB/s\"\n"
       "                 ^"},
      {"unknown GPU preset in a cluster",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "gpu: h100-sxm", "gpu: h100-sxn")); },
       "c.yaml:2:6: gpu: unknown GPU preset \"h100-sxn\"\n"
       "  gpu: h100-sxn\n"
       "       ^\n"
       "hint: did you mean \"h100-sxm\"?"},
      {"inline GPU map with an error names the nested field",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "gpu: h100-sxm", "gpu: {name: g}")); },
       "c.yaml:2:6: gpu: missing required key \"peak_fp32\"\n"
       "  gpu: {name: g}\n"
       "       ^"},
      {"both bandwidth forms in one level",
       [] {
         read_cluster_yaml("c.yaml", edit(kCluster, "    latency: \"1 us\"\n",
                                          "    latency: \"1 us\"\n    nics_per_node: 8\n"));
       },
       "c.yaml:9:5: levels[0].nics_per_node: give bandwidth_per_gpu or nics_per_node with "
       "nic_bandwidth, not both\n"
       "      nics_per_node: 8\n"
       "      ^"},
      {"no bandwidth in a level",
       [] {
         read_cluster_yaml("c.yaml", edit(kCluster, "    bandwidth_per_gpu: \"450 GB/s\"\n", ""));
       },
       "c.yaml:5:5: levels[0].bandwidth_per_gpu: missing required key \"bandwidth_per_gpu\" (or "
       "\"nics_per_node\" with \"nic_bandwidth\")\n"
       "    - name: nvlink\n"
       "      ^"},
      {"levels out of order",
       [] { read_cluster_yaml("c.yaml", edit(kCluster, "domain_gpus: 0", "domain_gpus: 4")); },
       "c.yaml:10:18: levels[1].domain_gpus: expected more than the 8 GPUs of the level inside it\n"
       "      domain_gpus: 4\n"
       "                   ^\n"
       "hint: levels are listed innermost first"},
      {"oversubscription below one",
       [] { read_cluster_yaml("c.yaml", std::string(kCluster) + "    oversubscription: 0.5\n"); },
       "c.yaml:14:23: levels[1].oversubscription: expected a number >= 1, got \"0.5\"\n"
       "      oversubscription: 0.5\n"
       "                        ^"},
      {"levels that are not a list",
       [] { read_cluster_yaml("c.yaml", "name: c\ngpu: h100-sxm\ngpus_per_node: 8\nlevels: 2\n"); },
       "c.yaml:4:9: levels: expected a list of topology levels, innermost first, got \"2\"\n"
       "  levels: 2\n"
       "          ^"},
      {"an empty list of levels",
       [] {
         read_cluster_yaml("c.yaml", "name: c\ngpu: h100-sxm\ngpus_per_node: 8\nlevels: []\n");
       },
       "c.yaml:4:9: levels: expected a list of topology levels, innermost first, got an empty "
       "list\n"
       "  levels: []\n"
       "          ^"},
      {"latent attention with fewer key-value heads than query heads",
       [] {
         read_model_yaml("m.yaml",
                         edit(kModel, "heads: 4\n", "heads: 4\nkv_heads: 2\n") +
                             "mla:\n  kv_lora_rank: 16\n  qk_rope_head_dim: 8\n  v_head_dim: 12\n");
       },
       "m.yaml:15:3: mla: multi-head latent attention needs kv_heads equal to heads 4, got 2\n"
       "    kv_lora_rank: 16\n"
       "    ^\n"
       "hint: drop kv_heads, or set it to heads"},
      {"a rotary part as wide as the whole head",
       [] {
         read_model_yaml(
             "m.yaml", std::string(kModel) +
                           "mla:\n  kv_lora_rank: 16\n  qk_rope_head_dim: 16\n  v_head_dim: 12\n");
       },
       "m.yaml:15:21: mla.qk_rope_head_dim: qk_rope_head_dim 16 leaves nothing of head_dim 16\n"
       "    qk_rope_head_dim: 16\n"
       "                      ^\n"
       "hint: head_dim is the whole query and key head: qk_nope_head_dim + qk_rope_head_dim"},
      {"local layers without a window",
       [] { read_model_yaml("m.yaml", std::string(kModel) + "local_layers: 1\n"); },
       "m.yaml:13:15: local_layers: local_layers without an attention_window\n"
       "  local_layers: 1\n"
       "                ^\n"
       "hint: give attention_window, the positions a query sees on those layers"},
      {"more local layers than layers",
       [] {
         read_model_yaml("m.yaml", std::string(kModel) + "attention_window: 64\nlocal_layers: 3\n");
       },
       "m.yaml:14:15: local_layers: local_layers 3 exceeds the 2 layers\n"
       "  local_layers: 3\n"
       "                ^"},
      {"learned positions without max_seq",
       [] {
         read_model_yaml("m.yaml", edit(edit(kModel, "max_seq: 128\n", ""), "position: rope",
                                        "position: learned"));
       },
       "m.yaml:9:11: max_seq: learned positions need max_seq, the positions the table holds\n"
       "  position: learned\n"
       "            ^"},
      {"a document that is not a map", [] { read_gpu_yaml("g.yaml", "- a\n- b\n"); },
       "g.yaml:1:1: expected a map of keys, got a list\n"
       "  - a\n"
       "  ^"},
      {"an empty document", [] { read_gpu_yaml("g.yaml", "# nothing\n"); },
       "g.yaml: the document is empty; expected a map of keys"},
      // Its keys were silently ignored; a start marker and an empty trailing document are not.
      {"a second document",
       [] { read_model_yaml("m.yaml", "---\n" + std::string(kModel) + "---\nlayers: 4\n...\n---\n"); },
       "m.yaml:15:1: a second YAML document, after \"---\": a file holds one document, and this one would be "
       "ignored\n"
       "  layers: 4\n"
       "  ^\n"
       "hint: put every key in the first document"},
      {"a second document after an end marker, on the marker's line",
       [] { read_gpu_yaml("g.yaml", "name: g\n...\n--- peak_fp32: 1\n"); },
       "g.yaml:3:5: a second YAML document, after \"---\": a file holds one document, and this one would be "
       "ignored\n"
       "  --- peak_fp32: 1\n"
       "      ^\n"
       "hint: put every key in the first document"},
      // yaml-cpp reads no document from it and says nothing: it is not empty.
      {"a stray comma before the keys", [] { read_gpu_yaml("g.yaml", "# a GPU\n,\nname: g\n"); },
       "g.yaml:2:1: malformed YAML: no document could be read from here\n"
       "  ,\n"
       "  ^"},
      {"a name saved in Latin-1, which JSON output could not carry",
       [] { read_model_yaml("m.yaml", edit(kModel, "name: tiny", "name: t\xEDny")); },
       "m.yaml:1:8: byte 0xED is not UTF-8 text\n"
       "  name: t\xEDny\n"
       "         ^\n"
       "hint: save the file as UTF-8 (iconv -f latin1 -t utf-8 FILE, or the encoding it is in)"},
  };
  for (const ErrorCase& c : cases) EXPECT_EQ(error_of(c.read), c.expected) << c.what;
}

// Every prefix of a preset is malformed or incomplete somewhere: whatever the reader makes of it,
// it must answer with a value or a stepcast::Error, never another exception.
TEST(YamlReader, NoForeignExceptionEscapesOnTruncatedInput) {
  const std::string texts[] = {preset_yaml("deepseek-v3"), preset_yaml("h100-sxm"),
                               preset_yaml("llama3-h100-roce")};
  for (int kind = 0; kind < 3; ++kind) {
    const std::string& text = texts[kind];
    for (size_t n = 0; n <= text.size(); ++n) {
      const std::string prefix = text.substr(0, n);
      try {
        if (kind == 0) read_model_yaml("t.yaml", prefix);
        if (kind == 1) read_gpu_yaml("t.yaml", prefix);
        if (kind == 2) read_cluster_yaml("t.yaml", prefix);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "foreign exception at prefix " << n << ": " << e.what();
      }
    }
  }
}

TEST(YamlReader, ReadsFlatSettingsInFileOrderWithWhereEachStands) {
  const std::vector<YamlSetting> settings =
      read_yaml_settings("run.yaml", "# a run\nmodel: llama3.1-8b\n\ntp:   8   # per node\nsp: true\n");
  ASSERT_EQ(settings.size(), 3u);
  EXPECT_EQ(settings[0].key, "model");
  EXPECT_EQ(settings[0].value, "llama3.1-8b");
  EXPECT_EQ(settings[1].key, "tp");
  EXPECT_EQ(settings[1].value, "8");
  EXPECT_EQ(settings[1].key_at.file, "run.yaml");
  EXPECT_EQ(settings[1].key_at.line, 4);
  EXPECT_EQ(settings[1].key_at.column, 1);
  EXPECT_EQ(settings[1].value_at.column, 7);
  EXPECT_EQ(settings[1].line, "tp:   8   # per node");
  EXPECT_EQ(settings[2].value, "true");
}

TEST(YamlReader, AFlatSettingsSurroundingSpacesAndLineBreaksAreNotPartOfIt) {
  const std::vector<YamlSetting> settings =
      read_yaml_settings("run.yaml", "tp: \"2 \"\npp: |\n  4\nhost-dispatch: \" 42.4 us\"\n");
  ASSERT_EQ(settings.size(), 3u);
  EXPECT_EQ(settings[0].value, "2");
  EXPECT_EQ(settings[1].value, "4");  // a block scalar ends in a line break
  EXPECT_EQ(settings[2].value, "42.4 us");
  EXPECT_EQ(error_of([] { read_yaml_settings("run.yaml", "tp: \"  \"\n"); }),
            "run.yaml:1:5: tp: expected one value, got only spaces\n  tp: \"  \"\n      ^");
}

TEST(YamlReader, FlatSettingsMustBeOneValueEach) {
  EXPECT_EQ(error_of([] { read_yaml_settings("run.yaml", "tp:\n"); }),
            "run.yaml:1:1: tp: expected one value, got nothing\n  tp:\n  ^");
  EXPECT_EQ(error_of([] { read_yaml_settings("run.yaml", "tp: {a: 1}\n"); }),
            "run.yaml:1:5: tp: expected one value, got a map\n  tp: {a: 1}\n      ^");
  EXPECT_EQ(error_of([] { read_yaml_settings("run.yaml", "just text\n"); }),
            "run.yaml:1:1: expected a map of keys, got \"just text\"\n  just text\n  ^");
}

}  // namespace
}  // namespace stepcast::spec
