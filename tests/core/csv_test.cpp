#include "core/csv.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stepcast::core {
namespace {

TEST(Csv, ReadsQuotedCellsWithCommasQuotesAndNewlines) {
  const CsvTable t = read_csv("t.csv", "a,b,c\n1,\"x, \"\"y\"\"\",\"two\nlines\"\n3,,z\n");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].cells[1], "x, \"y\"");
  EXPECT_EQ(t.rows[0].cells[2], "two\nlines");
  EXPECT_EQ(t.rows[1].line, 4);
  EXPECT_EQ(t.rows[1].cells[1], "");
  EXPECT_EQ(t.column("c"), 2);
  EXPECT_EQ(t.column("d"), -1);
}

TEST(Csv, SkipsTheByteOrderMarkSpreadsheetsWriteFirst) {
  const CsvTable t = read_csv("t.csv", "\xEF\xBB\xBF# GPUs,tp\n8,2\n");
  EXPECT_EQ(t.column("# GPUs"), 0);
  EXPECT_EQ(t.rows[0].cells[1], "2");
}

TEST(Csv, RejectsRecordWithWrongCellCountNamingTheLine) {
  try {
    read_csv("t.csv", "a,b\n1,2\n3\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.csv:3: expected 2 cells as in the header, got 1");
  }
}

TEST(Csv, RejectsUnterminatedQuote) {
  try {
    read_csv("t.csv", "a,b\n1,\"open\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.csv:2: unterminated quoted field");
  }
}

TEST(Csv, RejectsAColumnNamedTwiceInsteadOfReadingOneOfThemUnseen) {
  try {
    read_csv("t.csv", "a,b,a\n1,2,3\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.csv:1: column \"a\" appears twice, as columns 1 and 3");
    EXPECT_EQ(e.hint(), "name each column once");
  }
  // Unnamed columns (trailing commas) are not names given twice.
  EXPECT_EQ(read_csv("t.csv", "a,,\n1,,\n").header.size(), 3u);
}

TEST(Csv, RejectsACellSavedInLatin1NamingLineAndColumn) {
  try {
    read_csv("t.csv", "model,tp\nGPT caf\xE9,2\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.csv:2:8: byte 0xE9 is not UTF-8 text\n  GPT caf\xE9,2\n         ^");
  }
}

}  // namespace
}  // namespace stepcast::core
