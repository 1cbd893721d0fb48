#include "workload/step_budget.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"

namespace stepcast::workload {
namespace {

// The step's tasks may add up to at most this: the engine's integer-nanosecond clock holds 9.2e18,
// and sharing a link or SMs stretches tasks by far less than the factor of 9 left (31.7 years).
constexpr double kMaxTotalNs = 1e18;

}  // namespace

std::int64_t StepBudget::to_ns(double seconds) {
  total_ns_ += seconds * 1e9;
  if (!(seconds >= 0 && total_ns_ <= kMaxTotalNs)) {
    throw Error(ErrorKind::kInvalidInput,
                fmt::format("the simulated step's tasks add up to more than {:.0f} years (a task of {:g} s): "
                            "an input is far out of range",
                            kMaxTotalNs / 1e9 / 3.15576e7, seconds),
                "check the times, bandwidths and rates of the model, GPU and cluster files and "
                "--host-dispatch; `stepcast estimate` prices the same step in closed form");
  }
  return std::llround(seconds * 1e9);
}

void StepBudget::check_room(std::size_t tasks) const {
  if (tasks < max_tasks_) return;
  throw Error(ErrorKind::kUnsupported,
              fmt::format("simulating this step needs more than {} tasks: {} micro-batches through {} "
                          "layers on {} pipeline stages",
                          max_tasks_, s_.strategy.micro_batches(), s_.model.layers, s_.strategy.pp),
              "`stepcast estimate` prices the same step in closed form; or simulate fewer "
              "micro-batches (a larger --micro-batch or a smaller --global-batch)");
}

void StepBudget::check_step(std::size_t ops_per_layer) const {
  check_room(static_cast<std::size_t>(s_.model.layers) * (ops_per_layer + 1) *
             static_cast<std::size_t>(s_.strategy.micro_batches()));
}

}  // namespace stepcast::workload
