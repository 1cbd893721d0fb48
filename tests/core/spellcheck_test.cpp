#include "core/spellcheck.h"

#include <gtest/gtest.h>

namespace stepcast::core {
namespace {

TEST(Spellcheck, SuggestsNearestName) {
  const std::vector<std::string> names = {"llama3.1-405b", "llama3.1-70b", "gpt3-175b"};
  EXPECT_EQ(closest_match("llama3-405b", names), "llama3.1-405b");
  EXPECT_EQ(suggestion("gpt3-157b", names), "did you mean \"gpt3-175b\"?");
}

TEST(Spellcheck, ListsAllWhenNothingIsClose) {
  EXPECT_EQ(closest_match("zzzzzzzz", {"abc", "def"}), "");
  EXPECT_EQ(suggestion("zzzzzzzz", {"abc", "def"}), "valid: abc, def");
}

}  // namespace
}  // namespace stepcast::core
