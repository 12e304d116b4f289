// SagaJournal: a saga's record as it goes (statekit/saga.hpp), for crash recovery. A
// saga given a sink (Saga::persist_to) hands it the whole journal after every change:
// a step started, a step done with its encoded result, a compensation run, the saga
// completed or undone. A process that finds a journal whose saga neither completed nor
// was undone builds the same saga again and either resumes it (Saga::resume: from the
// first step not done) or undoes it (Saga::compensate: the done steps, newest first).
//
// SagaFile keeps a journal in one file, replaced atomically at each write, so a crash
// leaves the journal before or after a change, never half of one.
//
//   SagaFile file(run_dir / "start.saga");
//   saga.persist_to(file.sink());
//   ...  // in the next process:
//   if (std::optional<SagaJournal> j = file.load(); j && j->unfinished()) saga.compensate(*j);
//
// Thread-safety: values; a SagaFile's methods may be called from any thread, but two
// sagas must not share a file.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace statekit {

// Where a saga stands, as its journal records it.
struct SagaJournal {
  enum class Status { kRunning, kCompleted, kCompensating, kCompensated, kFailed };
  enum class StepState { kPending, kStarted, kDone, kCompensated, kCompensationFailed };
  // One step: its state, its result encoded when done (a void step's is ""), and why
  // its compensation failed.
  struct Step {
    std::string name;
    StepState state = StepState::kPending;
    std::string result;
    std::string error;
  };

  std::string saga;
  Status status = Status::kRunning;
  std::vector<Step> steps;
  std::string failed_step;  // the step whose failure started the compensation
  std::string cause;        // and why it failed

  // Neither completed nor wholly undone: a crashed saga, or one undone only in part
  // (kFailed: a compensation failed), that Saga::resume or Saga::compensate may go on.
  bool unfinished() const { return status != Status::kCompleted && status != Status::kCompensated; }
  // The index of the first step not done (steps.size() when all are).
  std::size_t first_not_done() const;

  // Text of a few lines; parse reads it back. fsnap::Error kCorrupt for text that is
  // not a journal.
  std::string encode() const;
  static SagaJournal parse(std::string_view text);
};

// Takes each version of a saga's journal as the saga goes.
using SagaSink = std::function<void(const SagaJournal&)>;

// A saga journal kept in one file.
class SagaFile {
 public:
  explicit SagaFile(boost::filesystem::path file) : file_(std::move(file)) {}

  // Writes each journal over the file, atomically. fsnap::Error kIo if it cannot: the
  // saga then stops where it is (statekit/saga.hpp), its file as last written.
  SagaSink sink() const;
  // The journal in the file, or nullopt if there is none. fsnap::Error kCorrupt for a
  // file that is not one.
  std::optional<SagaJournal> load() const;
  // Removes the file (once the saga it records needs nothing more).
  void remove() const;

 private:
  boost::filesystem::path file_;
};

}  // namespace statekit
