// A small RFC 4180 CSV reader: comma-separated, double-quoted fields may hold commas, quotes ("")
// and newlines. The first record is the header; a leading UTF-8 byte-order mark is skipped.
//
//   core::CsvTable t = core::read_csv("runs.csv", text);
//   int col = t.column("tp");             // -1 when absent
//   for (const auto& row : t.rows) use(row.cells[col], row.line);
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stepcast::core {

struct CsvRow {
  std::vector<std::string> cells;
  int line = 0;  // 1-based line where the record starts
};

struct CsvTable {
  std::string source;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;

  /// Index of the header cell equal to `name` (after trimming spaces), or -1.
  int column(std::string_view name) const;
};

/// Parses `text`. Throws Error(kInvalidInput) naming source:line for text that is not UTF-8, an
/// unterminated quote or a record whose cell count differs from the header's.
CsvTable read_csv(std::string_view source, std::string_view text);

/// The whole file; throws Error(kIo) naming the path when it cannot be read or is not a regular
/// file (a FIFO would block the open, a device such as /dev/zero never end).
std::string read_file(const std::string& path);

/// Throws Error(kIo) at `path`, "cannot write `what`", when the path exists and is neither a
/// regular file nor a character device (/dev/null, /dev/stdout): opening a FIFO would block.
void require_writable_path(const std::string& path, std::string_view what);

/// Writes `text` to the file at `path`; throws Error(kIo) at the path, "cannot write `what`",
/// when it cannot be written.
void write_file(const std::string& path, std::string_view text, std::string_view what);

}  // namespace stepcast::core
