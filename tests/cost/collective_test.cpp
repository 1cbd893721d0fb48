#include "cost/collective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/csv.h"
#include "spec/presets.h"

namespace stepcast::cost {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Like the dgx-a100-80g preset: NVLink3 300 GB/s per GPU per direction with a 1 us hop inside
// 8-GPU nodes; 8 x 200 Gbit/s HDR per node (25 GB/s per GPU) between them. With pod_gpus > 0 the
// fabric is split into pods joined by a spine oversubscribed `oversubscription`:1.
spec::ClusterSpec dgx_a100(double oversubscription = 1, int pod_gpus = 0) {
  spec::ClusterSpec c;
  c.name = "test-dgx-a100";
  c.gpus_per_node = 8;
  c.levels.push_back({"nvlink", 8, 300e9, 1e-6, 1});
  if (pod_gpus > 0) {
    c.levels.push_back({"infiniband", pod_gpus, 25e9, 3e-6, 1});
    c.levels.push_back({"spine", 0, 25e9, 5e-6, oversubscription});
  } else {
    c.levels.push_back({"infiniband", 0, 25e9, 3e-6, 1});
  }
  return c;
}

struct Measurement {
  int gpus;
  double bytes, seconds;  // out-of-place time
};

// nccl-tests all_reduce_perf on 2..8 A100 in one node: size(B),count,type,time(ns),busbw,... .
std::vector<Measurement> nccl_tables(double min_bytes) {
  std::vector<Measurement> rows;
  for (int n = 2; n <= 8; ++n) {
    const std::string path = STEPCAST_SHARED_DIR "/validation/nccl_allreduce_a100/AR_GPU" +
                             std::to_string(n) + "_1M_1024M_LUT";
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream cells(line);
      std::array<std::string, 4> f;
      for (std::string& cell : f) std::getline(cells, cell, ',');
      const double bytes = std::stod(f[0]);
      if (bytes >= min_bytes) rows.push_back({n, bytes, std::stod(f[3]) * 1e-9});
    }
  }
  return rows;
}

// The model's all-reduce inside one NVLink node is linear in five unknowns:
//   t = launch + 2(n-1) step + 2(n-1)/n S u + S v + min(S/n, loop) w,
// with u = 1 / (eta B), v = local_pass u, w = fill_chunks u.
using Coefficients = std::array<double, 5>;

Coefficients features(const Measurement& m, double loop_bytes) {
  const double n = m.gpus;
  return {1.0, 2 * (n - 1), 2 * (n - 1) / n * m.bytes, m.bytes, std::min(m.bytes / n, loop_bytes)};
}

Coefficients solve(std::array<Coefficients, 5> a, Coefficients b) {
  for (int i = 0; i < 5; ++i) {
    int pivot = i;
    for (int r = i + 1; r < 5; ++r) {
      if (std::abs(a[r][i]) > std::abs(a[pivot][i])) pivot = r;
    }
    std::swap(a[i], a[pivot]);
    std::swap(b[i], b[pivot]);
    for (int r = 0; r < 5; ++r) {
      if (r == i) continue;
      const double f = a[r][i] / a[i][i];
      for (int k = 0; k < 5; ++k) a[r][k] -= f * a[i][k];
      b[r] -= f * b[i];
    }
  }
  Coefficients x;
  for (int i = 0; i < 5; ++i) x[i] = b[i] / a[i][i];
  return x;
}

// Minimax fit of relative error by Lawson's algorithm: weighted least squares, each round
// multiplying a point's weight by its error, so the weight gathers on the worst points.
Coefficients lawson_fit(const std::vector<Measurement>& rows, double loop_bytes, int rounds) {
  std::vector<double> weight(rows.size(), 1.0 / rows.size());
  Coefficients x{};
  for (int round = 0; round < rounds; ++round) {
    std::array<Coefficients, 5> a{};
    Coefficients b{};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Coefficients f = features(rows[i], loop_bytes);
      for (double& v : f) v /= rows[i].seconds;
      for (int r = 0; r < 5; ++r) {
        b[r] += weight[i] * f[r];
        for (int k = 0; k < 5; ++k) a[r][k] += weight[i] * f[r] * f[k];
      }
    }
    x = solve(a, b);
    double total = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Coefficients f = features(rows[i], loop_bytes);
      double predicted = 0;
      for (int k = 0; k < 5; ++k) predicted += x[k] * f[k];
      weight[i] *= std::abs(predicted - rows[i].seconds) / rows[i].seconds;
      total += weight[i];
    }
    for (double& w : weight) w /= total;
  }
  return x;
}

