#include "core/utf8.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"

namespace stepcast::core {
namespace {

// Length of the well-formed character starting at text[i], or 0 if none starts there. The
// ranges of the second byte follow the Unicode Standard's table 3-7 (well-formed byte sequences).
std::size_t character_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

void require_utf8(std::string_view source, std::string_view text) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = character_length(text, i);
    if (length == 0) {
      const std::size_t line_end = text.find('\n', line_start);
      throw Error(
          ErrorKind::kInvalidInput,
          fmt::format("byte 0x{:02X} is not UTF-8 text", static_cast<unsigned char>(text[i])),
          "save the file as UTF-8 (iconv -f latin1 -t utf-8 FILE, or the encoding it is in)")
          .at({std::string(source), line, static_cast<int>(i - line_start) + 1})
          .with_excerpt(std::string(text.substr(line_start, line_end - line_start)));
    }
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += length;
  }
}

bool printable(char c, bool keep_line_breaks) {
  const auto byte = static_cast<unsigned char>(c);
  return (byte >= 0x20 && byte != 0x7F) || (keep_line_breaks && (c == '\n' || c == '\t'));
}

std::string escape_controls(std::string_view text, bool keep_line_breaks) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (printable(c, keep_line_breaks)) {
      out += c;
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

}  // namespace stepcast::core
