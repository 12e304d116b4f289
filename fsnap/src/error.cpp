#include "fsnap/error.hpp"

#include <algorithm>

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
  // quote_path escapes what cannot stand on one line (and double-quotes it then).
  std::string quoted = quote_path(input.substr(0, cut));
  if (quoted.empty() || quoted.front() != '"') quoted = "'" + quoted + "'";
  if (cut < input.size()) {
    quoted.insert(quoted.size() - 1, "...");
    quoted += " (" + std::to_string(input.size()) + " bytes)";
  }
  return quoted;
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
