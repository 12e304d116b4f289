#include "fsnap/error.hpp"

#include <algorithm>

#include "fsnap/enum_names.hpp"
#include "fsnap/filesystem.hpp"
#include "fsnap/path_quoting.hpp"

namespace fsnap {

namespace {

constexpr EnumName<ErrorCode> kErrorCodeNames[] = {
    {ErrorCode::kInvalidArgument, "invalid argument"},
    {ErrorCode::kNotFound, "not found"},
    {ErrorCode::kAmbiguous, "ambiguous"},
    {ErrorCode::kPathEscape, "path escape"},
    {ErrorCode::kIo, "i/o error"},
    {ErrorCode::kCorrupt, "corrupt store"},
    {ErrorCode::kConflict, "conflict"}};

constexpr EnumName<EntryType> kEntryTypeNames[] = {{EntryType::kFile, "file"},
                                                   {EntryType::kDirectory, "directory"},
                                                   {EntryType::kSymlink, "symlink"}};

}  // namespace

std::string_view to_string(ErrorCode code) {
  return name_of(kErrorCodeNames, code, "unknown error");
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
  return name_of(kEntryTypeNames, type, "unknown");
}

}  // namespace fsnap
