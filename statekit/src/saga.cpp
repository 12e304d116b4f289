#include "statekit/saga.hpp"

#include <exception>

namespace statekit {

namespace {

std::string failure_message(const std::string& saga, const std::string& step,
                            const std::string& cause,
                            const std::vector<CompensationFailure>& failures) {
  std::string message = saga + ": step '" + step + "' failed: " + cause;
  for (const CompensationFailure& f : failures) {
    message += "; and could not undo '" + f.step + "': " + f.error;
  }
  return message;
}

}  // namespace

SagaFailed::SagaFailed(const std::string& saga, std::string failed_step, std::string cause,
                       fsnap::ErrorCode cause_code, std::vector<std::string> compensated,
                       std::vector<CompensationFailure> compensation_failures)
    : fsnap::Error(compensation_failures.empty() ? cause_code : fsnap::ErrorCode::kCorrupt,
                   failure_message(saga, failed_step, cause, compensation_failures)),
      failed_step_(std::move(failed_step)),
      cause_(std::move(cause)),
      cause_code_(cause_code),
      compensated_(std::move(compensated)),
      compensation_failures_(std::move(compensation_failures)) {}

const void* SagaContext::completed(std::size_t index) const {
  if (index >= done_.size() || !done_[index]) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                       "the result of step '" + (index < names_.size() ? names_[index] : "?") +
                           "' is read before the step completed");
  }
  return results_[index].get();
}

void Saga::notify(SagaEvent::Kind kind, const std::string& step, const std::string& error) const {
  if (observer_) observer_(SagaEvent{kind, step, error});
}

SagaRecord Saga::run() {
  if (ran_)
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument, "saga " + name_ + " has run already");
  ran_ = true;
  SagaContext ctx;
  for (const Step& s : steps_) ctx.names_.push_back(s.name);
  ctx.results_.resize(steps_.size());
  ctx.done_.assign(steps_.size(), false);
  SagaRecord record;
  record.saga = name_;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    notify(SagaEvent::Kind::kStepStarted, step.name);
    auto start = std::chrono::steady_clock::now();
    std::string cause;
    fsnap::ErrorCode code = fsnap::ErrorCode::kIo;
    try {
      ctx.results_[i] = step.action(ctx);
      ctx.done_[i] = true;
    } catch (const fsnap::Error& e) {
      cause = e.what();
      code = e.code();
    } catch (const std::exception& e) {
      cause = e.what();
    } catch (...) {
      cause = "an exception that is not a std::exception";
    }
    if (ctx.done_[i]) {
      record.steps.push_back(step.name);
      record.durations.push_back(std::chrono::steady_clock::now() - start);
      notify(SagaEvent::Kind::kStepCompleted, step.name);
      continue;
    }
    notify(SagaEvent::Kind::kStepFailed, step.name, cause);
    std::vector<std::string> compensated;
    std::vector<CompensationFailure> failures;
    for (std::size_t j = i; j-- > 0;) {
      const Step& done = steps_[j];
      if (!done.compensate) continue;
      notify(SagaEvent::Kind::kCompensationStarted, done.name);
      try {
        done.compensate(ctx.results_[j].get());
        compensated.push_back(done.name);
        notify(SagaEvent::Kind::kCompensationCompleted, done.name);
      } catch (const std::exception& e) {
        failures.push_back({done.name, e.what()});
        notify(SagaEvent::Kind::kCompensationFailed, done.name, e.what());
      } catch (...) {
        failures.push_back({done.name, "an exception that is not a std::exception"});
        notify(SagaEvent::Kind::kCompensationFailed, done.name, failures.back().error);
      }
    }
    throw SagaFailed(name_, step.name, cause, code, std::move(compensated), std::move(failures));
  }
  return record;
}

}  // namespace statekit
