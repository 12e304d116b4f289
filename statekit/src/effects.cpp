#include "statekit/effects.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "statekit/deadline.hpp"

namespace statekit {

namespace effects_detail {

std::string type_name(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  // The name without its namespaces: what a reader knows the effect by.
  std::size_t template_start = name.find('<');
  std::size_t colon = name.rfind("::", template_start);
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

}  // namespace effects_detail

Effect Effect::composite(Kind kind, std::vector<Effect> effects) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->children = std::move(effects);
  return Effect(std::move(node));
}

Effect Effect::sequence(std::vector<Effect> effects) {
  return composite(Kind::kSequence, std::move(effects));
}

Effect Effect::all_of(std::vector<Effect> effects) {
  return composite(Kind::kAllOf, std::move(effects));
}

Effect Effect::race(std::vector<Effect> effects) {
  return composite(Kind::kRace, std::move(effects));
}

Effect Effect::then(Effect first, std::function<Effect(const std::any&)> next) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kThen;
  node->children = {std::move(first)};
  node->next = std::move(next);
  return Effect(std::move(node));
}

Effect Effect::with_retry(RetryPolicy policy) const {
  auto node = std::make_shared<Node>(*node_);
  node->retry = policy;
  return Effect(std::move(node));
}

Effect Effect::with_timeout(std::chrono::milliseconds timeout) const {
  auto node = std::make_shared<Node>(*node_);
  node->timeout = timeout;
  return Effect(std::move(node));
}

Effect Effect::on_failure(Effect compensation) const {
  auto node = std::make_shared<Node>(*node_);
  node->compensation = std::make_shared<const Effect>(std::move(compensation));
  return Effect(std::move(node));
}

std::string Effect::describe() const {
  auto list = [&](const char* name) {
    std::string out = std::string(name) + "(";
    for (std::size_t i = 0; i < node_->children.size(); ++i) {
      out += (i ? ", " : "") + node_->children[i].describe();
    }
    return out + ")";
  };
  switch (node_->kind) {
    case Kind::kSingle:
      return node_->detail.empty() ? node_->name : node_->name + " (" + node_->detail + ")";
    case Kind::kSequence:
      return list("sequence");
    case Kind::kAllOf:
      return list("all_of");
    case Kind::kRace:
      return list("race");
    case Kind::kThen:
      return "then(" + node_->children.front().describe() + ", ...)";
  }
  return node_->name;
}

namespace {

// A seeded generator of [0, 1) shared by the threads of a runner.
std::function<double()> seeded_random() {
  struct State {
    std::mutex mutex;
    std::mt19937_64 engine{std::random_device{}()};
    std::uniform_real_distribution<double> share{0.0, 1.0};
  };
  auto state = std::make_shared<State>();
  return [state] {
    std::lock_guard<std::mutex> lock(state->mutex);
    return state->share(state->engine);
  };
}

}  // namespace

EffectRunner::EffectRunner()
    : sleep_([](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }),
      random_(seeded_random()),
      clock_([] { return std::chrono::steady_clock::now(); }) {}

std::chrono::milliseconds EffectRunner::jittered(std::chrono::milliseconds delay,
                                                 double jitter) const {
  jitter = std::clamp(jitter, 0.0, 1.0);
  if (jitter == 0.0) return delay;
  const double r = std::clamp(random_(), 0.0, 1.0);
  return std::chrono::milliseconds(
      static_cast<std::int64_t>(static_cast<double>(delay.count()) * (1.0 - jitter * r)));
}

EffectOutcome EffectRunner::run_timed(const Effect& effect, const std::stop_token& stop) const {
  const std::chrono::milliseconds timeout = effect.timeout();
  if (timeout.count() <= 0) return run_once(effect, stop);
  std::stop_source source;
  std::stop_callback forward(stop, [&] { source.request_stop(); });
  const auto start = clock_();
  EffectOutcome out;
  bool fired = false;
  {
    Deadline deadline(source, timeout);
    out = run_once(effect, source.get_token());
    fired = deadline.fired();
  }
  if (fired || clock_() - start > timeout) {
    out.ok = false;
    out.value.reset();
    out.error = out.effect + " timed out after " + std::to_string(timeout.count()) + " ms";
  }
  return out;
}

