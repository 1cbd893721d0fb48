#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <thread>

#include "analysis/simulate.h"
#include "analytic/estimate.h"
#include "core/error.h"
#include "validate/validate.h"

namespace stepcast::validate {
namespace {

double predicted_value(const Case& c, const analytic::Estimate& e) {
  switch (c.quantity) {
    case Quantity::kIterationTime: return e.step_time_s;
    case Quantity::kTokensPerSecond: return e.tokens_per_s;
    case Quantity::kTflopsPerGpu: return c.megatron_convention ? e.megatron_tflops_per_gpu : e.tflops_per_gpu;
    case Quantity::kMfu: return e.mfu;
  }
  return 0;
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

Summary summarise(const std::string& source, const std::vector<RowResult>& rows) {
  Summary s;
  s.source = source;
  std::vector<double> errors;
  double speed_excess = 0;
  for (const RowResult& r : rows) {
    if (source != "all" && r.source != source) continue;
    ++s.rows;
    if (!r.reason.empty()) continue;
    ++s.predicted;
    if (!r.fits) ++s.not_fitting;
    errors.push_back(std::abs(r.error));
    speed_excess += r.quantity == Quantity::kIterationTime ? r.measured / r.predicted - 1 : r.error;
  }
  if (errors.empty()) return s;
  std::sort(errors.begin(), errors.end());
  double sum = 0;
  for (double e : errors) sum += e;
  s.mape = sum / errors.size();
  s.speed_bias = speed_excess / errors.size();
  const size_t n = errors.size();
  s.median_ape = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  s.p90_ape = percentile(errors, 0.9);
  s.max_ape = errors.back();
  return s;
}

RowResult predict(const Case& c, Engine engine) {
  RowResult r;
  r.source = c.source;
  r.model = c.model;
  r.line = c.line;
  r.quantity = c.quantity;
  r.measured = c.measured;
  r.reason = c.reason;
  if (!r.reason.empty()) return r;
  analytic::Estimate e;
  try {
    e = engine == Engine::kAnalytic ? analytic::estimate(c.scenario) : analysis::simulate_metrics(c.scenario);
    analytic::require_finite(e);
  } catch (const Error& cannot) {
    // A row the engine cannot run (a step too large to simulate, or so far out of range that it
    // would take years) is listed with the reason, as the others are; only a bug stops the run.
    if (cannot.kind() == ErrorKind::kInternal) throw;
    r.reason = cannot.message();
    return r;
  }
  r.predicted = predicted_value(c, e);
  r.error = (r.predicted - r.measured) / r.measured;
  r.memory_bytes = e.memory.total_bytes;
  r.capacity_bytes = e.memory.capacity_bytes;
  r.fits = e.memory.fits;
  return r;
}

}  // namespace

const char* quantity_name(Quantity q) {
  switch (q) {
    case Quantity::kIterationTime: return "iteration_s";
    case Quantity::kTokensPerSecond: return "tokens_per_s";
    case Quantity::kTflopsPerGpu: return "tflops_per_gpu";
    case Quantity::kMfu: return "mfu";
  }
  return "";
}

Report run(const std::vector<Case>& cases, Engine engine) {
  Report report;
  report.rows.resize(cases.size());
  // Rows are independent and a simulated row takes milliseconds to a second, so the simulator
  // spreads them over the cores. Each result lands at its row's index: the report does not
  // depend on the thread count. The closed form is fast enough on one core.
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failures(cases.size());
  auto work = [&] {
    for (std::size_t i = next++; i < cases.size(); i = next++) {
      try {
        report.rows[i] = predict(cases[i], engine);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  const unsigned threads = engine == Engine::kAnalytic ? 1 : std::max(1u, std::thread::hardware_concurrency());
  {
    std::vector<std::jthread> helpers;
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
  }
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
  std::vector<std::string> sources;
  for (const RowResult& r : report.rows) {
    if (std::find(sources.begin(), sources.end(), r.source) == sources.end()) sources.push_back(r.source);
  }
  for (const std::string& source : sources) report.per_source.push_back(summarise(source, report.rows));
  report.overall = summarise("all", report.rows);
  return report;
}

}  // namespace stepcast::validate
