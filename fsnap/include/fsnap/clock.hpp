// Clock — the injectable time source of shadowbox (docs/conformance/EXECUTION_STATE.md,
// Determinism Support; LevelDB's Env::NowMicros plays the same role). Checkpoint and
// snapshot times, the capture's racy-timestamp rule and elapsed times all read it, so
// tests and replays run on fixed time and never sleep.
//
// Thread-safety: now() may be called from any thread; FixedClock's setters too.
#pragma once

#include <atomic>
#include <chrono>

namespace fsnap {

using TimePoint = std::chrono::system_clock::time_point;

// A source of the current time.
class Clock {
 public:
  virtual ~Clock() = default;
  // The current time.
  virtual TimePoint now() const = 0;
};

// The system's wall clock.
class SystemClock : public Clock {
 public:
  TimePoint now() const override { return std::chrono::system_clock::now(); }
};

// A clock that says what it is told (tests, replays).
class FixedClock : public Clock {
 public:
  explicit FixedClock(TimePoint t) : ticks_(t.time_since_epoch().count()) {}
  TimePoint now() const override { return TimePoint(TimePoint::duration(ticks_.load())); }
  void set(TimePoint t) { ticks_.store(t.time_since_epoch().count()); }
  void advance(std::chrono::nanoseconds d) {
    ticks_.fetch_add(std::chrono::duration_cast<TimePoint::duration>(d).count());
  }

 private:
  std::atomic<TimePoint::duration::rep> ticks_;
};

// A clock running at the system's pace, shifted by a fixed offset — for tests whose
// files must look older than the capture that reads them (the racy-timestamp rule
// re-reads files modified within its margin), without sleeping.
class OffsetClock : public Clock {
 public:
  explicit OffsetClock(std::chrono::nanoseconds offset) : offset_(offset) {}
  TimePoint now() const override {
    return std::chrono::system_clock::now() +
           std::chrono::duration_cast<TimePoint::duration>(offset_);
  }

 private:
  std::chrono::nanoseconds offset_;
};

}  // namespace fsnap
