#include "policy/execution_context.hpp"

#include <sstream>
#include <stdexcept>

namespace policy {

namespace {

// The event of a pipeline's halt: its hook's own, else one of the pipeline saying why.
SafetyEvent halt_event(const CheckVerdict& v, StopReason reason, const std::string& why,
                       TimePoint at, const std::string& node_id, const std::string& key) {
  if (v.event) return *v.event;
  return SafetyEvent{reason, Decision::kHalt, "ShieldPipeline", why, 0, 0, at, node_id, key};
}

std::string money(double usd) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(usd < 1 ? 4 : 2);
  out << "$" << usd;
  return out.str();
}

double milliseconds(std::chrono::system_clock::duration d) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

}  // namespace

std::string_view to_string(NodeStatus status) {
  switch (status) {
    case NodeStatus::kInFlight:
      return "in_flight";
    case NodeStatus::kOk:
      return "ok";
    case NodeStatus::kHalted:
      return "halted";
    case NodeStatus::kAborted:
      return "aborted";
    case NodeStatus::kTimeout:
      return "timeout";
    case NodeStatus::kError:
      return "error";
  }
  return "unknown";
}

ExecutionContext::ExecutionContext(ExecutionConfig config, RunMetadata metadata,
                                   std::shared_ptr<ShieldPipeline> pipeline, Now now,
                                   std::optional<ContainmentState> from)
    : config_(config),
      metadata_(std::move(metadata)),
      pipeline_(std::move(pipeline)),
      now_(std::move(now)) {
  if (config_.max_cost_usd && !(*config_.max_cost_usd > 0)) {
    throw std::invalid_argument("a cost ceiling must be more than $0");
  }
  if (config_.max_steps && *config_.max_steps == 0) {
    throw std::invalid_argument("a step limit must be at least 1");
  }
  if (config_.max_retries_total && *config_.max_retries_total == 0) {
    throw std::invalid_argument("a retry budget must be at least 1");
  }
  if (config_.timeout.count() < 0) throw std::invalid_argument("a timeout cannot be negative");
  if (from) {
    state_ = std::move(*from);
  } else {
    state_.started_at = now_of(now_);
  }
  if (config_.circuit_breaker) {
    circuits_.emplace(*config_.circuit_breaker, now_);
    circuits_->restore(state_.circuits);
  }
  if (config_.budget_window) {
    window_ = std::make_shared<BudgetWindowHook>(*config_.budget_window, now_);
    window_->restore(state_.window);
  }
  token_ = CancellationToken(now_, deadline());
  if (state_.aborted) token_.cancel(state_.abort_reason);
}

std::optional<TimePoint> ExecutionContext::deadline() const {
  if (config_.timeout.count() == 0) return std::nullopt;
  return saturating_add(state_.started_at, config_.timeout);
}

NodeRecord* ExecutionContext::node(const std::string& node_id) {
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
    if (it->node_id == node_id) return &*it;
  }
  return nullptr;
}

CallContext ExecutionContext::call_context(NodeKind kind, const WrapOptions& options,
                                           const std::string& node_id,
                                           std::size_t steps_before) const {
  return CallContext{node_id,
                     kind,
                     options.operation_name,
                     options.key,
                     options.cost_estimate_hint,
                     steps_before,
                     state_.cost_usd,
                     now_of(now_),
                     metadata_};
}

SafetyEvent ExecutionContext::timeout_event(TimePoint now) const {
  std::ostringstream reason;
  reason << "the run's time is up (timeout "
         << static_cast<double>(config_.timeout.count()) / 1000.0 << " s)";
  return SafetyEvent{StopReason::kTimeout,
                     Decision::kHalt,
                     "ExecutionContext",
                     reason.str(),
                     static_cast<double>(config_.timeout.count()),
                     milliseconds(now - state_.started_at),
                     now,
                     "",
                     ""};
}

std::optional<SafetyEvent> ExecutionContext::check_deadline() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<TimePoint> until = deadline();
  TimePoint now = now_of(now_);
  if (!until || now < *until) return std::nullopt;
  if (state_.halted_by == StopReason::kTimeout) {
    for (auto it = state_.events.rbegin(); it != state_.events.rend(); ++it) {
      if (it->type == StopReason::kTimeout) return *it;
    }
  }
  SafetyEvent event = timeout_event(now);
  stop(event);
  return event;
}

