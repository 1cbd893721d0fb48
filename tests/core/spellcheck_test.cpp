#include "core/spellcheck.h"

#include <gtest/gtest.h>

namespace stepcast::core {
namespace {

TEST(Spellcheck, SuggestsNearestName) {
  const std::vector<std::string> names = {"llama3.1-405b", "llama3.1-70b", "gpt3-175b"};
  EXPECT_EQ(closest_match("llama3-405b", names), "llama3.1-405b");
  EXPECT_EQ(suggestion("gpt3-157b", names), "did you mean \"gpt3-175b\"?");
}

TEST(Spellcheck, BreaksTiesByTheLongestSharedPrefix) {
  // Both are two edits from "llama3-8b"; the user named the Llama 3 family.
  const std::vector<std::string> names = {"llama2-7b", "llama3.1-8b"};
  EXPECT_EQ(closest_match("llama3-8b", names), "llama3.1-8b");
}

TEST(Spellcheck, ListsAllWhenNothingIsClose) {
  EXPECT_EQ(closest_match("zzzzzzzz", {"abc", "def"}), "");
  EXPECT_EQ(suggestion("zzzzzzzz", {"abc", "def"}), "valid: abc, def");
}

}  // namespace
}  // namespace stepcast::core
