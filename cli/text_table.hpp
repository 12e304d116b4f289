// Tables a person reads in a terminal (`log`, `runs`, `states RUN`): columns as wide
// as their widest cell, the last one cut to fit the width (80-120 columns is what a
// terminal shows without wrapping), and lines of their own between the rows (a detail
// under a row, a heading before a group of rows). Cells are made printable first: a
// newline or tab becomes a space, another control character "?", a byte that is not
// UTF-8 U+FFFD, so that a recorded text cannot move the cursor or break the row.
//
// Thread-safety: a plain value.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

// The width the tables of the human output keep to by default.
inline constexpr std::size_t kTableWidth = 100;

// text on one line and printable (see above).
std::string printable(std::string_view text);
// How many columns text takes (its code points: a wide character counts as one).
std::size_t columns_of(std::string_view text);
// text cut to at most columns, "..." at the end when it was cut (never within a
// character).
std::string fit(std::string_view text, std::size_t columns);
// text in pieces of at most columns each, broken after a space (within a word only
// when the word is longer than a piece).
std::vector<std::string> wrap_text(std::string_view text, std::size_t columns);

// One column of a Table.
struct TableColumn {
  std::string header;
  bool right_aligned = false;  // numbers
  // A cell wider than this is cut (0: never; a reference is never cut, so that it can be
  // copied into the next command).
  std::size_t max_width = 0;
};

// Rows laid out in columns.
class TextTable {
 public:
  explicit TextTable(std::vector<TableColumn> columns) : columns_(std::move(columns)) {}

  // A row: one cell per column (missing cells are empty).
  void add_row(std::vector<std::string> cells);
  // A line of its own after the rows added so far, indented by indent columns and cut
  // to the width.
  void add_line(std::string text, std::size_t indent = 0);
  bool empty() const { return items_.empty(); }

  // What becomes of a last cell too wide for the line.
  enum class Overflow { kCut, kWrap };
  // Writes the header and the rows, two spaces between columns; the last column cut
  // (or wrapped onto lines of its own, under it) and every line cut, so that no line
  // is wider than width (0: nothing is cut).
  void print(std::ostream& out, std::size_t width, Overflow last = Overflow::kCut) const;

 private:
  struct Item {
    bool line = false;
    std::vector<std::string> cells;  // a row
    std::string text;                // a line
    std::size_t indent = 0;
  };
  std::vector<TableColumn> columns_;
  std::vector<Item> items_;
};

}  // namespace cli
