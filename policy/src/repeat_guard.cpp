#include "policy/repeat_guard.hpp"

namespace policy {

RepeatCheck check_repeat(const RepeatConfig& config, const RepeatStreak& before,
                         const std::string& key, const std::string& fingerprint) {
  RepeatCheck out;
  bool same = before.count > 0 && before.key == key && before.fingerprint == fingerprint;
  out.streak = same ? before : RepeatStreak{key, fingerprint, 0};
  ++out.streak.count;
  std::size_t n = out.streak.count;
  if (config.halt_threshold > 0 && n >= config.halt_threshold) {
    out.verdict = RepeatVerdict::kHalt;
  } else if (config.deny_threshold > 0 && n >= config.deny_threshold) {
    out.verdict = RepeatVerdict::kDeny;
  }
  return out;
}

}  // namespace policy
