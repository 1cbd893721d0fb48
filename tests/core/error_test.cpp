#include "core/error.h"

#include <gtest/gtest.h>

#include <string>

namespace stepcast {
namespace {

TEST(Error, RendersFileLineColumnFieldMessageExcerptAndCaret) {
  const Error e = Error(ErrorKind::kInvalidInput, "expected a number").at({"m.yaml", 3, 8}).in_field("layers").with_excerpt("layers: x");
  EXPECT_STREQ(e.what(), "m.yaml:3:8: layers: expected a number\n  layers: x\n         ^");
}

TEST(Error, ALongLineIsShownAsAWindowAroundTheColumn) {
  // A minified config.json is one line; the excerpt keeps 120 characters with the caret under
  // the column, not the whole line.
  const std::string line = std::string(1000, 'a') + "X" + std::string(1000, 'b');
  const Error e = Error(ErrorKind::kInvalidInput, "bad").at({"c.json", 1, 1001}).with_excerpt(line);
  const std::string rendered = e.what();
  const std::string excerpt = rendered.substr(rendered.find("\n  ") + 3, rendered.rfind("\n  ") - rendered.find("\n  ") - 3);
  const std::string caret = rendered.substr(rendered.rfind("\n  ") + 3);
  EXPECT_EQ(excerpt, "..." + std::string(60, 'a') + "X" + std::string(59, 'b') + "...");
  EXPECT_EQ(excerpt[caret.size() - 1], 'X');
}

TEST(Error, ControlCharactersReadFromAFileAreShownNotActedOn) {
  // A NUL ended the printed message; an escape sequence would colour the terminal.
  const std::string value = std::string("g\0x\x1b[31m", 8);
  const Error e = Error(ErrorKind::kInvalidInput, "unknown GPU preset \"" + value + "\"\n  second line\tend")
                      .at({"c.yaml", 2, 8})
                      .in_field("gpu")
                      .with_excerpt("gpu: \"" + value + "\"");
  const std::string rendered = e.what();
  EXPECT_EQ(rendered.size(), std::char_traits<char>::length(e.what()));
  EXPECT_EQ(rendered,
            "c.yaml:2:8: gpu: unknown GPU preset \"g\\x00x\\x1b[31m\"\n  second line\tend\n"
            "  gpu: \"g?x?[31m\"\n"
            "         ^");
}

}  // namespace
}  // namespace stepcast
