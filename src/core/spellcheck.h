// Did-you-mean suggestions for names the user typed: presets, keys, enum values, subcommands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stepcast::core {

/// The candidate closest to `word` by edit distance (case-insensitive), or "" when none is within
/// max(2, word.size() / 3) edits. Ties go to the candidate sharing the longest prefix with `word`
/// (a user who typed "llama3-8b" means the Llama 3 family, not "llama2-7b"), then the earliest.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// `did you mean "x"?` for the closest candidate, else `valid: a, b, c` listing all candidates.
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace stepcast::core
