// Effects (docs/conformance/STATE_MANAGEMENT.md): side effects as data. A reducer, a
// state machine's entry action or a tool boundary says what should happen — preserve the
// agent's HOME, tell the agent what was rolled back, stop the run — as Effect values,
// and an EffectRunner performs them with the handlers registered for their types. Code
// that decides can be tested by looking at the effects it returns, without performing
// any.
//
// An effect is any copyable struct; Effect::of wraps one. Effects compose:
//   - sequence({a, b}): a, then b; stops at the first failure;
//   - all_of({a, b}): all at once (a thread each); fails if any failed, naming each;
//   - race({a, b}): all at once, the first to succeed wins and the others are asked to
//     stop (through their handler's std::stop_token); fails only if all failed;
//   - then(a, fn): a, then the effect fn makes of a's result;
//   - e.with_retry(policy): e again after a failure, with exponential backoff, each
//     delay shortened by a random share of up to policy.jitter (set_random draws it);
//   - e.with_timeout(d): e fails if it has not ended d after it began (each attempt
//     has its own d). Its handler's std::stop_token asks it to stop at the deadline; a
//     handler that ignores the token still fails, when it returns (the runner cannot
//     abandon a thread that runs the caller's code);
//   - e.on_failure(c): c after e failed (the outcome is still e's failure).
// A handler signals failure by throwing; an effect with no handler fails, naming its
// type. The outcome of running an effect is a value: nothing is thrown.
//
//   struct TellAgent { std::string text; };
//   Effects plan = {Effect::of(TellAgent{"rolled back a.txt"})};
//   ASSERT_EQ(plan[0].as<TellAgent>()->text, "rolled back a.txt");  // a test: no I/O
//
//   EffectRunner runner;
//   runner.handle<TellAgent>([&](const TellAgent& t) { answer.context = t.text; });
//   for (const EffectOutcome& o : runner.run_all(plan)) if (!o.ok) warn(o.error);
//
// Effects a reducer returns inside a sandbox::Session are queued by its dispatch and
// performed by the runner the session was given (Session::set_effect_runner), right
// after the dispatch stored its slices, on the dispatching thread.
//
// Thread-safety: Effect values are immutable. Register handlers before running; run
// may then be called from any thread, and all_of and race call handlers concurrently.
#pragma once

#include <any>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

namespace statekit {

// How often, and how far apart, a failed effect is tried again.
struct RetryPolicy {
  int max_attempts = 1;  // 1: no retry
  std::chrono::milliseconds initial_delay{100};
  double multiplier = 2.0;
  std::chrono::milliseconds max_delay{10000};
  // Each delay d is shortened to d * (1 - jitter * r), r drawn from [0, 1): between
  // d * (1 - jitter) and d. 0: no jitter; clamped to [0, 1].
  double jitter = 0.0;

  // max_attempts tries, initial_delay apart and doubling each time.
  static RetryPolicy exponential(
      int max_attempts, std::chrono::milliseconds initial_delay = std::chrono::milliseconds(100)) {
    return RetryPolicy{max_attempts, initial_delay, 2.0, std::chrono::milliseconds(10000), 0.0};
  }
  // This policy with its delays jittered by up to fraction of each.
  RetryPolicy with_jitter(double fraction) const {
    RetryPolicy out = *this;
    out.jitter = fraction;
    return out;
  }
};

namespace effects_detail {
std::string type_name(const std::type_info& type);

// T::kName, else the type's name.
template <typename T>
std::string name_of() {
  if constexpr (requires { std::string(T::kName); }) {
    return std::string(T::kName);
  } else {
    return type_name(typeid(T));
  }
}
}  // namespace effects_detail

// One effect, or a composition of effects. Immutable; cheap to copy.
class Effect {
 public:
  enum class Kind { kSingle, kSequence, kAllOf, kRace, kThen };

  // The effect value.
  template <typename T>
  static Effect of(T value) {
    auto node = std::make_shared<Node>();
    node->kind = Kind::kSingle;
    node->type = typeid(T);
    node->name = effects_detail::name_of<T>();
    if constexpr (requires(const T& t) { std::string(t.describe()); }) {
      node->detail = value.describe();
    }
    node->value = std::make_shared<const T>(std::move(value));
    return Effect(std::move(node));
  }
  static Effect sequence(std::vector<Effect> effects);
  static Effect all_of(std::vector<Effect> effects);
  static Effect race(std::vector<Effect> effects);
  // first, then the effect next makes of first's result.
  static Effect then(Effect first, std::function<Effect(const std::any&)> next);

  // This effect, tried again per policy after a failure.
  Effect with_retry(RetryPolicy policy) const;
  // This effect, with compensation performed if it failed.
  Effect on_failure(Effect compensation) const;
  // This effect, failed if an attempt has not ended after timeout (0: no limit).
  Effect with_timeout(std::chrono::milliseconds timeout) const;