TEST(CollectiveCalibration, ConstantsAreTheMinimaxFitOfTheNcclTables) {
  const CollectiveCalibration& k = collective_calibration();
  const spec::ClusterSpec c = dgx_a100();
  const double link_Bps = c.levels[0].bandwidth_per_gpu_Bps;
  const Coefficients x = lawson_fit(nccl_tables(8 * kMiB), k.loop_bytes_per_rank, 200);
  const double u = x[2];
  EXPECT_NEAR(x[0] / k.launch_s, 1, 1e-3);
  EXPECT_NEAR(x[1] / (k.step_s + c.levels[0].latency_s), 1, 1e-3);
  EXPECT_NEAR(1 / (u * link_Bps) / k.nvlink_efficiency, 1, 1e-3);
  EXPECT_NEAR(x[3] / u / k.local_pass, 1, 1e-3);
  EXPECT_NEAR(x[4] / u / k.fill_chunks, 1, 1e-3);
  // Physical ranges: a fraction of the link, a positive launch, overhead per step and pass.
  EXPECT_LT(k.nvlink_efficiency, 1);
  EXPECT_GT(k.launch_s, 0);
  EXPECT_GT(k.step_s, 0);
  EXPECT_GT(k.local_pass, 0);
}

TEST(Collective, AllReduceMatchesNcclTestsWithinTenPercentFromEightMiBOnTwoToEightGpus) {
  const spec::ClusterSpec c = dgx_a100();
  std::array<double, 9> worst{};
  std::array<double, 9> worst_at{};
  for (const Measurement& m : nccl_tables(8 * kMiB)) {
    const double predicted = collective_time_s(CollectiveKind::kAllReduce, m.bytes, {m.gpus, 1}, c);
    const double error = (predicted - m.seconds) / m.seconds;
    if (std::abs(error) > std::abs(worst[m.gpus])) {
      worst[m.gpus] = error;
      worst_at[m.gpus] = m.bytes;
    }
  }
  for (int n = 2; n <= 8; ++n) {
    std::printf("all-reduce on %d A100: worst error %+.1f%% (at %.0f MiB) over sizes >= 8 MiB\n", n,
                100 * worst[n], worst_at[n] / kMiB);
    EXPECT_LT(std::abs(worst[n]), 0.10) << n << " GPUs";
  }
}

// OpenXLA measured all-reduce, all-gather, reduce-scatter and all-to-all on 8 H100 SXM in one
// NVSwitch node (groups of 8, 4 and 2; data/calibration/xla_collective_throughput.csv). None of
// it was used to build the model, whose NVLink constants come from the A100 tables above, so the
// table scores how they carry over to NVLink4. Sizes >= 8 MiB, as for the A100.
TEST(Collective, ModelFittedOnA100PredictsTheMeasuredH100NvlinkCollectives) {
  const spec::ClusterSpec c = spec::cluster_preset("dgx-h100");
  std::string text;
  std::istringstream lines(core::read_file(STEPCAST_SOURCE_DIR "/data/calibration/xla_collective_throughput.csv"));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind('#', 0) != 0) text += line + '\n';
  }
  const core::CsvTable t = core::read_csv("xla_collective_throughput.csv", text);
  const std::map<std::string, CollectiveKind> kinds = {{"all-reduce", CollectiveKind::kAllReduce},
                                                       {"all-gather", CollectiveKind::kAllGather},
                                                       {"reduce-scatter", CollectiveKind::kReduceScatter},
                                                       {"all-to-all", CollectiveKind::kAllToAll}};
  struct Score {
    double sum = 0, worst = 0;
    int rows = 0;
  };
  std::map<std::pair<std::string, int>, Score> scores;
  for (const core::CsvRow& row : t.rows) {
    const std::string& op = row.cells[t.column("op")];
    const double bytes = std::stod(row.cells[t.column("tensor_bytes")]);
    const int gpus = std::stoi(row.cells[t.column("devices_per_group")]);
    if (bytes < 8 * kMiB) continue;
    const double measured = bytes / std::stod(row.cells[t.column("throughput_Bps")]);
    const double error = collective_time_s(kinds.at(op), bytes, {gpus, 1}, c) / measured - 1;
    Score& s = scores[{op, gpus}];
    s.sum += std::abs(error);
    s.worst = std::abs(error) > std::abs(s.worst) ? error : s.worst;
    ++s.rows;
  }
  // Ratchets (2026-11-22), mean absolute error per collective and group size. Reduce-scatter on 2
  // and 4 GPUs runs slower than the model's all-gather-like pass; all-reduce on 8 runs faster
  // than a ring can (below the measured reduce-scatter plus all-gather, as NVLink SHARP would).
  const std::map<std::pair<std::string, int>, double> limit = {
      {{"all-reduce", 2}, 0.175},     {{"all-reduce", 4}, 0.105},     {{"all-reduce", 8}, 0.16},
      {{"all-gather", 2}, 0.09},      {{"all-gather", 4}, 0.07},      {{"all-gather", 8}, 0.095},
      {{"reduce-scatter", 2}, 0.26},  {{"reduce-scatter", 4}, 0.13},  {{"reduce-scatter", 8}, 0.09},
      {{"all-to-all", 2}, 0.13},      {{"all-to-all", 4}, 0.12},      {{"all-to-all", 8}, 0.125}};
  ASSERT_EQ(scores.size(), limit.size());
  for (const auto& [key, s] : scores) {
    std::printf("%-14s on %d H100: mean error %4.1f%%, worst %+5.1f%% over %d sizes >= 8 MiB\n",
                key.first.c_str(), key.second, 100 * s.sum / s.rows, 100 * s.worst, s.rows);
    EXPECT_EQ(s.rows, 9) << key.first << " " << key.second;
    EXPECT_LE(s.sum / s.rows, limit.at(key)) << key.first << " " << key.second;
  }
}

