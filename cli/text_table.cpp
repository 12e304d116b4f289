#include "text_table.hpp"

#include <algorithm>
#include <ostream>

#include "output.hpp"

namespace cli {

namespace {

// The last column keeps at least this much, whatever the columns before it take.
constexpr std::size_t kLeastLastColumn = 16;

bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

std::string pad(const std::string& cell, std::size_t width, bool right) {
  std::size_t n = columns_of(cell);
  if (n >= width) return cell;
  std::string space(width - n, ' ');
  return right ? space + cell : cell + space;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out = sanitize_utf8(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') {
      c = ' ';
    } else if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7F) {
      c = '?';
    }
  }
  return out;
}

std::size_t columns_of(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !continuation(c); }));
}

std::string fit(std::string_view text, std::size_t columns) {
  if (columns_of(text) <= columns) return std::string(text);
  constexpr std::string_view kCut = "...";
  std::size_t keep = columns > kCut.size() ? columns - kCut.size() : 0;
  std::size_t end = 0;
  for (std::size_t seen = 0; end < text.size(); ++end) {
    if (!continuation(text[end]) && seen++ == keep) break;
  }
  return std::string(text.substr(0, end)) + std::string(kCut);
}

std::vector<std::string> wrap_text(std::string_view text, std::size_t columns) {
  std::vector<std::string> out;
  columns = std::max<std::size_t>(columns, 1);
  while (columns_of(text) > columns) {
    // The byte where the piece's last column ends, and the last space within it.
    std::size_t end = 0;
    std::size_t space = std::string_view::npos;
    for (std::size_t seen = 0; end < text.size(); ++end) {
      if (continuation(text[end])) continue;
      if (seen++ == columns) break;
      if (text[end] == ' ') space = end;
    }
    // Broken after its last space, else (one word longer than the line) where it ends.
    std::size_t cut = space != std::string_view::npos && space > 0 ? space + 1 : end;
    std::string piece(text.substr(0, cut));
    while (!piece.empty() && piece.back() == ' ') piece.pop_back();
    out.push_back(piece);
    text.remove_prefix(cut);
  }
  if (!text.empty() || out.empty()) out.emplace_back(text);
  return out;
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::string& c : cells) c = printable(c);
  items_.push_back({false, std::move(cells), "", 0});
}

void TextTable::add_line(std::string text, std::size_t indent) {
  items_.push_back({true, {}, printable(text), indent});
}

void TextTable::print(std::ostream& out, std::size_t width, Overflow overflow) const {
  if (columns_.empty()) return;
  std::size_t last = columns_.size() - 1;
  std::vector<std::size_t> widths(columns_.size(), 0);
  auto cell_width = [&](std::size_t i, const std::string& cell) {
    std::size_t n = columns_of(cell);
    return columns_[i].max_width != 0 ? std::min(n, columns_[i].max_width) : n;
  };
  for (std::size_t i = 0; i < last; ++i) widths[i] = cell_width(i, columns_[i].header);
  for (const Item& item : items_) {
    if (item.line) continue;
    for (std::size_t i = 0; i < last; ++i)
      widths[i] = std::max(widths[i], cell_width(i, item.cells[i]));
  }
  std::size_t before_last = 0;
  for (std::size_t i = 0; i < last; ++i) before_last += widths[i] + 2;
  std::size_t room =
      width == 0 ? std::string::npos
                 : std::max(kLeastLastColumn, width > before_last ? width - before_last : 0);
  auto write_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < last; ++i) {
      const TableColumn& c = columns_[i];
      std::string cell = c.max_width != 0 ? fit(cells[i], c.max_width) : cells[i];
      line += pad(cell, widths[i], c.right_aligned) + "  ";
    }
    std::vector<std::string> pieces = {cells[last]};
    if (room != std::string::npos) {
      pieces = overflow == Overflow::kWrap ? wrap_text(cells[last], room)
                                           : std::vector<std::string>{fit(cells[last], room)};
    }
    line += pieces.front();
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
    for (std::size_t i = 1; i < pieces.size(); ++i) {
      out << std::string(before_last, ' ') << pieces[i] << '\n';
    }
  };
  std::vector<std::string> headers;
  for (const TableColumn& c : columns_) headers.push_back(c.header);
  write_row(headers);
  for (const Item& item : items_) {
    if (!item.line) {
      write_row(item.cells);
      continue;
    }
    std::string text = item.text;
    if (width != 0)
      text = fit(text, std::max(kLeastLastColumn, width > item.indent ? width - item.indent : 0));
    out << std::string(item.indent, ' ') << text << '\n';
  }
}

}  // namespace cli
