#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/utf8.h"
#include "workload/operators.h"
#include "workload/placement.h"
#include "workload/pipeline_schedule.h"
#include "workload/step_costs.h"

namespace stepcast::report {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct Category {
  const char* key;
  double value;
};

std::vector<Category> time_categories(const analytic::Breakdown& b) {
  return {{"compute", b.compute_s},     {"tp_comm", b.tp_comm_s},   {"cp_comm", b.cp_comm_s},
          {"ep_comm", b.ep_comm_s},     {"pp_comm", b.pp_comm_s},   {"fsdp_comm", b.fsdp_comm_s},
          {"bubble", b.bubble_s},       {"dp_comm", b.dp_comm_s},   {"optimizer", b.optimizer_s},
          {"host", b.host_s},           {"other", b.other_s}};
}

std::vector<Category> memory_categories(const workload::MemoryBreakdown& m) {
  return {{"weights", m.weights_bytes},         {"gradients", m.gradients_bytes},
          {"optimizer", m.optimizer_bytes},     {"activations", m.activations_bytes},
          {"logits", m.logits_bytes},           {"runtime", m.runtime_bytes},
          {"fragmentation", m.fragmentation_bytes}};
}

std::string strategy_line(const spec::Strategy& st) {
  std::string line = fmt::format("tp {}{} x pp {}", st.tp, st.sequence_parallel ? " (sp)" : "", st.pp);
  if (st.vp > 1) line += fmt::format(" (vp {})", st.vp);
  line += fmt::format(" x dp {} x cp {}", st.dp, st.cp);
  if (st.cp > 1) line += fmt::format(" ({})", spec::name(st.cp_exchange));
  if (st.ep > 1) line += fmt::format(" x ep {}", st.ep);
  line += fmt::format(", {} schedule, zero {}, recompute {}, {}", spec::name(st.schedule),
                      st.zero_stage, spec::name(st.recompute), spec::name(st.dtype));
  return line;
}

}  // namespace

std::string estimate_text(const spec::Scenario& s, const analytic::Estimate& e) {
  const spec::Strategy& st = s.strategy;
  std::string out;
  // Names read from files: a line break or an escape sequence in one is shown escaped, not acted on.
  out += fmt::format("model     {}\n", core::escape_controls(s.model.name, false));
  out += fmt::format("cluster   {} ({} GPUs of {})\n", core::escape_controls(s.cluster.name, false), s.gpus,
                     core::escape_controls(s.cluster.gpu.name, false));
  out += fmt::format("strategy  {}\n", strategy_line(st));
  out += fmt::format("batch     {} sequences x {} tokens, micro-batch {} ({} micro-batches)\n\n",
                     st.global_batch, st.seq_len, st.micro_batch, st.micro_batches());
  out += fmt::format("step time         {:>12.3f} s\n", e.step_time_s);
  out += fmt::format("throughput        {:>12.0f} tokens/s\n", e.tokens_per_s);
  out += fmt::format("model TFLOP/s/GPU {:>12.1f}\n", e.tflops_per_gpu);
  out += fmt::format("MFU               {:>11.1f} %\n", 100 * e.mfu);
  out += fmt::format("HFU               {:>11.1f} %\n", 100 * e.hfu);
  out += "\ntime breakdown (s per step)\n";
  for (const Category& c : time_categories(e.breakdown)) {
    if (c.value <= 0) continue;
    // A category too small for the column's millisecond is there, not left out: "<0.001".
    const std::string seconds = c.value < 0.0005 ? "<0.001" : fmt::format("{:.3f}", c.value);
    out += fmt::format("  {:<14}{:>10}  {:>5.1f} %\n", c.key, seconds, 100 * c.value / e.step_time_s);
  }
  out += fmt::format("\nmemory per GPU (GiB), worst pipeline stage\n");
  for (const Category& c : memory_categories(e.memory)) {
    out += fmt::format("  {:<14}{:>10.2f}\n", c.key, c.value / kGiB);
  }
  out += fmt::format("  {:<14}{:>10.2f} of {:.2f}: {}\n", "total", e.memory.total_bytes / kGiB,
                     e.memory.capacity_bytes / kGiB, e.memory.fits ? "fits" : "DOES NOT FIT");
  for (const workload::OddWidthLinear& linear : workload::odd_width_linears(s)) {
    out += fmt::format(
        "\nnote: {} is {:.0f} wide per GPU, an odd width: its GEMMs cannot load their rows in vectors and "
        "run on slower kernels (docs/model.md section 2). Pad it to a multiple of 64.\n",
        linear.name, linear.width);
  }
  if (!workload::megatron_softmax_fused(s)) {
    out += fmt::format(
        "\nnote: Megatron's fused softmax cannot run: {:g} attention matrices per GPU and micro-batch "
        "(micro-batch x heads / tp) at sequence {}, where it needs a multiple of 4 (of 8 up to 128 tokens) "
        "and 17 to 4096 tokens. The model prices PyTorch's FP32 softmax instead, 9 times the bytes in 5 "
        "kernels (docs/model.md section 1).\n",
        workload::attention_matrices(s), s.strategy.seq_len);
  }
  if (e.mfu > 1) {
    out += "\nnote: MFU is above 100% because its model FLOPs follow PaLM (docs/model.md section 5), "
           "which counts every query against every key; causal attention runs about half of that, "
           "so at long sequences the count outgrows the work done. HFU counts the same way.\n";
  }
  return out;
}

