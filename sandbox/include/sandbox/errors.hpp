// Errors of the transaction runtime (EXECUTION_STATE.md, "Error Handling").
#pragma once

#include <stdexcept>
#include <string>

namespace sandbox {

// Base of every error about snapshots and restores of execution state.
class ExecutionStateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A snapshot that does not fit the state it is applied to (a slice type this session
// does not know, a snapshot of another kind of resource). Nothing was changed.
class SnapshotMismatchError : public ExecutionStateError {
 public:
  using ExecutionStateError::ExecutionStateError;
};

// A restore that failed part-way; the state is as it was before the restore.
class RestoreFailedError : public ExecutionStateError {
 public:
  using ExecutionStateError::ExecutionStateError;
};

}  // namespace sandbox
