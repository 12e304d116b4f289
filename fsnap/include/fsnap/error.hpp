// fsnap::Error — the one error type of the snapshot engine.
//
// Every failure in fsnap is thrown as an Error carrying a code (what kind of failure)
// and a message that names the path, ref or object involved. The engine never returns a
// stale or partial result in place of an error. Absence that callers expect is a value,
// not an error (an unknown run has an empty log); absence of what the caller named (a
// checkpoint reference that resolves to nothing) is kNotFound.
//
// The libraries above fsnap (sandbox, fleet, hooks) throw the same Error, so the
// executable maps every failure to its exit status in one place. Thread-safety: an
// Error is an immutable value.
#pragma once

#include <cstddef>
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

// User input as an error message may quote it: on one line, in single quotes — or, if
// it holds newlines, control bytes or invalid UTF-8, in double quotes with C escapes
// (as quote_path does) — and shortened to about max_bytes with the full length said
// ("'aaaa...' (5000 bytes)").
std::string quote_input(std::string_view input, std::size_t max_bytes = 60);

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
