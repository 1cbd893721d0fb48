// The per-operator table of `estimate --ops` and `simulate --ops` (report.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/report.h"
#include "workload/pipeline_schedule.h"

namespace stepcast::report {
namespace {

using analytic::OperatorCost;
using analytic::OperatorGroup;

// What a group's kernels add up to in a step: a layer group's on the stage with the most layers
// (its MoE layers in the model's proportion), the embedding's on the first stage, the head's on
// the last.
std::string step_line(const spec::Scenario& s, OperatorGroup group, double kernel_s) {
  const spec::Strategy& st = s.strategy;
  const int micro_batches = st.micro_batches();
  const std::string per_step =
      fmt::format("{} micro-batch{}", micro_batches, micro_batches == 1 ? "" : "es");
  if (group == OperatorGroup::kEmbedding || group == OperatorGroup::kHead) {
    return fmt::format("  a step: {} = {:.3f} s of kernels on the {} stage\n", per_step,
                       micro_batches * kernel_s, group == OperatorGroup::kHead ? "last" : "first");
  }
  const workload::ChunkLayout layout(s.model.layers, st.pp * st.vp);
  int layers = 0;
  for (int i = 0; i < st.pp; ++i) layers = std::max(layers, layout.stage(st.pp, i));
  const double moe = s.model.moe_layer_fraction();
  const double runs = layers * (group == OperatorGroup::kMoeLayer ? moe : 1 - moe);
  // The closed form spreads the MoE layers over the stages in proportion, so a kind's count on
  // one stage can be fractional.
  const bool whole = runs == std::floor(runs);
  return fmt::format(
      "  a step: {:.3g} layers{} x {} = {:.3f} s of kernels on the stage with the most layers\n",
      runs, whole ? "" : " on average", per_step, runs * micro_batches * kernel_s);
}

std::string group_heading(const spec::Scenario& s, OperatorGroup group) {
  const spec::ModelSpec& m = s.model;
  const int moe_layers = m.moe_layers();
  const auto layers = [&](int count, const char* what) {
    return fmt::format("{} {} layer{} per micro-batch over {} pipeline stage{}", count, what,
                       count == 1 ? "" : "s", s.strategy.pp, s.strategy.pp == 1 ? "" : "s");
  };
  switch (group) {
    case OperatorGroup::kLayer:
      return layers(m.layers - moe_layers, m.is_moe() ? "dense" : "transformer");
    case OperatorGroup::kMoeLayer:
      return layers(moe_layers, "MoE");
    case OperatorGroup::kEmbedding:
      return "embedding, once per micro-batch on the first stage";
    case OperatorGroup::kHead:
      return "head and loss, once per micro-batch on the last stage";
  }
  return "";
}

// The rate an operator's forward and backward run at: FLOP/s where it computes, bytes/s of HBM
// where it only moves data.
std::string rate(const OperatorCost& c) {
  const double seconds = c.fwd_s + c.bwd_s;
  if (seconds <= 0) return "-";
  if (c.flops > 0) return fmt::format("{:.0f} TFLOP/s", c.flops / seconds / 1e12);
  return fmt::format("{:.0f} GB/s", c.bytes / seconds / 1e9);
}

struct Seconds {
  double fwd = 0, bwd = 0, recompute = 0, host = 0;
  double kernels() const { return fwd + bwd + recompute; }
};

// A group's total has no rate cell, and no trailing blanks for it.
std::string row(std::string_view name, std::string_view kind, const Seconds& t, double share,
                std::string_view rate_cell) {
  std::string line =
      fmt::format("  {:<26}{:<10}{:>9.3f}{:>9.3f}{:>11.3f}{:>9.3f}{:>7.1f} %", name, kind,
                  1e3 * t.fwd, 1e3 * t.bwd, 1e3 * t.recompute, 1e3 * t.host, 100 * share);
  if (!rate_cell.empty()) line += fmt::format("{:>16}", rate_cell);
  return line + "\n";
}

}  // namespace

std::string operators_text(const spec::Scenario& s, const std::vector<OperatorCost>& ops) {
  std::string out = fmt::format(
      "\noperators: ms per micro-batch on one GPU, each alone on the whole GPU ({} micro-batch{} "
      "per step)\n",
      s.strategy.micro_batches(), s.strategy.micro_batches() == 1 ? "" : "es");
  out += fmt::format("  {:<26}{:<10}{:>9}{:>9}{:>11}{:>9}{:>9}{:>16}\n", "", "kind", "fwd", "bwd",
                     "recompute", "launch", "share", "rate");
  for (auto group = ops.begin(); group != ops.end();) {
    const auto end = std::find_if(group, ops.end(),
                                  [&](const OperatorCost& c) { return c.group != group->group; });
    Seconds total;
    for (auto c = group; c != end; ++c) {
      total = {total.fwd + c->fwd_s, total.bwd + c->bwd_s, total.recompute + c->recompute_s,
               total.host + c->host_s};
    }
    const auto share = [&](double seconds) {
      return total.kernels() > 0 ? seconds / total.kernels() : 0;
    };
    out += fmt::format("{}\n", group_heading(s, group->group));
    for (auto c = group; c != end; ++c) {
      out += row(c->name, workload::name(c->kind), {c->fwd_s, c->bwd_s, c->recompute_s, c->host_s},
                 share(c->kernel_s()), rate(*c));
    }
    out += row("total", "", total, share(total.kernels()), "");
    out += step_line(s, group->group, total.kernels());
    group = end;
  }
  return out;
}

nlohmann::json operators_json(const std::vector<OperatorCost>& ops) {
  nlohmann::json out = nlohmann::json::array();
  for (const OperatorCost& c : ops) {
    out.push_back({{"group", analytic::group_name(c.group)},
                   {"name", c.name},
                   {"kind", workload::name(c.kind)},
                   {"fwd_s", c.fwd_s},
                   {"bwd_s", c.bwd_s},
                   {"recompute_s", c.recompute_s},
                   {"host_s", c.host_s},
                   {"flops", c.flops},
                   {"bytes", c.bytes}});
  }
  return out;
}

}  // namespace stepcast::report
