// Errors of the runtime. sandbox throws fsnap::Error, the error type of the libraries (a
// code and a message naming what failed), so the executable maps every failure to its
// exit status in one place; the errors of docs/conformance/EXECUTION_STATE.md ("Error
// Handling") are kinds of it that callers can catch by type.
//
// Thread-safety: errors are immutable values.
#pragma once

#include <string>

#include "fsnap/error.hpp"

namespace sandbox {

using Error = fsnap::Error;
using ErrorCode = fsnap::ErrorCode;

// Base of every error about snapshots and restores of execution state.
class ExecutionStateError : public Error {
 public:
  ExecutionStateError(ErrorCode code, const std::string& message) : Error(code, message) {}
};

// A snapshot that does not fit the state it is applied to (a resource this state does
// not have, a snapshot of another kind of resource, a slice type this process has not
// registered). Nothing was changed.
class SnapshotMismatchError : public ExecutionStateError {
 public:
  explicit SnapshotMismatchError(const std::string& message)
      : ExecutionStateError(ErrorCode::kInvalidArgument, message) {}
};

// A restore that failed part-way; the state is as it was before the restore. (When
// even putting it back failed, the error is an Error kCorrupt that says what may be
// left, not this one.)
class RestoreFailedError : public ExecutionStateError {
 public:
  explicit RestoreFailedError(const std::string& message)
      : ExecutionStateError(ErrorCode::kIo, message) {}
};

}  // namespace sandbox
