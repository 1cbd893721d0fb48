// A pass's kernels on the compute stream beside the collectives and transfers of other streams,
// as the closed form prices them (analytic::estimate): how long the kernels take beside them, how
// far the communication gets meanwhile, and what a transfer on links the collectives share
// exposes. Internal to analytic.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <limits>

#include "workload/operators.h"

namespace stepcast::analytic {

// A stretch of communication: `seconds` during which kernels that take `alone` on the whole GPU
// take `beside` instead (next to the collectives running then).
// `rate`: the communication's progress per second while the kernels run (below 1 where they
// share its link), at full speed once they have ended.
// `holders`: the collectives then holding SMs beside the kernels; `comm`: what of `beside` is
// the pass's own communication rather than its kernels (PassStream::overlapped).
struct Phase {
  double seconds = 0, beside = 0;
  double rate = 1;
  int holders = 1;
  double comm = 0;
};

// Seconds for kernels of `alone` seconds run alongside communication phases started with them:
// they progress at each phase's rate while it lasts and at the full rate after the last, and the
// pair ends when both have, never before the kernels alone would (callers subtract `alone`, and
// rounding must not leave them a negative residue).
inline double overlapped_s(double alone, std::initializer_list<Phase> phases) {
  double t = 0, left = 1;  // left: the share of the kernels' work not yet done
  double end = -1;
  for (const Phase& p : phases) {
    if (end < 0 && p.seconds > 0) {
      const double lasts = p.seconds / p.rate;  // while the kernels run beside it
      if (lasts >= left * p.beside) {
        end = t + left * p.beside;
        t = end + p.seconds - left * p.beside * p.rate;
      } else {
        left -= lasts / p.beside;
        t += lasts;
      }
      continue;
    }
    t += p.seconds;
  }
  return std::max({end < 0 ? t + left * alone : end, t, alone});
}

// The same beside one collective of `comm` seconds.
inline double overlapped_s(double alone, double beside, double comm) { return overlapped_s(alone, {{comm, beside}}); }

// One kernel of a pass: its seconds alone, beside one collective and beside two (cost::KernelTime).
struct Kernel {
  double alone = 0, beside = 0, beside_two = 0;
  double with(int holders) const { return holders <= 0 ? alone : holders == 1 ? beside : beside_two; }
};

// A pass's kernels in the order they run: a layer's backward recomputes up to all its forward
// ops before its backward's kernels.
class KernelOrder {
 public:
  void add(const Kernel& k) { slots_[count_++].kernel = k; }
  std::size_t size() const { return count_; }
  const Kernel& operator[](std::size_t i) const { return slots_[i].kernel; }