std::optional<SafetyEvent> ExecutionContext::run_limit(const WrapOptions& options,
                                                       std::size_t steps_before,
                                                       const std::string& node_id) const {
  TimePoint now = now_of(now_);
  auto event = [&](StopReason type, std::string reason, double limit, double value) {
    return SafetyEvent{type, Decision::kHalt, "ExecutionContext", std::move(reason), limit, value,
                       now,  node_id,         options.key};
  };
  if (state_.aborted) {
    return event(StopReason::kAborted, "the run was aborted: " + state_.abort_reason, 0, 0);
  }
  if (state_.halted_by) {
    // Stopped once, stopped for good (whatever changed since: an estimate, the limits).
    for (auto it = state_.events.rbegin(); it != state_.events.rend(); ++it) {
      if (it->type == *state_.halted_by && it->decision == Decision::kHalt) {
        SafetyEvent again = *it;
        again.at = now;
        again.node_id = node_id;
        again.key = options.key;
        return again;
      }
    }
    return event(*state_.halted_by,
                 "the run was stopped (" + std::string(halt_reason_name(*state_.halted_by)) + ")",
                 0, 0);
  }
  if (std::optional<TimePoint> until = deadline(); until && now >= *until) {
    SafetyEvent timeout = timeout_event(now);
    timeout.node_id = node_id;
    timeout.key = options.key;
    return timeout;
  }
  if (config_.max_cost_usd) {
    double ceiling = *config_.max_cost_usd;
    if (state_.cost_usd >= ceiling) {
      return event(
          StopReason::kBudgetExceeded,
          "the cost ceiling is reached: " + money(state_.cost_usd) + " spent of " + money(ceiling),
          ceiling, state_.cost_usd);
    }
    if (options.cost_estimate_hint > 0 && state_.cost_usd + options.cost_estimate_hint > ceiling) {
      return event(StopReason::kBudgetExceeded,
                   "this call (about " + money(options.cost_estimate_hint) +
                       ") would cross the cost ceiling: " + money(state_.cost_usd) + " spent of " +
                       money(ceiling),
                   ceiling, state_.cost_usd + options.cost_estimate_hint);
    }
  }
  if (config_.max_steps && steps_before >= *config_.max_steps) {
    return event(StopReason::kStepLimitExceeded,
                 "the step limit is reached: " + std::to_string(*config_.max_steps) +
                     (*config_.max_steps == 1 ? " call" : " calls"),
                 static_cast<double>(*config_.max_steps), static_cast<double>(steps_before));
  }
  if (config_.max_steps && state_.refused_in_a_row >= *config_.max_steps) {
    return event(StopReason::kStepLimitExceeded,
                 "the last " + std::to_string(state_.refused_in_a_row) +
                     " calls were all refused, as many as the step limit allows steps (" +
                     std::to_string(*config_.max_steps) + ")",
                 static_cast<double>(*config_.max_steps),
                 static_cast<double>(state_.refused_in_a_row));
  }
  if (config_.max_retries_total && state_.retries_used >= *config_.max_retries_total) {
    return event(StopReason::kRetryBudgetExceeded,
                 "the retry budget is used up: " + std::to_string(state_.retries_used) +
                     " failed calls of " + std::to_string(*config_.max_retries_total),
                 static_cast<double>(*config_.max_retries_total),
                 static_cast<double>(state_.retries_used));
  }
  return std::nullopt;
}

void ExecutionContext::stop(const SafetyEvent& event) {
  if (!state_.halted_by) {
    stop_snapshot_ = snapshot_locked();
    state_.halted_by = event.type;
  }
  state_.events.push_back(event);
}

Admission ExecutionContext::refuse(NodeRecord record, Admission out, SafetyEvent event,
                                   NodeStatus status, bool stops_run) {
  record.status = status;
  record.end = record.start;
  nodes_.push_back(std::move(record));
  ++state_.refused_count;
  ++state_.refused_in_a_row;
  if (stops_run) {
    stop(event);
  } else {
    state_.events.push_back(event);
  }
  out.decision = Decision::kHalt;
  out.event = std::move(event);
  out.token = token_;
  return out;
}

