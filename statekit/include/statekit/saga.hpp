// Sagas (docs/conformance/STATE_MANAGEMENT.md): an operation of several steps, each with
// the compensation that undoes it, that either completes or leaves nothing half-done.
// The steps run in order, each step's result kept for later steps and for its
// compensation. When a step fails, the compensations of the steps that completed run in
// reverse order, each given its step's result; a compensation that fails is recorded and
// the others still run. Then run() throws SagaFailed, naming the step, its cause and
// what could not be undone.
//
// The failing step's own compensation does not run: it did not complete, so a step that
// can fail part-way must leave things as they were before it throws (restoring a
// workspace does: it puts its files back).
//
//   Saga saga("restore");
//   StepHandle<Undo> files = saga.step<Undo>(
//       "files", [&](SagaContext&) { return restore_files(); },
//       [&](const Undo& undo) { put_back(undo); });
//   saga.step<void>("session", [&](SagaContext& ctx) { restore_session(ctx.result(files)); });
//   SagaRecord done = saga.run();  // or SagaFailed, after compensating
//
// A step may have a deadline (StepOptions::timeout): the step's SagaContext::stop()
// token asks it to stop when the deadline passes, and a step that has not returned by
// then failed. A step that throws after its deadline did not complete; one that returns
// after it did its work late, so it is compensated with the steps before it.
//
// A saga given a sink (persist_to; statekit/saga_journal.hpp) journals its progress as
// it goes: each step started and done, with its result encoded by the step's
// StepOptions::encode (a void step or a std::string result needs none), and each
// compensation. After a crash, the same saga built again in a new process resumes from
// the journal (resume: the first step not done runs next, the done ones' results
// decoded for the steps after them) or undoes what it records (compensate). A step
// started and not done when the process died is run again by resume, so a step must be
// safe to repeat after a crash part-way, as compensations must be.
//
// A sink that throws stops the saga where it is, as a crash would, without compensating:
// the exception leaves run (or resume), and the journal written before says what to undo.
//
//   saga.persist_to(SagaFile(dir / "deploy.saga").sink());
//   saga.step<std::string>("vm", create_vm, destroy_vm, {.timeout = std::chrono::seconds(30)});
//
// Thread-safety: a Saga is used by one thread (its steps may watch SagaContext::stop()
// from others).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fsnap/error.hpp"
#include "statekit/saga_journal.hpp"

namespace statekit {

// A step's place in its saga, typed by its result.
template <typename T>
class StepHandle {
 public:
  std::size_t index() const { return index_; }

 private:
  friend class Saga;
  explicit StepHandle(std::size_t index) : index_(index) {}
  std::size_t index_;
};

// How a step of result T runs and is journaled.
template <typename T>
struct StepOptions {
  std::chrono::milliseconds timeout{0};  // 0: none
  // The result as text for the journal, and back (needed to resume or compensate from
  // a journal; a std::string is kept as it is).
  std::function<std::string(const T&)> encode;
  std::function<T(const std::string&)> decode;
};
template <>
struct StepOptions<void> {
  std::chrono::milliseconds timeout{0};
};

// The results of the steps that completed so far, and the running step's stop token.
class SagaContext {
 public:
  // The result of step. fsnap::Error kInvalidArgument if it has not completed.
  template <typename T>
  const T& result(StepHandle<T> step) const {
    static_assert(!std::is_void_v<T>, "a void step has no result");
    return *static_cast<const T*>(completed(step.index()));
  }
  // Asked to stop when the running step's deadline passes (never, without one).
  const std::stop_token& stop() const { return stop_; }

 private:
  friend class Saga;
  const void* completed(std::size_t index) const;

  std::vector<std::string> names_;
  std::vector<std::shared_ptr<void>> results_;
  std::vector<bool> done_;
  std::stop_token stop_;
};

// What happened in a saga, for observers.
struct SagaEvent {
  enum class Kind {
    kStepStarted,
    kStepCompleted,
    kStepFailed,
    kCompensationStarted,
    kCompensationCompleted,
    kCompensationFailed
  };
  Kind kind;
  std::string step;
  std::string error;  // k*Failed: why
};

// A saga that completed: the steps this call ran (resume: those the journal did not
// record as done), in order, with how long each took.
struct SagaRecord {
  std::string saga;
  std::vector<std::string> steps;
  std::vector<std::chrono::nanoseconds> durations;
};

// A compensation that failed.
struct CompensationFailure {
  std::string step;
  std::string error;
};

// A saga whose step failed, after its compensations ran. The code is the cause's when
// every compensation succeeded (kIo if the cause was no fsnap::Error), and kCorrupt
// when one failed: then something may be left half-done, which the message says.
class SagaFailed : public fsnap::Error {
 public:
  SagaFailed(const std::string& saga, std::string failed_step, std::string cause,
             fsnap::ErrorCode cause_code, std::vector<std::string> compensated,
             std::vector<CompensationFailure> compensation_failures);
  const std::string& failed_step() const { return failed_step_; }
  const std::string& cause() const { return cause_; }
  fsnap::ErrorCode cause_code() const { return cause_code_; }
  // The steps undone, in the order their compensations ran.
  const std::vector<std::string>& compensated() const { return compensated_; }
  const std::vector<CompensationFailure>& compensation_failures() const {
    return compensation_failures_;
  }

