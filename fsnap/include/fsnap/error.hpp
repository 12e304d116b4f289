// fsnap::Error — the one error type of the snapshot engine.
//
// Every failure in fsnap is thrown as an Error carrying a code (what kind of failure)
// and a message that names the path, ref or object involved. Expected outcomes ("no
// such checkpoint") are errors too: the engine never returns a stale or partial result
// in their place. Thread-safety: an Error is an immutable value.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace fsnap {

// What kind of failure an Error reports.
enum class ErrorCode {
  kInvalidArgument,  // malformed input: bad ref syntax, bad tag, bad option value
  kNotFound,         // a path, ref or checkpoint that does not exist
  kAmbiguous,        // a prefix that matches more than one checkpoint
  kPathEscape,       // a path that leaves the workspace root
  kIo,               // the operating system refused a read or write
  kCorrupt,          // the store holds something it should not
  kConflict,         // the workspace changed under an operation that needed it still
};

// Short lowercase name of a code ("not found").
std::string_view to_string(ErrorCode code);

// The exception thrown by every fsnap operation that fails.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

  // What kind of failure this is.
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace fsnap