std::optional<ExecutionContext::Refusal> ExecutionContext::pipeline_check(
    const CallContext& call, const WrapOptions& options, Admission& out) {
  CheckVerdict v = pipeline_->before_call(call);
  for (SafetyEvent& e : pipeline_->take_events()) {
    if (v.decision != Decision::kHalt) state_.events.push_back(std::move(e));
  }
  if (v.decision == Decision::kHalt) {
    SafetyEvent event =
        halt_event(v, StopReason::kProviderRateLimit, "refused by the shield pipeline", call.at,
                   out.node_id, options.key);
    // A hook that enforces a run-wide limit (a budget shared with other runs) stops
    // the run as the context's own limits do.
    bool run = stops_run(event.type);
    return Refusal{std::move(event), run};
  }
  if (v.decision == Decision::kDegrade) {
    out.decision = Decision::kDegrade;
    if (v.event) out.event = v.event;
  }
  return std::nullopt;
}

std::optional<SafetyEvent> ExecutionContext::open_circuit(const CallContext& call,
                                                          const WrapOptions& options,
                                                          const std::string& node_id) {
  if (!circuits_ || options.key.empty()) return std::nullopt;
  CircuitAdmission circuit = circuits_->allow(options.key);
  if (circuit.allowed) return std::nullopt;
  std::ostringstream reason;
  reason << options.key << " failed "
         << (circuit.failures == 1 ? std::string("once")
                                   : std::to_string(circuit.failures) + " times in a row")
         << ", so its calls are refused for now";
  if (circuit.retry_after.count() > 0) {
    reason << " (for another " << (circuit.retry_after.count() + 999) / 1000 << " s)";
  } else {
    reason << " (a trial call is under way)";
  }
  return SafetyEvent{StopReason::kCircuitOpen,
                     Decision::kHalt,
                     "CircuitBreaker",
                     reason.str(),
                     static_cast<double>(circuits_->config().failure_threshold),
                     static_cast<double>(circuit.failures),
                     call.at,
                     node_id,
                     options.key};
}

std::optional<ExecutionContext::Refusal> ExecutionContext::repeated_call(
    const WrapOptions& options, const std::string& node_id) {
  if (!config_.repeat.enabled() || options.input_fingerprint.empty()) return std::nullopt;
  RepeatCheck check =
      check_repeat(config_.repeat, state_.repeat, options.key, options.input_fingerprint);
  state_.repeat = check.streak;
  if (check.verdict == RepeatVerdict::kAllow) return std::nullopt;
  const std::string& tool = options.key.empty() ? std::string("this") : options.key;
  std::string times = std::to_string(check.streak.count) + " times in a row";
  bool halt = check.verdict == RepeatVerdict::kHalt;
  SafetyEvent event{
      halt ? StopReason::kLoop : StopReason::kRepeatedCall,
      Decision::kHalt,
      "RepeatGuard",
      halt ? "the same " + tool + " call with the same input was asked " + times +
                 ": the agent is looping"
           : "the same " + tool + " call with the same input was asked " + times +
                 ", so it is refused: change the input or do something else",
      static_cast<double>(halt ? config_.repeat.halt_threshold : config_.repeat.deny_threshold),
      static_cast<double>(check.streak.count),
      now_of(now_),
      node_id,
      options.key};
  return Refusal{std::move(event), halt};
}

Admission ExecutionContext::admit(NodeKind kind, const WrapOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  Admission out;
  out.node_id = "n" + std::to_string(state_.next_node++);
  std::size_t steps_before = state_.step_count;  // a step once admitted
  NodeRecord record;
  record.node_id = out.node_id;
  record.parent_id = options.parent_node_id;
  record.kind = kind;
  record.operation_name = options.operation_name;
  record.key = options.key;
  record.start = now_of(now_);

  if (std::optional<SafetyEvent> limit = run_limit(options, steps_before, out.node_id)) {
    NodeStatus status = limit->type == StopReason::kAborted   ? NodeStatus::kAborted
                        : limit->type == StopReason::kTimeout ? NodeStatus::kTimeout
                                                              : NodeStatus::kHalted;
    return refuse(std::move(record), std::move(out), std::move(*limit), status, true);
  }
  if (std::optional<Refusal> repeated = repeated_call(options, out.node_id)) {
    return refuse(std::move(record), std::move(out), std::move(repeated->event),
                  NodeStatus::kHalted, repeated->stops_run);
  }
  CallContext call = call_context(kind, options, out.node_id, steps_before);
  // The per-call checks: the budget window, the pipeline's hooks, the circuit. The
  // window counts the call only once all have let it through.
  std::optional<SafetyEvent> window_degraded;
  if (window_) {
    CheckVerdict v = window_->check(call);
    if (v.decision == Decision::kHalt) {
      return refuse(std::move(record), std::move(out), *v.event, NodeStatus::kHalted, false);
    }
    if (v.decision == Decision::kDegrade && v.event) {
      window_degraded = v.event;
      out.decision = Decision::kDegrade;
      out.event = v.event;
    }
  }
  if (pipeline_) {
    if (std::optional<Refusal> refusal = pipeline_check(call, options, out)) {
      return refuse(std::move(record), std::move(out), std::move(refusal->event),
                    NodeStatus::kHalted, refusal->stops_run);
    }
  }
  if (std::optional<SafetyEvent> open = open_circuit(call, options, out.node_id)) {
    return refuse(std::move(record), std::move(out), std::move(*open), NodeStatus::kHalted, false);
  }
  if (window_) {
    window_->record_call(call);
    if (window_degraded) state_.events.push_back(*window_degraded);
  }
  nodes_.push_back(record);
  ++state_.step_count;
  state_.refused_in_a_row = 0;
  std::optional<TimePoint> call_deadline;
  if (options.timeout) call_deadline = saturating_add(record.start, *options.timeout);
  out.token = token_.child(call_deadline);
  return out;
}