 private:
  // Slots stay uninitialised until add() writes one: zeroing them in every analytic::price took
  // 6% of the 405B estimate's instructions (callgrind), where no order is built at all.
  union Slot {
    constexpr Slot() {}
    Kernel kernel;
  };
  std::array<Slot, workload::kMaxOps + 1> slots_;
  std::size_t count_ = 0;
};

// Where in each layer pass some of the gradient group's collectives run: from `from` to `to`
// seconds after the pass starts (kWholePass: throughout, as a queue that never empties does).
struct Span {
  double from = 0, to = 0;
};
inline constexpr Span kWholePass{0, std::numeric_limits<double>::infinity()};

// A transfer on a stream of its own beside some of a pass's kernels, the op after them waiting
// for it: the CP ring beside the core attention (Transformer Engine's AttnFuncWithCPAndKVP2P
// posts each step's isend/irecv on the CP group, flash_attn_p2p_communicate, before the attention
// of the chunk in hand). `seconds` on its links alone, `times` per pass (a share where
// recomputation re-runs it, or a stage's layers); `window`: those kernels alone, beside one
// collective and beside two (cost::KernelTime; the transfer holds SMs as NCCL's kernels do);
// `lead`: the pass's kernels before them, beside one collective (PassTimes::Beside).
struct SideTransfer {
  double seconds = 0, times = 0;
  std::array<double, 3> window{};
  double lead = 0;
  // The seconds it adds to the pass beyond its kernels where `holders` other collectives hold SMs
  // beside them and `sharers` of those cross its links, where each of the sharers + 1 transfers
  // gets an equal share of the bandwidth (as the simulator's links share it).
  double exposed(int holders, int sharers) const {
    if (!moves()) return 0;
    const double alone = window[static_cast<std::size_t>(std::min(holders, 2))];
    const double beside = window[static_cast<std::size_t>(std::min(holders + 1, 2))];
    return times * (overlapped_s(alone, beside, (sharers + 1) * seconds) - alone);
  }
  // The share of its window that collectives running over `span` of the pass meet: a collective
  // started with the pass runs first beside the `lead` kernels (in backward the MLP block's, as
  // autograd reverses the forward's order), and only what is left of it then reaches the window.
  double met(Span span) const {
    const double from = lead, to = lead + window[1];
    if (to <= from) return 1;
    return std::clamp((std::min(span.to, to) - std::max(span.from, from)) / (to - from), 0.0, 1.0);
  }
  // Its seconds on the links in a pass.
  double link_s() const { return times * seconds; }
  // Whether it moves anything in a pass: a pass without a CP ring has only idle side transfers.
  bool moves() const { return seconds > 0 && times > 0; }
  SideTransfer scaled(double n) const { return {seconds, times * n, window, lead}; }
};

// A pass's side transfers: its own two (beside the first share of its attention and beside the
// rest: workload::CpAroundAttention) and, in a backward, the recomputed forward's.
using SideTransfers = std::array<SideTransfer, 3>;

// A pass on the compute stream beside the gradient group's collectives (ZeRO-3 gathers and
// scatters, data-parallel buckets): its kernels, which run slowed beside one collective or two,
// and its exposed TP and EP collectives, on other links than the group's (`apart`: neither
// slows the other) or on the same links (`shared`: beside n of the group's collectives each of
// the n + 1 gets an equal share of the bandwidth), and transfers on the group's links on streams
// of their own (`side`: the CP ring). The n collectives share a transfer's links over the part of
// its window they run beside (SideTransfer::met): there it takes n + 1 times as long and may
// outlast the kernels it hid behind, and the group loses its seconds on the links; elsewhere it
// has its links to itself.
//
// Where the order of its kernels is known (`order`), the communication started with the pass runs
// beside its first kernels, which it slows by their own shares of the GPU rather than by the pass's
// average (PassStream::overlapped), as the simulator runs it.
struct PassStream {
  double kernels = 0, beside = 0, beside_two = 0;
  double apart = 0, shared = 0;
  SideTransfers side{};
  const KernelOrder* order = nullptr;
  // The sides' exposure beside `holders` collectives, `sharers` of which cross their links over
  // `span` of the pass; and their seconds on the links over it.
  double side_exposed(int holders, int sharers, Span span = kWholePass) const {
    double s = 0;
    for (const SideTransfer& t : side) {
      if (!t.moves()) continue;  // exposes nothing, whatever meets it
      const double met = t.met(span);
      s += met * t.exposed(holders, sharers) + (1 - met) * t.exposed(holders, 0);
    }
    return s;
  }
  double side_link_s(Span span) const {
    double s = 0;
    for (const SideTransfer& t : side) {
      if (t.moves()) s += t.met(span) * t.link_s();
    }
    return s;
  }
  double alone() const { return kernels + apart + shared + side_exposed(0, 0); }
  // `seconds` beside another stream's kernel (FSDP2's copy in), which holds SMs, not links.
  Phase beside_kernel(double seconds) const {
    const double comm = apart + shared + side_exposed(1, 0);
    return {seconds, beside + comm, 1, 1, comm};
  }
  // A phase of `seconds` of the group's communication, run by `n` collectives at once over `span`
  // of each pass.
  Phase beside_group(double seconds, int n, Span span) const {
    const double comm = apart + (n + 1) * shared + side_exposed(n, n, span);
    const double stream = (n >= 2 ? beside_two : beside) + comm;
    const double lost = shared + side_link_s(span);
    return {seconds, stream, stream > 0 ? (stream - lost) / stream : 1, n, comm};
  }
  // overlapped_s for the pass's kernels beside `phases` started with it; in their order where it
  // is known, each kernel slowed by its own share of the phase it meets and its pass's own
  // communication taken as spread over the kernels by their time alone.
  double overlapped(std::initializer_list<Phase> phases) const {
    if (order == nullptr) return overlapped_s(alone(), phases);
    Progress at;
    double t = 0, end = -1;
    for (const Phase& p : phases) {
      if (end < 0 && p.seconds > 0) {
        const double lasts = p.seconds / p.rate;  // while the kernels run beside it
        const double used = run(at, lasts, p.holders, p.comm);
        if (at.next == order->size()) {
          end = t + used;
          t = end + p.seconds - used * p.rate;
        } else {
          t += lasts;
        }
        continue;
      }
      t += p.seconds;
    }
    if (end < 0) end = t + run(at, std::numeric_limits<double>::infinity(), 0, alone() - kernels);
    return std::max({end, t, alone()});
  }

 private:
  // How far the kernels in order have got: the first not yet done, and the share of it that is.
  struct Progress {
    std::size_t next = 0;
    double done = 0;
  };
  // Runs the kernels from `at` for up to `seconds` beside `holders` collectives and the pass's
  // communication `comm`; the seconds they took.
  double run(Progress& at, double seconds, int holders, double comm) const {
    double used = 0;
    for (; at.next < order->size(); ++at.next, at.done = 0) {
      const Kernel& kernel = (*order)[at.next];
      const double whole = kernel.with(holders) + (kernels > 0 ? kernel.alone / kernels * comm : 0);
      const double rest = (1 - at.done) * whole;
      if (used + rest > seconds) {
        at.done += (seconds - used) / whole;
        return seconds;
      }
      used += rest;
    }
    return used;
  }
};

}  // namespace stepcast::analytic
