#include "statekit/saga.hpp"

#include <exception>
#include <optional>

#include "statekit/deadline.hpp"

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

void Saga::write_journal() {
  if (sink_) sink_(journal_);
}

void Saga::set_state(std::size_t index, SagaJournal::StepState state, std::string error) {
  journal_.steps[index].state = state;
  journal_.steps[index].error = std::move(error);
  write_journal();
}

SagaContext Saga::begin(const SagaJournal* from, bool resuming) {
  auto invalid = [&](const std::string& why) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument, "saga " + name_ + ": " + why);
  };
  if (ran_) invalid("it has run already");
  SagaContext ctx;
  for (const Step& s : steps_) ctx.names_.push_back(s.name);
  ctx.results_.resize(steps_.size());
  ctx.done_.assign(steps_.size(), false);
  journal_ = SagaJournal{};
  journal_.saga = name_;
  for (const Step& s : steps_) journal_.steps.push_back(SagaJournal::Step{s.name, {}, {}, {}});
  if (from != nullptr) {
    bool same = from->saga == name_ && from->steps.size() == steps_.size();
    for (std::size_t i = 0; same && i < steps_.size(); ++i)
      same = from->steps[i].name == steps_[i].name;
    if (!same) invalid("the journal is of saga " + from->saga + ", or of other steps");
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      SagaJournal::StepState state = from->steps[i].state;
      if (state != SagaJournal::StepState::kDone &&
          state != SagaJournal::StepState::kCompensationFailed) {
        continue;
      }
      const Step& step = steps_[i];
      if (step.decode) {
        ctx.results_[i] = step.decode(from->steps[i].result);
      } else if (resuming || step.compensate) {
        invalid("step '" + step.name +
                "' is done in the journal, and its result cannot be decoded (StepOptions::decode)");
      }
      ctx.done_[i] = true;
    }
    journal_ = *from;
  }
  ran_ = true;
  return ctx;
}

SagaRecord Saga::run() {
  SagaContext ctx = begin(nullptr, false);
  return run_from(ctx, 0);
}

SagaRecord Saga::resume(const SagaJournal& journal) {
  SagaContext ctx = begin(&journal, true);
  return run_from(ctx, journal.first_not_done());
}

std::vector<std::string> Saga::compensate(const SagaJournal& journal) {
  SagaContext ctx = begin(&journal, false);
  journal_.status = SagaJournal::Status::kCompensating;
  write_journal();
  std::vector<std::string> compensated;
  std::vector<CompensationFailure> failures;
  compensate_done(ctx, steps_.size(), compensated, failures);
  journal_.status =
      failures.empty() ? SagaJournal::Status::kCompensated : SagaJournal::Status::kFailed;
  write_journal();
  if (!failures.empty()) {
    throw SagaFailed(name_, journal.failed_step, journal.cause, fsnap::ErrorCode::kIo,
                     std::move(compensated), std::move(failures));
  }
  return compensated;
}

SagaRecord Saga::run_from(SagaContext& ctx, std::size_t first) {
  SagaRecord record;
  record.saga = name_;
  journal_.status = SagaJournal::Status::kRunning;
  write_journal();
  for (std::size_t i = first; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    notify(SagaEvent::Kind::kStepStarted, step.name);
    set_state(i, SagaJournal::StepState::kStarted);
    auto start = std::chrono::steady_clock::now();
    fsnap::ErrorCode code = fsnap::ErrorCode::kIo;
    std::optional<std::string> failure = run_step(i, ctx, code);
    if (ctx.done_[i]) {
      journal_.steps[i].result = step.encode ? step.encode(ctx.results_[i].get()) : "";
    }
    if (!failure) {
      record.steps.push_back(step.name);
      record.durations.push_back(std::chrono::steady_clock::now() - start);
      set_state(i, SagaJournal::StepState::kDone);
      notify(SagaEvent::Kind::kStepCompleted, step.name);
      continue;
    }
    notify(SagaEvent::Kind::kStepFailed, step.name, *failure);
    journal_.status = SagaJournal::Status::kCompensating;
    journal_.failed_step = step.name;
    journal_.cause = *failure;
    // A step that returned after its deadline did its work: it is undone with the rest.
    set_state(i, ctx.done_[i] ? SagaJournal::StepState::kDone : SagaJournal::StepState::kPending);
    std::vector<std::string> compensated;
    std::vector<CompensationFailure> failures;
    compensate_done(ctx, i + 1, compensated, failures);
    journal_.status =
        failures.empty() ? SagaJournal::Status::kCompensated : SagaJournal::Status::kFailed;
    write_journal();
    throw SagaFailed(name_, step.name, *failure, code, std::move(compensated), std::move(failures));
  }
  journal_.status = SagaJournal::Status::kCompleted;
  write_journal();
  return record;
}

std::optional<std::string> Saga::run_step(std::size_t index, SagaContext& ctx,
                                          fsnap::ErrorCode& code) {
  const Step& step = steps_[index];
  const bool timed = step.timeout.count() > 0;
  std::stop_source source;
  ctx.stop_ = timed ? source.get_token() : std::stop_token();
  std::optional<Deadline> deadline;
  if (timed) deadline.emplace(source, step.timeout);
  const auto start = clock_();
  std::optional<std::string> cause;
  try {
    ctx.results_[index] = step.action(ctx);
    ctx.done_[index] = true;
  } catch (const fsnap::Error& e) {
    cause = e.what();
    code = e.code();
  } catch (const std::exception& e) {
    cause = e.what();
  } catch (...) {
    cause = "an exception that is not a std::exception";
  }
  const bool fired = deadline && deadline->fired();
  deadline.reset();
  ctx.stop_ = std::stop_token();
  if (timed && (fired || clock_() - start > step.timeout)) {
    code = fsnap::ErrorCode::kIo;
    return "timed out after " + std::to_string(step.timeout.count()) + " ms" +
           (ctx.done_[index] ? " (it returned late)"
            : cause          ? ": " + *cause
                             : "");
  }
  return cause;
}

void Saga::compensate_done(SagaContext& ctx, std::size_t end, std::vector<std::string>& compensated,
                           std::vector<CompensationFailure>& failures) {
  for (std::size_t j = end; j-- > 0;) {
    const Step& done = steps_[j];
    if (!ctx.done_[j] || !done.compensate) continue;
    notify(SagaEvent::Kind::kCompensationStarted, done.name);
    std::optional<std::string> error;
    try {
      done.compensate(ctx.results_[j].get());
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "an exception that is not a std::exception";
    }
    if (error) {
      failures.push_back({done.name, *error});
      set_state(j, SagaJournal::StepState::kCompensationFailed, *error);
      notify(SagaEvent::Kind::kCompensationFailed, done.name, *error);
    } else {
      compensated.push_back(done.name);
      set_state(j, SagaJournal::StepState::kCompensated);
      notify(SagaEvent::Kind::kCompensationCompleted, done.name);
    }
  }
}

}  // namespace statekit