Decision ExecutionContext::complete(const std::string& node_id, const CallResult& result) {
  std::lock_guard<std::mutex> lock(mutex_);
  NodeRecord* record = node(node_id);
  // A node of another call (ids of a context that came before) is not this one's.
  if (record != nullptr && !result.key.empty() && record->key != result.key) record = nullptr;
  std::string key = record != nullptr ? record->key : result.key;
  WrapOptions options;
  options.key = key;
  CallContext call = call_context(record != nullptr ? record->kind : NodeKind::kTool, options,
                                  node_id, state_.step_count);
  state_.cost_usd += result.cost_usd;
  bool ok = result.success && !result.timed_out;
  TimePoint now = now_of(now_);
  std::optional<TimePoint> until = deadline();
  // Cut short by the run's own stop: the call is no failure of its tool.
  bool out_of_time = !ok && until && now >= *until;
  bool cut_short = out_of_time || (!ok && state_.aborted);
  if (record != nullptr) {
    record->end = now;
    record->cost_usd += result.cost_usd;
    record->status = ok                                ? NodeStatus::kOk
                     : out_of_time || result.timed_out ? NodeStatus::kTimeout
                     : state_.aborted                  ? NodeStatus::kAborted
                                                       : NodeStatus::kError;
    if (!ok && !cut_short) ++record->retries_used;
  }
  if (window_ && result.cost_usd > 0) window_->on_charge(call, result.cost_usd);
  if (pipeline_ && result.cost_usd > 0) pipeline_->on_charge(call, result.cost_usd);
  if (ok) {
    if (circuits_ && !key.empty()) circuits_->record_success(key);
    return Decision::kAllow;
  }
  if (cut_short) {
    if (out_of_time && !state_.halted_by) {
      SafetyEvent timeout = timeout_event(now);
      timeout.node_id = node_id;
      timeout.key = key;
      stop(timeout);
    }
    return Decision::kHalt;
  }
  ++state_.retries_used;
  if (circuits_ && !key.empty()) circuits_->record_failure(key);
  if (pipeline_) {
    if (std::optional<SafetyEvent> halt = failure_halt(call, result.error)) {
      if (stops_run(halt->type) && !state_.halted_by) {
        stop(*halt);
      } else {
        state_.events.push_back(std::move(*halt));
      }
      return Decision::kHalt;
    }
  }
  if (config_.max_retries_total && state_.retries_used >= *config_.max_retries_total &&
      !state_.halted_by) {
    // The failure's own text stays in its record: it may be long, and the event is told
    // to the agent and to the person.
    stop(SafetyEvent{StopReason::kProviderError, Decision::kHalt, "ExecutionContext",
                     "failures used up the retry budget: " + std::to_string(state_.retries_used) +
                         " failed calls of " + std::to_string(*config_.max_retries_total) +
                         (key.empty() ? std::string() : " (the last: " + key + ")"),
                     static_cast<double>(*config_.max_retries_total),
                     static_cast<double>(state_.retries_used), now, node_id, key});
    return Decision::kHalt;
  }
  return Decision::kRetry;
}

std::optional<SafetyEvent> ExecutionContext::failure_halt(const CallContext& call,
                                                          const std::string& error) {
  CheckVerdict v = pipeline_->on_error(call, error);
  if (v.decision != Decision::kHalt) return std::nullopt;
  SafetyEvent event =
      halt_event(v, StopReason::kProviderError, "a check stopped the run after a failed call",
                 call.at, call.node_id, call.key);
  if (event.node_id.empty()) event.node_id = call.node_id;
  if (event.key.empty()) event.key = call.key;
  return event;
}

