// The attention kernels' rates against the measured rates to which the presets' curves were
// fitted: FlashAttention-2 on the A100 and the H100 (attention_efficiency, attention_half_keys),
// cuDNN's fused attention on the H100 (cudnn_attention_efficiency, cudnn_attention_half_keys).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "../calibration_csv.h"
#include "core/csv.h"
#include "cost/compute.h"
#include "spec/presets.h"

namespace stepcast::cost {
namespace {

// The largest relative error of the preset's modelled forward + backward rate against the
// file's measured one, at each sequence length of the benchmark (16K tokens of 16 heads of 128).
// The measured rate is the file's fwd_bwd_tflops, or else its forward and backward rates
// combined as the paper counts their FLOPs (backward 2.5 times the forward).
double worst_error(const std::string& file, const char* preset,
                   spec::AttentionKernel kernel = spec::AttentionKernel::kFlash) {
  const spec::GpuSpec gpu = spec::gpu_preset(preset);
  const AttentionCurve curve = attention_curve(gpu, kernel);
  const core::CsvTable table = testing::read_calibration(file);
  EXPECT_EQ(table.rows.size(), 6u) << file;
  const int combined = table.column("fwd_bwd_tflops"), fwd = table.column("fwd_causal_tflops"),
            bwd = table.column("bwd_tflops");
  constexpr double kTokens = 16384, kHeads = 16, kHeadDim = 128, kBytes = 2;
  double worst = 0;
  for (const core::CsvRow& row : table.rows) {
    const double seq = std::stod(row.cells[0]);
    const double fwd_flops = 4 * seq * seq * kHeadDim * kHeads * (kTokens / seq) / 2;
    const auto rate = [&](int column) { return std::stod(row.cells[static_cast<std::size_t>(column)]) * 1e12; };
    const double measured = combined >= 0 ? rate(combined)
                                          : 3.5 * fwd_flops / (fwd_flops / rate(fwd) + 2.5 * fwd_flops / rate(bwd));
    const double qkvo_bytes = 4 * kTokens * kHeads * kHeadDim * kBytes;
    const double seconds = attention_time(fwd_flops, qkvo_bytes, seq, 1, curve, gpu, {}).whole +
                           attention_time(2.5 * fwd_flops, 2 * qkvo_bytes, seq, 1, curve, gpu, {}).whole;
    const double error = 3.5 * fwd_flops / seconds / measured - 1;
    std::printf("%s, %5.0f tokens: %+.1f%%\n", preset, seq, 100 * error);
    worst = std::max(worst, std::abs(error));
  }
  return worst;
}

TEST(AttentionRate, H100PresetTracksFlashAttention2MeasuredCausallyFrom1kTo32kTokens) {
  // A ratchet (stop 44, 2026-11-27): +0.5, +1.1, +1.0, -0.8, -1.2 and +1.1% from 1K to 32K
  // tokens. Fitted before to the FlashAttention-3 paper's bars, whose backward is not causal, the
  // curve was 4-38% faster than these.
  EXPECT_LE(worst_error("flash_attention2_h100_measured.csv", "h100-sxm"), 0.015);
}

TEST(AttentionRate, H100PresetTracksCudnnAttentionMeasuredCausallyFrom1kTo32kTokens) {
  // A ratchet (stop 44, 2026-11-27): -2.1, -0.8, +2.2, +1.1, -2.2 and -0.7% from 1K to 32K tokens.
  EXPECT_LE(worst_error("cudnn_attention_h100_measured.csv", "h100-sxm", spec::AttentionKernel::kCudnn), 0.025);
}

TEST(AttentionRate, A100PresetTracksFlashAttention2From512To16kTokens) {
  // A ratchet (2026-11-27): -0.2, -1.6, +0.7, -0.1, +0.3 and -0.6% from 512 to 16K tokens. With 65%
  // of peak and half the rate at 384 keys, read off the same paper's plots, as before, 4.8% to
  // 17.1% fast.
  EXPECT_LE(worst_error("flash_attention2_a100.csv", "a100-80g"), 0.02);
}

}  // namespace
}  // namespace stepcast::cost
