// UTF-8 checks for text inputs. YAML (spec 1.2 §5.2) and our CSV tables are UTF-8; a file in
// another encoding (Latin-1 from a spreadsheet, say) would otherwise carry its bytes into names
// that JSON output cannot encode.
//
//   core::require_utf8("runs.csv", text);  // throws Error at runs.csv:LINE:COLUMN
#pragma once

#include <string>
#include <string_view>

namespace stepcast::core {

/// Throws Error(kInvalidInput) at source:line:column of the first byte that does not begin or
/// continue a well-formed UTF-8 character (no overlong forms, surrogates or code points past
/// U+10FFFF), quoting the offending line.
void require_utf8(std::string_view source, std::string_view text);

/// Whether `c` is printed as it is: no control character, or with `keep_line_breaks` a line
/// break or a tab.
bool printable(char c, bool keep_line_breaks);

/// `text` with its control characters written as \xNN: a NUL would end a C string where it is
/// printed, an escape sequence would act on the terminal, a line break would split a line of a
/// table or end a YAML comment. With `keep_line_breaks`, line breaks and tabs stay.
std::string escape_controls(std::string_view text, bool keep_line_breaks);

}  // namespace stepcast::core