std::string ExecutionContext::count_unadmitted(NodeKind kind, const WrapOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  NodeRecord record;
  record.node_id = "n" + std::to_string(state_.next_node++);
  record.parent_id = options.parent_node_id;
  record.kind = kind;
  record.operation_name = options.operation_name;
  record.key = options.key;
  record.start = now_of(now_);
  if (window_) window_->record_call(call_context(kind, options, record.node_id, state_.step_count));
  nodes_.push_back(record);
  ++state_.step_count;
  state_.refused_in_a_row = 0;
  return record.node_id;
}

void ExecutionContext::withdraw(const std::string& node_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (NodeRecord* record = node(node_id); record != nullptr) {
    record->status = NodeStatus::kHalted;
    record->end = now_of(now_);
  }
  if (state_.step_count > 0) --state_.step_count;
}

void ExecutionContext::charge(double cost_usd, const std::string& node_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_.cost_usd += cost_usd;
  if (NodeRecord* record = node(node_id)) record->cost_usd += cost_usd;
  CallContext call = call_context(NodeKind::kLlm, {}, node_id, state_.step_count);
  if (window_) window_->on_charge(call, cost_usd);
  if (pipeline_) pipeline_->on_charge(call, cost_usd);
}

Decision ExecutionContext::wrap(NodeKind kind,
                                const std::function<double(const CancellationToken&)>& fn,
                                const WrapOptions& options) {
  std::size_t tries = 1 + options.retry_policy_override.value_or(0);
  for (std::size_t attempt = 0; attempt < tries; ++attempt) {
    Admission admission = admit(kind, options);
    if (admission.decision == Decision::kHalt) return Decision::kHalt;
    CallResult result;
    result.key = options.key;
    try {
      result.cost_usd = fn(admission.token);
    } catch (const std::exception& e) {
      result.success = false;
      result.error = e.what();
    } catch (...) {
      result.success = false;
      result.error = "unknown exception";
    }
    if (result.success && admission.token.cancelled()) {
      result.timed_out = true;
      result.error = "the call ran past its deadline";
    }
    Decision after = complete(admission.node_id, result);
    if (result.success && !result.timed_out) return admission.decision;
    // The run's time is up, it was aborted, or a check stopped it after this failure.
    if (after == Decision::kHalt || token_.cancelled()) return Decision::kHalt;
  }
  return Decision::kRetry;
}

Decision ExecutionContext::wrap_llm_call(const std::function<double(const CancellationToken&)>& fn,
                                         const WrapOptions& options) {
  return wrap(NodeKind::kLlm, fn, options);
}

Decision ExecutionContext::wrap_tool_call(const std::function<double(const CancellationToken&)>& fn,
                                          const WrapOptions& options) {
  return wrap(NodeKind::kTool, fn, options);
}

void ExecutionContext::record_event(SafetyEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_.events.push_back(std::move(event));
}

void ExecutionContext::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!state_.aborted) {
      SafetyEvent event{StopReason::kAborted,
                        Decision::kHalt,
                        "ExecutionContext",
                        "the run was aborted: " + reason,
                        0,
                        0,
                        now_of(now_),
                        "",
                        ""};
      stop(event);
      state_.aborted = true;
      state_.abort_reason = reason;
    }
  }
  token_.cancel(reason);
}

ContextSnapshot ExecutionContext::snapshot_locked() const {
  ContextSnapshot s;
  s.run_id = metadata_.run_id;
  s.request_id = metadata_.request_id;
  s.step_count = state_.step_count;
  s.refused_count = state_.refused_count;
  s.cost_usd = state_.cost_usd;
  s.retries_used = state_.retries_used;
  s.aborted = state_.aborted;
  s.abort_reason = state_.abort_reason;
  s.halted_by = state_.halted_by;
  s.elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(now_of(now_) - state_.started_at);
  s.nodes = nodes_;
  s.events = state_.events;
  return s;
}

ContextSnapshot ExecutionContext::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return snapshot_locked();
}

std::optional<ContextSnapshot> ExecutionContext::stop_snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stop_snapshot_;
}

ContainmentState ExecutionContext::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ContainmentState out = state_;
  if (circuits_) out.circuits = circuits_->statuses();
  if (window_) out.window = window_->entries();
  return out;
}

}  // namespace policy
