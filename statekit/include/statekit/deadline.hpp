// Deadline: asks a std::stop_source to stop once a duration has passed, from a timer
// thread of its own. Effects and saga steps with a timeout use one: the work running
// under the deadline observes the source's token, and the caller asks fired() after
// the work returned to tell a timeout from an ordinary stop.
//
//   std::stop_source source;
//   {
//     Deadline deadline(source, std::chrono::milliseconds(500));
//     work(source.get_token());  // should return soon after the token asks it to stop
//     timed_out = deadline.fired();
//   }
//
// Thread-safety: fired() may be called from any thread. Destroying the Deadline ends
// its timer (without firing it) and waits for the timer thread.
#pragma once

#include <atomic>
#include <chrono>
#include <stop_token>
#include <thread>

namespace statekit {

// A timer that requests stop on a stop_source when it runs out.
class Deadline {
 public:
  Deadline(std::stop_source source, std::chrono::nanoseconds after);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

  // True once the timer ran out and requested stop.
  bool fired() const { return fired_.load(); }

 private:
  std::atomic<bool> fired_{false};
  std::jthread timer_;
};

}  // namespace statekit
