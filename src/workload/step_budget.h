// The bounds a simulated step is built within.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "spec/scenario.h"

namespace stepcast::workload {

/// How many tasks a step's graph may hold, and how long all of them may add up to: the engine's
/// integer-nanosecond clock must not overflow. Crossing either is an error that says so and
/// points to `stepcast estimate`, which prices the same step in closed form.
class StepBudget {
 public:
  StepBudget(const spec::Scenario& s, std::size_t max_tasks) : s_(s), max_tasks_(max_tasks) {}

  /// `seconds` in the engine's nanoseconds, counted against the budget. Every duration enters
  /// the graph here, so an input far out of range (a bandwidth of 1e-300 GB/s, a launch of
  /// 1e308 s) is an input error, not a wrapped-around time.
  std::int64_t to_ns(double seconds);
  /// Throws where a graph of `tasks` tasks may not take one more.
  void check_room(std::size_t tasks) const;
  /// Throws where the step's graph would hold more than the budget, judged before it is built:
  /// where its layer passes are many enough to come near the budget, from `tasks_with(m)`, the
  /// tasks of the same step with m = 2 and 3 micro-batches, as what each further one adds.
  void check_step(const std::function<std::size_t(int micro_batches)>& tasks_with) const;
  std::size_t max_tasks() const { return max_tasks_; }

 private:
  const spec::Scenario& s_;
  const std::size_t max_tasks_;
  double total_ns_ = 0;  // of every task so far
};

}  // namespace stepcast::workload