  Kind kind() const { return node_->kind; }
  // The value of a single effect of type T, or nullptr.
  template <typename T>
  const T* as() const {
    return node_->kind == Kind::kSingle && node_->type == typeid(T)
               ? static_cast<const T*>(node_->value.get())
               : nullptr;
  }
  std::type_index type() const { return node_->type; }  // of a single effect
  const void* value() const { return node_->value.get(); }
  const std::vector<Effect>& children() const { return node_->children; }
  const std::function<Effect(const std::any&)>& next() const { return node_->next; }
  const RetryPolicy& retry() const { return node_->retry; }
  const Effect* compensation() const { return node_->compensation.get(); }
  std::chrono::milliseconds timeout() const { return node_->timeout; }
  // "TellAgent", "sequence(A, B)", ...: for outcomes and messages.
  std::string describe() const;

 private:
  struct Node {
    Kind kind = Kind::kSingle;
    std::type_index type = typeid(void);
    std::string name;
    std::string detail;  // the value's describe(), if it has one
    std::shared_ptr<const void> value;
    std::vector<Effect> children;
    std::function<Effect(const std::any&)> next;
    RetryPolicy retry;
    std::shared_ptr<const Effect> compensation;
    std::chrono::milliseconds timeout{0};
  };
  explicit Effect(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  static Effect composite(Kind kind, std::vector<Effect> effects);

  std::shared_ptr<const Node> node_;
};

using Effects = std::vector<Effect>;

// What running one effect came to.
struct EffectOutcome {
  std::string effect;  // its describe()
  bool ok = false;
  std::string error;  // why it failed
  std::any value;     // what its handler returned (sequence: the last's; all_of: a
                      // std::vector<std::any> of each; race: the winner's)
  int attempts = 0;
};

// Performs effects with the handlers registered for their types.
class EffectRunner {
 public:
  EffectRunner();

  // The handler of effects of type T: fn(const T&) or fn(const T&, std::stop_token),
  // returning anything (void too); it fails by throwing. Replaces T's handler.
  template <typename T, typename F>
  void handle(F fn) {
    Handler erased;
    if constexpr (std::is_invocable_v<F&, const T&, std::stop_token>) {
      erased = wrap<T>([fn = std::move(fn)](const T& e, std::stop_token stop) mutable {
        return fn(e, std::move(stop));
      });
    } else {
      static_assert(std::is_invocable_v<F&, const T&>,
                    "a handler of T takes (const T&) or (const T&, std::stop_token)");
      erased = wrap<T>([fn = std::move(fn)](const T& e, std::stop_token) mutable { return fn(e); });
    }
    handlers_[typeid(T)] = std::move(erased);
  }
  bool handles(std::type_index type) const { return handlers_.count(type) != 0; }

  // Performs effect (stop asks a running race or handler to stop early).
  EffectOutcome run(const Effect& effect, const std::stop_token& stop = {}) const;
  // Performs each effect in order (one failing does not stop the next).
  std::vector<EffectOutcome> run_all(const Effects& effects) const;

  // How the runner waits between retries (tests record instead of waiting).
  void set_sleep(std::function<void(std::chrono::milliseconds)> sleep) {
    sleep_ = std::move(sleep);
  }
  // Where retry jitter's share r comes from: numbers in [0, 1) (a seeded generator by
  // default). Called from the threads that run effects.
  void set_random(std::function<double()> random) { random_ = std::move(random); }
  // The clock a timeout is measured with (std::chrono::steady_clock by default): an
  // attempt that took longer on it than its timeout failed, whatever its handler said.
  void set_clock(std::function<std::chrono::steady_clock::time_point()> clock) {
    clock_ = std::move(clock);
  }

 private:
  using Handler = std::function<std::any(const void*, std::stop_token)>;
  template <typename T, typename G>
  static Handler wrap(G g) {
    return [g = std::move(g)](const void* e, std::stop_token stop) mutable -> std::any {
      using R = std::invoke_result_t<G&, const T&, std::stop_token>;
      if constexpr (std::is_void_v<R>) {
        g(*static_cast<const T*>(e), std::move(stop));
        return std::any();
      } else {
        return std::any(g(*static_cast<const T*>(e), std::move(stop)));
      }
    };
  }
  EffectOutcome run_once(const Effect& effect, std::stop_token stop) const;
  // run_once under the effect's timeout, if it has one.
  EffectOutcome run_timed(const Effect& effect, const std::stop_token& stop) const;
  // The wait after a failed attempt whose nominal delay is delay.
  std::chrono::milliseconds jittered(std::chrono::milliseconds delay, double jitter) const;
  // run_once of each kind of effect; out has the effect's description.
  EffectOutcome run_single(const Effect& effect, std::stop_token stop, EffectOutcome out) const;
  EffectOutcome run_sequence(const Effect& effect, std::stop_token stop, EffectOutcome out) const;
  EffectOutcome run_then(const Effect& effect, std::stop_token stop, EffectOutcome out) const;
  // all_of and race: the children on a thread each.
  EffectOutcome run_concurrently(const Effect& effect, std::stop_token stop,
                                 EffectOutcome out) const;

  std::map<std::type_index, Handler> handlers_;
  std::function<void(std::chrono::milliseconds)> sleep_;
  std::function<double()> random_;
  std::function<std::chrono::steady_clock::time_point()> clock_;
};

}  // namespace statekit
