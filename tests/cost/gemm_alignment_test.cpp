// GEMMs whose rows cannot be loaded in vectors: a 16-bit GEMM with an odd leading dimension runs
// at a third of its rate (Netflix's measured language-model head over an unpadded vocabulary).
#include <gtest/gtest.h>

#include "cost/compute.h"
#include "spec/presets.h"

namespace stepcast::cost {
namespace {

LinearGemmTimes times(const GemmShape& g, const char* gpu, bool fp8 = false) {
  const double bytes = 2 * (g.m * g.k + g.k * g.n + g.m * g.n);
  const spec::GpuSpec preset = spec::gpu_preset(gpu);
  return linear_gemm_times(g, bytes, fp8, preset, Beside{Shares::kBesideTwo, preset.collective_sms});
}

// The even neighbour one column wider is priced as the odd shape would be if it loaded in
// vectors, to within its one extra column in 50,258.
TEST(GemmAlignment, AnUnpaddedVocabularyHeadTakesThreeTimesAsLongInEachOfItsGemms) {
  for (const char* gpu : {"a100-80g", "h100-sxm"}) {
    const LinearGemmTimes odd = times({8192, 50257, 4096}, gpu), even = times({8192, 50258, 4096}, gpu);
    EXPECT_NEAR(odd.fwd.whole / even.fwd.whole, 3, 1e-4) << gpu;
    EXPECT_NEAR(odd.input_grad.whole / even.input_grad.whole, 3, 1e-4) << gpu;
    EXPECT_NEAR(odd.weight_grad.whole / even.weight_grad.whole, 3, 1e-4) << gpu;
    EXPECT_NEAR(odd.fwd.beside_two / even.fwd.beside_two, 3, 1e-4) << gpu;
  }
}

TEST(GemmAlignment, AnOddInputWidthSlowsTheLayerAsAnOddOutputWidthDoes) {
  EXPECT_NEAR(times({4096, 4096, 1023}, "a100-80g").fwd.whole / times({4096, 4096, 1024}, "a100-80g").fwd.whole, 3,
              0.01);
  EXPECT_NEAR(times({4096, 1023, 4096}, "a100-80g").fwd.whole / times({4096, 1024, 4096}, "a100-80g").fwd.whole, 3,
              0.01);
}

TEST(GemmAlignment, AnOddNumberOfTokensIsNoLeadingDimensionAndIsNotSlowed) {
  EXPECT_LE(times({4095, 4096, 4096}, "h100-sxm").fwd.whole, times({4096, 4096, 4096}, "h100-sxm").fwd.whole);
}

TEST(GemmAlignment, EvenWidthsThatAreNotMultiplesOfEightKeepTheirRate) {
  // GPT-2's head split over 8 TP ranks: 6,282 columns, a multiple of 2 but not of 4.
  EXPECT_LE(times({8192, 6282, 4096}, "a100-80g").fwd.whole, times({8192, 6288, 4096}, "a100-80g").fwd.whole);
}

TEST(GemmAlignment, Fp8GemmsKeepTheirOwnPricing) {
  EXPECT_LE(times({8192, 50257, 4096}, "h100-sxm", true).fwd.whole,
            times({8192, 50258, 4096}, "h100-sxm", true).fwd.whole);
}

}  // namespace
}  // namespace stepcast::cost