namespace {

// A fraction as a percentage, signed or not: one decimal up to 99,999.9%, then in scientific
// notation, so that an error as far off as the measurement bounds allow keeps its column.
std::string percent(double fraction, bool sign) {
  const double p = 100 * fraction;
  if (std::abs(p) < 1e5) return sign ? fmt::format("{:+.1f}%", p) : fmt::format("{:.1f}%", p);
  return sign ? fmt::format("{:+.1e}%", p) : fmt::format("{:.1e}%", p);
}

// Text read from a table for a column `width` wide: its control characters escaped, as a line
// break would split the row and an escape sequence act on the terminal; cut to the width.
std::string table_cell(std::string_view text, std::size_t width) {
  const std::string cell = core::escape_controls(text, false);
  return cell.size() > width ? cell.substr(0, width - 1) + "~" : cell;
}

std::string uneven_chunks_note(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (st.vp <= 1) return {};
  const workload::ChunkLayout layout(s.model.layers, st.pp * st.vp);
  if (layout.middle_chunks_alike()) return {};
  return fmt::format(
      "\nnote: the {} layers fill the {} model chunks unevenly ({} or {} layers each). The closed form "
      "prices a stage's chunks at their average; the pipeline's rounds wait for the longer ones, which "
      "`stepcast simulate` times (5% apart on Llama 3.1 405B with 7 virtual stages; docs/accuracy.md).\n",
      // The first chunk takes a spare layer last and the second first.
      s.model.layers, st.pp * st.vp, layout.chunk(0), layout.chunk(1));
}

// ZeRO-3's gathers and scatters run beside every layer; pipeline transfers that cross the same
// links take bandwidth from them, which the closed form shares only in part. (A CP ring on those
// links shares them in both engines.)
std::string shared_zero3_links_note(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (!st.prefetches_zero3_gathers() ||
      !workload::crosses_gradient_links(workload::parallel_groups(st), s.cluster, spec::Axis::kPp))
    return {};
  return "\nnote: the pipeline transfers cross the links of the ZeRO-3 group's gathers and scatters. The "
         "closed form shares each gradient's transfer with the gathers of the backward after it and, with "
         "asynchronous sends, an activation's with those of its sender's next forward (FSDP gathers a "
         "chunk's first layer once its forward starts), in the fill and drain, and each blocking send of "
         "the 1F1B phase and of an interleaved cool-down with the collectives beside it; `stepcast "
         "simulate` shares them transfer by transfer (4% longer on Llama 3.1 8B at PP 4, vp 2 on 64 "
         "B200s; docs/accuracy.md).\n";
}

}  // namespace

std::string closed_form_notes(const spec::Scenario& s) {
  return uneven_chunks_note(s) + shared_zero3_links_note(s);
}

