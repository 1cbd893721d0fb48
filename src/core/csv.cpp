#include "core/csv.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/utf8.h"

namespace stepcast::core {
namespace {

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

}  // namespace

int CsvTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvTable read_csv(std::string_view source, std::string_view text) {
  require_utf8(source, text);
  // Spreadsheets saving "CSV UTF-8" (Excel among them) start the file with a byte-order mark.
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  CsvTable table;
  table.source = std::string(source);
  std::vector<CsvRow> records;
  CsvRow record;
  std::string cell;
  bool quoted = false;
  bool cell_started = false;
  int line = 1;
  record.line = 1;
  const auto end_cell = [&] {
    record.cells.push_back(trim(cell));
    cell.clear();
    cell_started = false;
  };
  const auto end_record = [&] {
    end_cell();
    const bool blank = record.cells.size() == 1 && record.cells[0].empty();
    if (!blank) records.push_back(std::move(record));
    record = CsvRow{};
    record.line = line;
  };
  int quote_line = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == '"' && !cell_started) {
      quoted = true;
      cell_started = true;
      quote_line = line;
    } else if (c == ',') {
      end_cell();
    } else if (c == '\n') {
      ++line;
      end_record();
    } else {
      cell += c;
      if (c != ' ' && c != '\t' && c != '\r') cell_started = true;
    }
  }
  if (quoted) {
    throw Error(ErrorKind::kInvalidInput, "unterminated quoted field")
        .at({std::string(source), quote_line, 0});
  }
  if (!cell.empty() || !record.cells.empty()) end_record();
  if (records.empty()) {
    throw Error(ErrorKind::kInvalidInput, "empty file: expected a header line").at({std::string(source), 1, 0});
  }
  table.header = std::move(records.front().cells);
  // A column named twice would be read from its first place and the other ignored unseen.
  for (size_t i = 0; i < table.header.size(); ++i) {
    for (size_t j = i + 1; j < table.header.size(); ++j) {
      if (table.header[i].empty() || table.header[i] != table.header[j]) continue;
      throw Error(ErrorKind::kInvalidInput, "column \"" + table.header[i] + "\" appears twice, as columns " +
                                                std::to_string(i + 1) + " and " + std::to_string(j + 1),
                  "name each column once")
          .at({std::string(source), records.front().line, 0});
    }
  }
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].cells.size() != table.header.size()) {
      throw Error(ErrorKind::kInvalidInput,
                  "expected " + std::to_string(table.header.size()) + " cells as in the header, got " +
                      std::to_string(records[r].cells.size()))
          .at({std::string(source), records[r].line, 0});
    }
    table.rows.push_back(std::move(records[r]));
  }
  return table;
}

std::string read_file(const std::string& path) {
  // A directory opens as a stream on Linux and then reads as nothing, which a parser would report
  // as an empty or truncated document.
  // An empty name opens nothing, and an error at an empty path would name no file.
  if (path.empty()) throw Error(ErrorKind::kIo, "an empty file name: expected the path of a file to read");
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    throw Error(ErrorKind::kIo, "is a directory, not a file").at({path, 0, 0});
  }
  // A FIFO blocks the open until something writes to it, and a device such as /dev/zero never
  // ends: the run would hang. Every input stepcast reads is a file read whole.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw Error(ErrorKind::kIo, "is not a regular file (a pipe, device or socket)")
        .at({path, 0, 0})
        .with_hint("write what it holds to a file and give that file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, std::string("cannot open for reading: ") + std::strerror(errno)).at({path, 0, 0});
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void require_writable_path(const std::string& path, std::string_view what) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  // Opening a FIFO for writing blocks until something reads it: the run would hang.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_character_file(status)) {
    throw Error(ErrorKind::kIo, "cannot write " + std::string(what) + ": the path is not a regular file")
        .at({path, 0, 0})
        .with_hint("give the path of a file to create or overwrite");
  }
}

void write_file(const std::string& path, std::string_view text, std::string_view what) {
  require_writable_path(path, what);
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();  // a full disk shows only when the buffer is flushed (/dev/full)
  if (!out) {
    throw Error(ErrorKind::kIo, "cannot write " + std::string(what))
        .at({path, 0, 0})
        .with_hint("check that the directory exists and is writable, and that its disk is not full");
  }
}

}  // namespace stepcast::core
