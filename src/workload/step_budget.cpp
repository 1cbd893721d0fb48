#include "workload/step_budget.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"

namespace stepcast::workload {
namespace {

// The step's tasks may add up to at most this: the engine's integer-nanosecond clock holds 9.2e18,
// and sharing a link or SMs stretches tasks by far less than the factor of 9 left (31.7 years).
constexpr double kMaxTotalNs = 1e18;

// Building a graph over the budget takes seconds and gigabytes before check_room stops it (12 s
// and 1.5 GB for Qwen3 32B's 2,048 micro-batches through 64 layers), so a step whose layer passes
// may outgrow it is sized first. A pass makes up to some 130 tasks (eager kernels,
// recomputation, TP collectives and each one's launch); past the budget over this many per pass,
// the step is sized from two small builds, of two micro-batches and of three, whose difference
// is what each further micro-batch adds (the first adds no gradient accumulation).
constexpr std::int64_t kMostTasksPerLayerPass = 256;

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

void StepBudget::check_step(const std::function<std::size_t(int)>& tasks_with) const {
  const std::int64_t micro_batches = s_.strategy.micro_batches();
  if (micro_batches <= 3 ||
      std::int64_t{s_.model.layers} * micro_batches * kMostTasksPerLayerPass < static_cast<std::int64_t>(max_tasks_))
    return;
  const auto two = static_cast<std::int64_t>(tasks_with(2));
  const std::int64_t per_micro_batch = static_cast<std::int64_t>(tasks_with(3)) - two;
  if (two + (micro_batches - 2) * per_micro_batch > static_cast<std::int64_t>(max_tasks_)) check_room(max_tasks_);
}

}  // namespace stepcast::workload