nlohmann::json estimate_json(const spec::Scenario& s, const analytic::Estimate& e) {
  nlohmann::json j;
  j["step_time_s"] = e.step_time_s;
  j["tokens_per_s"] = e.tokens_per_s;
  j["tflops_per_gpu"] = e.tflops_per_gpu;
  j["megatron_tflops_per_gpu"] = e.megatron_tflops_per_gpu;
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  nlohmann::json& mem = j["memory"];
  mem["per_gpu_gib"] = e.memory.total_bytes / kGiB;
  mem["capacity_gib"] = e.memory.capacity_bytes / kGiB;
  mem["fits"] = e.memory.fits;
  for (const Category& c : memory_categories(e.memory)) mem[std::string(c.key) + "_gib"] = c.value / kGiB;
  nlohmann::json& br = j["breakdown"];
  for (const Category& c : time_categories(e.breakdown)) br[std::string(c.key) + "_s"] = c.value;
  nlohmann::json& odd = j["odd_width_gemms"] = nlohmann::json::array();
  for (const workload::OddWidthLinear& linear : workload::odd_width_linears(s)) {
    odd.push_back({{"op", linear.name}, {"width", static_cast<long long>(linear.width)}});
  }
  j["megatron_softmax_fused"] = workload::megatron_softmax_fused(s);
  const spec::Strategy& st = s.strategy;
  j["scenario"] = {{"model", s.model.name},
                   {"cluster", s.cluster.name},
                   {"gpus", s.gpus},
                   {"tp", st.tp},
                   {"pp", st.pp},
                   {"vp", st.vp},
                   {"dp", st.dp},
                   {"cp", st.cp},
                   {"ep", st.ep},
                   {"sequence_parallel", st.sequence_parallel},
                   {"schedule", spec::name(st.schedule)},
                   {"zero", st.zero_stage},
                   {"micro_batch", st.micro_batch},
                   {"global_batch", st.global_batch},
                   {"seq_len", st.seq_len},
                   {"recompute", spec::name(st.recompute)},
                   {"dtype", spec::name(st.dtype)}};
  return j;
}

std::string simulation_text(const spec::Scenario& s, const analysis::Simulation& sim) {
  std::string out = estimate_text(s, sim.metrics);
  const graph::ExecGraph& g = sim.graph;
  out += fmt::format("\nsimulated {} tasks on {} ranks (one per pipeline stage: its TP, CP and DP peers run alike)\n",
                     g.size(), g.ranks());
  const analysis::CriticalPath& path = sim.critical_path;
  out += fmt::format("critical path: {} tasks, {:.3f} s", path.tasks.size(), path.length_s);
  for (int c = 0; c < graph::kCategories; ++c) {
    const double seconds = path.seconds[static_cast<std::size_t>(c)];
    if (seconds <= 0) continue;
    out += fmt::format(", {} {:.1f} %", graph::category_name(static_cast<graph::Category>(c)),
                       100 * seconds / path.length_s);
  }
  if (path.wait_s > 0) out += fmt::format(", waiting {:.1f} %", 100 * path.wait_s / path.length_s);
  out += "\nheaviest on it:";
  constexpr std::size_t kShown = 5;
  for (std::size_t i = 0; i < std::min(kShown, path.heaviest.size()); ++i) {
    const analysis::PathShare& p = path.heaviest[i];
    out += fmt::format("{} {} x{} {:.3f} s", i == 0 ? "" : ",", p.name, p.tasks, p.seconds);
  }
  out += "\nstream utilisation (mean over stages):";
  const char* separator = " ";
  for (const analysis::StreamMean& m : analysis::mean_stream_use(sim.streams)) {
    out += fmt::format("{}{} {:.1f} %", separator, g.stream_name(m.stream), 100 * m.utilisation);
    separator = ", ";
  }
  out += "\n";
  return out;
}

nlohmann::json simulation_json(const spec::Scenario& s, const analysis::Simulation& sim) {
  nlohmann::json j = estimate_json(s, sim.metrics);
  const graph::ExecGraph& g = sim.graph;
  j["graph"] = {{"tasks", g.size()}, {"ranks", g.ranks()}, {"collectives", g.collectives().size()}};
  nlohmann::json& path = j["critical_path"];
  path["tasks"] = sim.critical_path.tasks.size();
  path["length_s"] = sim.critical_path.length_s;
  path["wait_s"] = sim.critical_path.wait_s;
  path["heaviest"] = nlohmann::json::array();
  for (const analysis::PathShare& p : sim.critical_path.heaviest) {
    path["heaviest"].push_back({{"name", p.name}, {"tasks", p.tasks}, {"seconds", p.seconds}});
  }
  for (int c = 0; c < graph::kCategories; ++c) {
    path["seconds"][std::string(graph::category_name(static_cast<graph::Category>(c)))] =
        sim.critical_path.seconds[static_cast<std::size_t>(c)];
  }
  j["streams"] = nlohmann::json::array();
  for (const analysis::StreamUse& u : sim.streams) {
    j["streams"].push_back({{"rank", u.rank}, {"stream", u.stream}, {"name", g.stream_name(u.stream)},
                            {"busy_s", u.busy_s}, {"utilisation", u.utilisation}});
  }
  return j;
}