TEST(Collective, DoublingALargeBufferAboutDoublesTheTime) {
  const spec::ClusterSpec c = dgx_a100();
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                              CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
    // Latency, launch and pipeline fill do not grow with the buffer: a little under 2.
    const double one = collective_time_s(kind, 4e9, {16, 1}, c);
    const double two = collective_time_s(kind, 8e9, {16, 1}, c);
    EXPECT_LT(two / one, 2.0) << static_cast<int>(kind);
    EXPECT_GT(two / one, 1.97) << static_cast<int>(kind);
  }
}

TEST(Collective, OneMemberPerNodeIsLimitedByItsOwnNic) {
  const spec::ClusterSpec c = dgx_a100();
  const CollectiveCalibration& k = collective_calibration();
  // Stride 8: one member per node, each ring hop on that GPU's 25 GB/s NIC share.
  EXPECT_DOUBLE_EQ(bus_bandwidth_Bps({8, 8}, c), k.nic_efficiency * 25e9);
  const double bytes = 1e9;
  const double wire = 2.0 * 7 / 8 * bytes;
  const double t = collective_time_s(CollectiveKind::kAllReduce, bytes, {8, 8}, c);
  EXPECT_NEAR(t / (wire / (k.nic_efficiency * 25e9)), 1, 0.01);
  // The same group inside one node runs on NVLink, over ten times faster.
  EXPECT_GT(t / collective_time_s(CollectiveKind::kAllReduce, bytes, {8, 1}, c), 10);
}

TEST(Collective, NvlinkRingsHoldTheGpusChannelsAndNicOnlyRingsTwo) {
  spec::ClusterSpec c = dgx_a100();
  c.gpu.collective_sms = 24;
  EXPECT_EQ(collective_sms({8, 1}, c), 24);   // inside one node
  EXPECT_EQ(collective_sms({16, 4}, c), 24);  // two members per node, rings over NVLink too
  EXPECT_EQ(collective_sms({16, 8}, c), 2);   // one member per node: rings through its NIC
  EXPECT_EQ(collective_sms({1, 8}, c), 0);
  c.levels[1].bandwidth_per_gpu_Bps = 50e9;    // a 400 Gbit/s NIC: NCCL duplicates the ring
  EXPECT_EQ(collective_sms({16, 8}, c), 4);
  c.gpu.collective_sms = 0;  // a GPU whose collectives are taken to hold no SMs
  EXPECT_EQ(collective_sms({16, 8}, c), 0);
}

TEST(Collective, EightMembersPerNodeDriveEightNicsCappedByNvlink) {
  const spec::ClusterSpec c = dgx_a100();
  const CollectiveCalibration& k = collective_calibration();
  EXPECT_DOUBLE_EQ(bus_bandwidth_Bps({16, 1}, c), 8 * k.nic_efficiency * 25e9);
  EXPECT_DOUBLE_EQ(bus_bandwidth_Bps({16, 4}, c), 2 * k.nic_efficiency * 25e9);
  spec::ClusterSpec fat = c;
  fat.levels[1].bandwidth_per_gpu_Bps = 100e9;  // 8 x 100 GB/s would outrun NVLink
  EXPECT_DOUBLE_EQ(bus_bandwidth_Bps({16, 1}, fat), k.nvlink_efficiency * 300e9);
}

TEST(Collective, MultiNodeAllReduceMatchesPublishedA100HdrBusBandwidth) {
  // github.com/NVIDIA/nccl issue 1048: 2 nodes x 8 A100, 4 x HDR 200 Gbit/s per node (12.5 GB/s
  // per GPU), all_reduce_perf up to 4 GiB: 86 GB/s busbw.
  spec::ClusterSpec c = dgx_a100();
  c.levels[1].bandwidth_per_gpu_Bps = 4 * 25e9 / 8;
  const double bytes = 4.0 * 1024 * kMiB;
  const double t = collective_time_s(CollectiveKind::kAllReduce, bytes, {16, 1}, c);
  const double busbw = 2.0 * 15 / 16 * bytes / t;
  EXPECT_NEAR(busbw / 86e9, 1, 0.10) << busbw;
}

