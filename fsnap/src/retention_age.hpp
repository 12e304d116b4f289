// How old a checkpoint or an unreachable object is, for retention (max_age) and gc's
// grace period (prune_grace): time arithmetic that never wraps, however long the limit
// (a config's durations go up to 100 years, a library caller's to any length) and
// whatever time a store's file or record says. Private to fsnap.
#pragma once

#include <chrono>
#include <ctime>

namespace fsnap {

namespace retention_age {

using Clock = std::chrono::system_clock;

// Half of what the clock's duration counts (about 146 years): a span shorter than this,
// added to or taken from a time within it of now, does not wrap.
inline constexpr std::chrono::seconds kLongest =
    std::chrono::duration_cast<std::chrono::seconds>(Clock::duration::max()) / 2;

}  // namespace retention_age

// Whether a checkpoint made at created is no older than max_age at now. A max_age
// longer than kLongest holds every checkpoint.
inline bool within_max_age(retention_age::Clock::time_point now,
                           retention_age::Clock::time_point created, std::chrono::seconds max_age) {
  using retention_age::kLongest;
  if (max_age >= kLongest) return true;
  if (created < now - kLongest) return false;  // older than any max_age left
  return now - created <= max_age;
}

// Whether a file last written at written (seconds since the epoch) is younger than grace
// at now. A grace longer than kLongest keeps every file young.
inline bool younger_than(retention_age::Clock::time_point now, std::time_t written,
                         std::chrono::seconds grace) {
  using retention_age::kLongest;
  if (grace >= kLongest) return true;
  std::time_t now_s = retention_age::Clock::to_time_t(now);
  if (written < now_s - kLongest.count()) return false;  // far older than any grace left
  if (written > now_s + kLongest.count()) return true;   // written in the far future
  return now - retention_age::Clock::from_time_t(written) < grace;
}

}  // namespace fsnap
