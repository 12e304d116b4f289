// Clock — an injectable time source (EXECUTION_STATE.md, Determinism Support), so
// runs can be replayed with fixed time.
#pragma once

#include <atomic>
#include <chrono>

namespace sandbox {

using TimePoint = std::chrono::system_clock::time_point;

// A source of the current time.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

// The system's wall clock.
class SystemClock : public Clock {
 public:
  TimePoint now() const override { return std::chrono::system_clock::now(); }
};

// A clock that says what it is told (tests, replays). Thread-safe.
class FixedClock : public Clock {
 public:
  explicit FixedClock(TimePoint t) : ns_(t.time_since_epoch().count()) {}
  TimePoint now() const override { return TimePoint(TimePoint::duration(ns_.load())); }
  void set(TimePoint t) { ns_.store(t.time_since_epoch().count()); }
  void advance(std::chrono::nanoseconds d) {
    ns_.fetch_add(std::chrono::duration_cast<TimePoint::duration>(d).count());
  }

 private:
  std::atomic<TimePoint::duration::rep> ns_;
};

}  // namespace sandbox