std::string validation_text(const validate::Report& r) {
  std::string out;
  out += fmt::format("{:<6} {:<44} {:<15} {:>12} {:>12} {:>8}\n", "line", "model", "quantity",
                     "measured", "predicted", "error");
  std::string source;
  for (const validate::RowResult& row : r.rows) {
    if (row.source != source) {
      source = row.source;
      out += fmt::format("-- {}\n", core::escape_controls(source, false));
    }
    const std::string model = table_cell(row.model, 44);
    if (!row.reason.empty()) {
      out += fmt::format("{:<6} {:<44} not predicted: {}\n", row.line, model, core::escape_controls(row.reason, false));
      continue;
    }
    out += fmt::format("{:<6} {:<44} {:<15} {:>12.4g} {:>12.4g} {:>8}", row.line, model,
                       validate::quantity_name(row.quantity), row.measured, row.predicted, percent(row.error, true));
    if (!row.fits) {
      out += fmt::format("  predicted not to fit: {:.1f} of {:.1f} GiB", row.memory_bytes / kGiB,
                         row.capacity_bytes / kGiB);
    }
    out += '\n';
  }
  out += fmt::format("\n{:<60} {:>5} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6}\n", "source", "rows", "predicted",
                     "MAPE", "median", "P90", "worst", "bias", "unfit");
  auto line = [&](const validate::Summary& s) {
    const std::string name = table_cell(s.source, 60);
    if (s.predicted == 0) {  // no error to average: a dash, not a 0.0% that reads as perfect
      out += fmt::format("{:<60} {:>5} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6}\n", name, s.rows, 0, "-", "-", "-",
                         "-", "-", 0);
      return;
    }
    out += fmt::format("{:<60} {:>5} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6}\n", name, s.rows, s.predicted,
                       percent(s.mape, false), percent(s.median_ape, false), percent(s.p90_ape, false),
                       percent(s.max_ape, false), percent(s.speed_bias, true), s.not_fitting);
  };
  for (const validate::Summary& s : r.per_source) line(s);
  line(r.overall);
  out += "bias: mean signed error of the predicted speed, + where predictions are faster than measured\n";
  if (r.overall.not_fitting > 0) {
    out += fmt::format("unfit: rows the memory model says could not fit, though every measured run ran ({} of {})\n",
                       r.overall.not_fitting, r.overall.predicted);
  }
  return out;
}

nlohmann::json validation_json(const validate::Report& r) {
  nlohmann::json j;
  j["rows"] = nlohmann::json::array();
  for (const validate::RowResult& row : r.rows) {
    nlohmann::json o = {{"source", row.source}, {"model", row.model}, {"line", row.line},
                        {"quantity", validate::quantity_name(row.quantity)}, {"measured", row.measured}};
    if (row.reason.empty()) {
      o["predicted"] = row.predicted;
      o["error"] = row.error;
      o["memory_gib"] = row.memory_bytes / kGiB;
      o["fits"] = row.fits;
    } else {
      o["predicted"] = nullptr;
      o["error"] = nullptr;
      o["reason"] = row.reason;
    }
    j["rows"].push_back(std::move(o));
  }
  const auto summary = [](const validate::Summary& s) {
    nlohmann::json o = {{"source", s.source}, {"rows", s.rows}, {"predicted", s.predicted},
                        {"mape", s.mape}, {"median_ape", s.median_ape}, {"p90_ape", s.p90_ape},
                        {"max_ape", s.max_ape}, {"speed_bias", s.speed_bias}, {"not_fitting", s.not_fitting}};
    if (s.predicted == 0) {  // no error to average, as a row without a prediction has none
      for (const char* key : {"mape", "median_ape", "p90_ape", "max_ape", "speed_bias"}) o[key] = nullptr;
    }
    return o;
  };
  j["summary"] = summary(r.overall);
  j["per_source"] = nlohmann::json::array();
  for (const validate::Summary& s : r.per_source) j["per_source"].push_back(summary(s));
  return j;
}

}  // namespace stepcast::report
