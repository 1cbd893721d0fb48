#include "cost/compute.h"

#include <algorithm>
#include <cmath>

namespace stepcast::cost {
namespace {

// Output tile of the large-GEMM kernels cuBLAS picks on Ampere and Hopper (CUTLASS default
// 128x256 threadblock tile for BF16 tensor-core GEMMs); one tile per SM at a time.
constexpr double kTileM = 128, kTileN = 256;
// FlashAttention-2 forward+backward throughput rises with the number of key positions as each
// query block's load and softmax bookkeeping is amortised: half the long-sequence rate at about
// 384 keys (Dao 2023, FlashAttention-2, Fig. 4 and 5: A100 head dim 128, causal, 512 -> 16k).
constexpr double kAttentionHalfKeys = 384;

// The tile may lie either way round; both orientations cover kTileM x kTileN outputs per tile, so
// the better one is the one with fewer waves.
double tile_utilisation(const GemmShape& g, int sm_count) {
  if (sm_count <= 0) return 1;
  const auto waves = [&](double tm, double tn) {
    return std::ceil(std::ceil(g.m / tm) * std::ceil(g.n / tn) * g.instances / sm_count);
  };
  const double fewest = std::min(waves(kTileM, kTileN), waves(kTileN, kTileM));
  return (g.m * g.n * g.instances) / (fewest * sm_count * kTileM * kTileN);
}

}  // namespace

double clock_factor(const spec::GpuSpec& gpu) {
  const double limit = gpu.effective_power_limit_w();
  if (gpu.tdp_w <= 0 || limit >= gpu.tdp_w) return 1;
  return std::cbrt(limit / gpu.tdp_w);
}

double memory_time_s(double bytes, const spec::GpuSpec& gpu) {
  return bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency) + gpu.kernel_overhead_s;
}

double gemm_time_s(const GemmShape& shape, double bytes, bool fp8, const spec::GpuSpec& gpu) {
  const bool use_fp8 = fp8 && gpu.peak_fp8_flops > 0;
  const double peak = use_fp8 ? gpu.peak_fp8_flops : gpu.peak_bf16_flops;
  const double efficiency = use_fp8 && gpu.fp8_matmul_efficiency > 0 ? gpu.fp8_matmul_efficiency
                                                                      : gpu.matmul_efficiency;
  const double flops = 2 * shape.m * shape.n * shape.k * shape.instances;
  const double rate = peak * efficiency * clock_factor(gpu) * tile_utilisation(shape, gpu.sm_count);
  const double math = flops / rate;
  const double traffic = bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  return std::max(math, traffic) + gpu.kernel_overhead_s;
}

double attention_time_s(double flops, double bytes, double keys, const spec::GpuSpec& gpu) {
  const double efficiency = gpu.attention_efficiency * keys / (keys + kAttentionHalfKeys);
  const double math = flops / (gpu.peak_bf16_flops * efficiency * clock_factor(gpu));
  const double traffic = bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  return std::max(math, traffic) + gpu.kernel_overhead_s;
}

}  // namespace stepcast::cost