EffectOutcome EffectRunner::run(const Effect& effect, const std::stop_token& stop) const {
  const RetryPolicy& retry = effect.retry();
  EffectOutcome outcome;
  std::chrono::milliseconds delay = retry.initial_delay;
  int attempts = 0;
  for (;;) {
    ++attempts;
    outcome = run_timed(effect, stop);
    if (outcome.ok || attempts >= retry.max_attempts || stop.stop_requested()) break;
    sleep_(jittered(delay, retry.jitter));
    delay = std::min(retry.max_delay, std::chrono::milliseconds(static_cast<std::int64_t>(
                                          static_cast<double>(delay.count()) * retry.multiplier)));
  }
  outcome.attempts = attempts;
  if (!outcome.ok && effect.compensation()) {
    EffectOutcome compensated = run(*effect.compensation(), stop);
    outcome.error += compensated.ok ? "; compensated by " + compensated.effect
                                    : "; its compensation failed too: " + compensated.error;
  }
  return outcome;
}

std::vector<EffectOutcome> EffectRunner::run_all(const Effects& effects) const {
  std::vector<EffectOutcome> out;
  out.reserve(effects.size());
  for (const Effect& e : effects) out.push_back(run(e));
  return out;
}

EffectOutcome EffectRunner::run_once(const Effect& effect, std::stop_token stop) const {
  EffectOutcome out;
  out.effect = effect.describe();
  switch (effect.kind()) {
    case Effect::Kind::kSingle:
      return run_single(effect, std::move(stop), std::move(out));
    case Effect::Kind::kSequence:
      return run_sequence(effect, std::move(stop), std::move(out));
    case Effect::Kind::kThen:
      return run_then(effect, std::move(stop), std::move(out));
    case Effect::Kind::kAllOf:
    case Effect::Kind::kRace:
      break;
  }
  return run_concurrently(effect, std::move(stop), std::move(out));
}

EffectOutcome EffectRunner::run_single(const Effect& effect, std::stop_token stop,
                                       EffectOutcome out) const {
  auto handler = handlers_.find(effect.type());
  if (handler == handlers_.end()) {
    out.error = "no handler for effect " + out.effect;
    return out;
  }
  try {
    out.value = handler->second(effect.value(), std::move(stop));
    out.ok = true;
  } catch (const std::exception& e) {
    out.error = out.effect + " failed: " + e.what();
  } catch (...) {
    out.error = out.effect + " failed";
  }
  return out;
}

EffectOutcome EffectRunner::run_sequence(const Effect& effect, std::stop_token stop,
                                         EffectOutcome out) const {
  out.ok = true;
  for (const Effect& child : effect.children()) {
    EffectOutcome step = run(child, stop);
    if (!step.ok) {
      out.ok = false;
      out.error = step.error;
      return out;
    }
    out.value = std::move(step.value);
  }
  return out;
}

EffectOutcome EffectRunner::run_then(const Effect& effect, std::stop_token stop,
                                     EffectOutcome out) const {
  EffectOutcome first = run(effect.children().front(), stop);
  if (!first.ok) {
    out.error = first.error;
    return out;
  }
  Effect next = effect.next()(first.value);
  EffectOutcome second = run(next, stop);
  second.effect = out.effect;
  second.attempts = 0;
  return second;
}

EffectOutcome EffectRunner::run_concurrently(const Effect& effect, std::stop_token stop,
                                             EffectOutcome out) const {
  // A race's losers are asked to stop once one wins; a stop asked of the whole reaches
  // every one.
  const bool race = effect.kind() == Effect::Kind::kRace;
  const std::vector<Effect>& children = effect.children();
  std::vector<EffectOutcome> outcomes(children.size());
  std::stop_source losers;
  std::stop_callback forward(stop, [&] { losers.request_stop(); });
  std::mutex mutex;
  std::optional<std::size_t> winner;
  {
    std::vector<std::jthread> threads;
    threads.reserve(children.size());
    for (std::size_t i = 0; i < children.size(); ++i) {
      threads.emplace_back([&, i] {
        outcomes[i] = run(children[i], losers.get_token());
        if (race && outcomes[i].ok) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!winner) {
            winner = i;
            losers.request_stop();
          }
        }
      });
    }
  }  // joined
  if (race) {
    if (winner) {
      out.ok = true;
      out.value = std::move(outcomes[*winner].value);
      return out;
    }
  } else {
    out.ok =
        std::all_of(outcomes.begin(), outcomes.end(), [](const EffectOutcome& o) { return o.ok; });
    if (out.ok) {
      std::vector<std::any> values;
      values.reserve(outcomes.size());
      for (EffectOutcome& o : outcomes) values.push_back(std::move(o.value));
      out.value = std::move(values);
      return out;
    }
  }
  for (const EffectOutcome& o : outcomes) {
    if (!o.ok) out.error += (out.error.empty() ? "" : "; ") + o.error;
  }
  if (race) out.error = "every effect of the race failed: " + out.error;
  return out;
}

}  // namespace statekit
