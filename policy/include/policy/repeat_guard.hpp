// RepeatGuard — the loop detector: an agent that asks for the same tool call with the
// same input again and again is stuck (a real Claude Code repeating `echo same` made
// hundreds of model requests with nothing to stop it). The streak of identical calls in
// a row is counted; at deny_threshold the call is refused (the agent is told why and
// may do something else), at halt_threshold the whole run stops (reason `loop`). Any
// other call in between starts the count again. "The same call" is the same tool and
// the same input fingerprint (the caller's digest of the input in a canonical form).
//
// Thread-safety: plain values and a pure function.
#pragma once

#include <cstddef>
#include <string>

namespace policy {

// When a streak of identical calls is refused and when it stops the run; 0 turns a
// threshold off (both 0: no repeat check). A threshold counts calls: with
// deny_threshold 3, the third identical call in a row is the first one refused.
struct RepeatConfig {
  std::size_t deny_threshold = 0;
  std::size_t halt_threshold = 0;

  bool enabled() const { return deny_threshold > 0 || halt_threshold > 0; }
  friend bool operator==(const RepeatConfig&, const RepeatConfig&) = default;
};

// The run of identical calls that ends with the newest call checked (and persisted with
// the run's counts, so that every process of a run continues it).
struct RepeatStreak {
  std::string key;          // the tool's name
  std::string fingerprint;  // the digest of its input
  std::size_t count = 0;    // identical calls in a row, the newest included

  friend bool operator==(const RepeatStreak&, const RepeatStreak&) = default;
};

// What the guard says of one call.
enum class RepeatVerdict {
  kAllow,  // not repeated often enough to matter
  kDeny,   // refuse this call; the run goes on
  kHalt,   // refuse it and stop the run
};

// The streak once a call has been counted, and the verdict on that call.
struct RepeatCheck {
  RepeatStreak streak;
  RepeatVerdict verdict = RepeatVerdict::kAllow;
};

// Counts the call (key, fingerprint) after the streak before: the same key and
// fingerprint lengthen it, anything else starts a new one of 1. The verdict is kHalt
// once the streak reaches halt_threshold, else kDeny once it reaches deny_threshold
// (thresholds that are 0 never trip).
RepeatCheck check_repeat(const RepeatConfig& config, const RepeatStreak& before,
                         const std::string& key, const std::string& fingerprint);

}  // namespace policy
