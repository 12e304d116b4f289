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
// Thread-safety: a Saga is used by one thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fsnap/error.hpp"

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

// The results of the steps that completed so far.
class SagaContext {
 public:
  // The result of step. fsnap::Error kInvalidArgument if it has not completed.
  template <typename T>
  const T& result(StepHandle<T> step) const {
    static_assert(!std::is_void_v<T>, "a void step has no result");
    return *static_cast<const T*>(completed(step.index()));
  }

 private:
  friend class Saga;
  const void* completed(std::size_t index) const;

  std::vector<std::string> names_;
  std::vector<std::shared_ptr<void>> results_;
  std::vector<bool> done_;
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

// A saga that completed: its steps in order, with how long each took.
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
  StepHandle<T> step(std::string name, Action action, Compensation compensation = nullptr) {
    Step s;
    s.name = std::move(name);
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

  // Runs the steps. SagaFailed after compensating when one fails; fsnap::Error
  // kInvalidArgument if the saga ran before.
  SagaRecord run();

 private:
  struct Step {
    std::string name;
    std::function<std::shared_ptr<void>(SagaContext&)> action;
    std::function<void(const void*)> compensate;
  };
  void notify(SagaEvent::Kind kind, const std::string& step, const std::string& error = {}) const;

  std::string name_;
  std::function<void(const SagaEvent&)> observer_;
  std::vector<Step> steps_;
  bool ran_ = false;
};

}  // namespace statekit
