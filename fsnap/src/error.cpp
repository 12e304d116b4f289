#include "fsnap/error.hpp"

#include "fsnap/filesystem.hpp"

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
