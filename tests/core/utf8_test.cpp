#include "core/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace stepcast::core {
namespace {

std::string error_of(std::string_view text) {
  try {
    require_utf8("f.yaml", text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST(Utf8, AcceptsAsciiAndWellFormedCharactersOfEveryLength) {
  // é (2 bytes), — (3 bytes), U+10FFFF and 𝛼 (4 bytes), and the byte-order mark.
  EXPECT_EQ(
      error_of("name: caf\xC3\xA9 \xE2\x80\x94 \xF4\x8F\xBF\xBF \xF0\x9D\x9B\xBC\n\xEF\xBB\xBF"),
      "");
}

TEST(Utf8, NamesLineAndColumnOfALatin1Byte) {
  // "Megatron" with ¶ typed in Latin-1 (0xB6), on the second line, fourth byte.
  EXPECT_EQ(error_of("layers: 80\nmeg\xB6tron\n"),
            "f.yaml:2:4: byte 0xB6 is not UTF-8 text\n  meg\xB6tron\n     ^");
}

TEST(Utf8, RejectsOverlongSurrogateOutOfRangeAndCutOffCharacters) {
  EXPECT_NE(error_of("\xC0\xAF"), "");          // overlong '/'
  EXPECT_NE(error_of("\xE0\x80\xAF"), "");      // overlong '/' in three bytes
  EXPECT_NE(error_of("\xED\xA0\x80"), "");      // surrogate U+D800
  EXPECT_NE(error_of("\xF4\x90\x80\x80"), "");  // U+110000
  EXPECT_NE(error_of("caf\xC3"), "");           // a character cut off by the end of the file
  EXPECT_NE(error_of("\xE2\x80x"), "");         // a continuation byte missing
}

TEST(EscapeControls, WritesControlCharactersAsHexAndKeepsLineBreaksOnlyWhenAsked) {
  const std::string text = std::string("a\nb\tc") + '\0' + "\x1b[31md\x7f \xC3\xA9";
  EXPECT_EQ(escape_controls(text, false), "a\\x0ab\\x09c\\x00\\x1b[31md\\x7f \xC3\xA9");
  EXPECT_EQ(escape_controls(text, true), "a\nb\tc\\x00\\x1b[31md\\x7f \xC3\xA9");
}

}  // namespace
}  // namespace stepcast::core
