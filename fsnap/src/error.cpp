#include "fsnap/error.hpp"

#include <algorithm>

#include <cstdio>

#include "fsnap/filesystem.hpp"
#include "fsnap/path_quoting.hpp"

namespace fsnap {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kAmbiguous:
      return "ambiguous";
    case ErrorCode::kPathEscape:
      return "path escape";
    case ErrorCode::kIo:
      return "i/o error";
    case ErrorCode::kCorrupt:
      return "corrupt store";
    case ErrorCode::kConflict:
      return "conflict";
  }
  return "unknown error";
}

std::string quote_input(std::string_view input, std::size_t max_bytes) {
  std::size_t cut = std::min(input.size(), max_bytes);
  // Do not split a UTF-8 sequence.
  while (cut < input.size() && cut > 0 && (static_cast<unsigned char>(input[cut]) & 0xc0) == 0x80) {
    --cut;
  }
  std::string out = "'";
  std::string_view part = input.substr(0, cut);
  bool utf8 = is_valid_utf8(part);
  for (unsigned char c : part) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      default:
        if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "'";
  if (cut < input.size()) {
    out.insert(out.size() - 1, "...");
    out += " (" + std::to_string(input.size()) + " bytes)";
  }
  return out;
}

std::string_view to_string(EntryType type) {
  switch (type) {
    case EntryType::kFile:
      return "file";
    case EntryType::kDirectory:
      return "directory";
    case EntryType::kSymlink:
      return "symlink";
  }
  return "unknown";
}

}  // namespace fsnap
