#include "core/spellcheck.h"

#include <algorithm>
#include <cctype>

namespace stepcast::core {
namespace {

// Levenshtein distance with one row of memory, as in ninja's edit_distance.cc.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      const size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() &&
         std::tolower(static_cast<unsigned char>(a[n])) ==
             std::tolower(static_cast<unsigned char>(b[n])))
    ++n;
  return n;
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  size_t best_prefix = 0;
  for (const std::string& candidate : candidates) {
    const size_t d = edit_distance(word, candidate);
    const size_t prefix = common_prefix(word, candidate);
    if (d < best_distance || (d == best_distance && prefix > best_prefix)) {
      best_distance = d;
      best_prefix = prefix;
      best = candidate;
    }
  }
  return best;
}

std::string suggestion(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string best = closest_match(word, candidates);
  if (!best.empty()) return "did you mean \"" + best + "\"?";
  std::string list;
  for (const std::string& c : candidates) list += (list.empty() ? "" : ", ") + c;
  return "valid: " + list;
}

}  // namespace stepcast::core