 private:
  std::string failed_step_;
  std::string cause_;
  fsnap::ErrorCode cause_code_;
  std::vector<std::string> compensated_;
  std::vector<CompensationFailure> compensation_failures_;
};

// Steps with compensations, run once.
class Saga {
 public:
  explicit Saga(std::string name, std::function<void(const SagaEvent&)> observer = {})
      : name_(std::move(name)), observer_(std::move(observer)) {}

  // A step: action(SagaContext&) returns its T (nothing for void); compensation, if
  // given, undoes it: compensation(const T&), or compensation() for a void step.
  template <typename T, typename Action, typename Compensation = std::nullptr_t>
  StepHandle<T> step(std::string name, Action action, Compensation compensation = nullptr,
                     StepOptions<T> options = {}) {
    Step s;
    s.name = std::move(name);
    s.timeout = options.timeout;
    set_codec<T>(s, std::move(options));
    s.action = [action = std::move(action)](SagaContext& ctx) mutable -> std::shared_ptr<void> {
      if constexpr (std::is_void_v<T>) {
        action(ctx);
        return nullptr;
      } else {
        return std::make_shared<T>(action(ctx));
      }
    };
    if constexpr (!std::is_same_v<Compensation, std::nullptr_t>) {
      s.compensate = [compensation = std::move(compensation)](const void* result) mutable {
        if constexpr (std::is_void_v<T>) {
          compensation();
        } else {
          compensation(*static_cast<const T*>(result));
        }
      };
    }
    steps_.push_back(std::move(s));
    return StepHandle<T>(steps_.size() - 1);
  }

  // Journals the saga's progress to sink from now on (before run, resume or compensate).
  void persist_to(SagaSink sink) { sink_ = std::move(sink); }
  // The clock step deadlines are measured with (std::chrono::steady_clock by default): a
  // step that took longer on it than its timeout failed.
  void set_clock(std::function<std::chrono::steady_clock::time_point()> clock) {
    clock_ = std::move(clock);
  }

  // Runs the steps. SagaFailed after compensating when one fails; fsnap::Error
  // kInvalidArgument if the saga ran before.
  SagaRecord run();
  // Runs the steps journal does not record as done, from the first of them, the done
  // steps' results decoded from it (and compensated like the others if a later step
  // fails). fsnap::Error kInvalidArgument, nothing run, if journal is of another saga or
  // other steps, or records a done step whose result this saga cannot decode, or the
  // saga ran before.
  SagaRecord resume(const SagaJournal& journal);
  // Undoes what journal records as done, newest first, each compensation given its
  // step's decoded result (a step recorded as compensated already is skipped). Returns
  // the steps undone; throws SagaFailed (failed_step and cause as the journal has them,
  // "" if none) when a compensation failed. The same errors as resume.
  std::vector<std::string> compensate(const SagaJournal& journal);

 private:
  struct Step {
    std::string name;
    std::function<std::shared_ptr<void>(SagaContext&)> action;
    std::function<void(const void*)> compensate;
    std::chrono::milliseconds timeout{0};
    std::function<std::string(const void*)> encode;                   // null: not journaled
    std::function<std::shared_ptr<void>(const std::string&)> decode;  // null: cannot read
  };
  template <typename T>
  static void set_codec(Step& s, StepOptions<T> options) {
    if constexpr (std::is_void_v<T>) {
      s.encode = [](const void*) { return std::string(); };
      s.decode = [](const std::string&) { return std::shared_ptr<void>(); };
    } else {
      if constexpr (std::is_same_v<T, std::string>) {
        if (!options.encode) options.encode = [](const std::string& v) { return v; };
        if (!options.decode) options.decode = [](const std::string& v) { return v; };
      }
      if (options.encode) {
        s.encode = [encode = std::move(options.encode)](const void* result) {
          return encode(*static_cast<const T*>(result));
        };
      }
      if (options.decode) {
        s.decode = [decode = std::move(options.decode)](const std::string& text) {
          return std::shared_ptr<void>(std::make_shared<T>(decode(text)));
        };
      }
    }
  }
  void notify(SagaEvent::Kind kind, const std::string& step, const std::string& error = {}) const;
  // Starts a run, resume or compensate: a fresh context, and the journal (journal's
  // done steps decoded into the context, when one is given).
  SagaContext begin(const SagaJournal* journal, bool resuming);
  SagaRecord run_from(SagaContext& ctx, std::size_t first);
  // The step's action under its timeout: nullopt if it completed in time, else why not
  // (its result kept in ctx if it returned late).
  std::optional<std::string> run_step(std::size_t index, SagaContext& ctx, fsnap::ErrorCode& code);
  // The compensations of the steps before end that ctx has as done, newest first.
  void compensate_done(SagaContext& ctx, std::size_t end, std::vector<std::string>& compensated,
                       std::vector<CompensationFailure>& failures);
  void set_state(std::size_t index, SagaJournal::StepState state, std::string error = {});
  void write_journal();

  std::string name_;
  std::function<void(const SagaEvent&)> observer_;
  std::vector<Step> steps_;
  bool ran_ = false;
  SagaSink sink_;
  SagaJournal journal_;
  std::function<std::chrono::steady_clock::time_point()> clock_ = [] {
    return std::chrono::steady_clock::now();
  };
};

}  // namespace statekit