TEST(Collective, OversubscriptionSlowsAGroupThatSpansPods) {
  const spec::ClusterSpec c = dgx_a100(7, 64);
  const double bytes = 1e9;
  // One member per pod (stride 64): the ring's hop between pods gets that GPU's 1/7 share.
  const double in_pod = collective_time_s(CollectiveKind::kAllReduce, bytes, {2, 8}, c);
  const double across = collective_time_s(CollectiveKind::kAllReduce, bytes, {2, 64}, c);
  EXPECT_NEAR(bus_bandwidth_Bps({2, 8}, c) / bus_bandwidth_Bps({2, 64}, c), 7, 1e-9);
  EXPECT_GT(across / in_pod, 6);
  // A ring with 8 members in each pod leaves each pod once per channel: the pod's 8 tapered
  // shares (8 x 25 / 7 GB/s) outrun the one rail a member per node drives, so 1:7 costs nothing.
  EXPECT_DOUBLE_EQ(bus_bandwidth_Bps({16, 8}, dgx_a100(7, 64)), bus_bandwidth_Bps({8, 8}, c));
  // All-to-all sends every member's traffic across the spine at once: it pays the full 1:7.
  const double a2a_flat = collective_time_s(CollectiveKind::kAllToAll, bytes, {2, 64}, dgx_a100());
  EXPECT_GT(collective_time_s(CollectiveKind::kAllToAll, bytes, {2, 64}, c) / a2a_flat, 6);
  // Without oversubscription the same pods cost about as much as one flat fabric.
  const double flat = collective_time_s(CollectiveKind::kAllReduce, bytes, {16, 8}, dgx_a100());
  const double tapered =
      collective_time_s(CollectiveKind::kAllReduce, bytes, {16, 8}, dgx_a100(1, 64));
  EXPECT_NEAR(tapered / flat, 1, 0.01);
}

TEST(Collective, GroupOfOneOrEmptyBufferCostsNothing) {
  const spec::ClusterSpec c = dgx_a100();
  for (CollectiveKind kind :
       {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
        CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
    EXPECT_EQ(collective_time_s(kind, 1e9, {1, 1}, c), 0);
    EXPECT_EQ(collective_time_s(kind, 0, {8, 1}, c), 0);
  }
}

TEST(Collective, GatherPlusScatterCostAboutOneAllReduce) {
  // Same wire bytes; the two calls pay the launch and the fill twice and their local passes touch
  // (1 + 1/n) S against the all-reduce's S, hence a few percent more.
  const spec::ClusterSpec c = dgx_a100();
  const double ar = collective_time_s(CollectiveKind::kAllReduce, 1e9, {8, 1}, c);
  const double ag = collective_time_s(CollectiveKind::kAllGather, 1e9, {8, 1}, c);
  const double rs = collective_time_s(CollectiveKind::kReduceScatter, 1e9, {8, 1}, c);
  EXPECT_GT((ag + rs) / ar, 1.0);
  EXPECT_LT((ag + rs) / ar, 1.05);
}

TEST(Collective, TreeBeatsRingLatencyForSmallAllReducesAcrossManyNodes) {
  const spec::ClusterSpec c = dgx_a100();
  const CollectiveCalibration& k = collective_calibration();
  const int nodes = 512;
  const double t = collective_time_s(CollectiveKind::kAllReduce, 1024, {nodes, 8}, c);
  const double ring_latency = 2.0 * (nodes - 1) * (k.step_s + c.levels[1].latency_s);
  EXPECT_LT(t, ring_latency / 10);
  const double tree_latency = 2.0 * 9 * (k.step_s + c.levels[1].latency_s);  // log2(512) = 9
  EXPECT_GT(t, tree_latency);
}

TEST(Collective, AllToAllSendsTheInterNodeShareOnEachGpusNic) {
  const spec::ClusterSpec c = dgx_a100();
  const CollectiveCalibration& k = collective_calibration();
  const double bytes = 1e9;
  // 16 ranks over 2 nodes: half of what each rank sends leaves the node on its own NIC.
  const double t = collective_time_s(CollectiveKind::kAllToAll, bytes, {16, 1}, c);
  EXPECT_NEAR(t / (bytes / 2 / (k.nic_efficiency * 25e9)), 1, 0.02);
}

}  // namespace
}  // namespace stepcast::cost
