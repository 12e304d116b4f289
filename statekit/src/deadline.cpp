#include "statekit/deadline.hpp"

#include <condition_variable>
#include <mutex>
#include <utility>

namespace statekit {

Deadline::Deadline(std::stop_source source, std::chrono::nanoseconds after)
    : timer_([this, source = std::move(source), after](std::stop_token ended) mutable {
        std::mutex mutex;
        std::condition_variable_any wake;
        std::unique_lock<std::mutex> lock(mutex);
        // Returns early only when the Deadline is destroyed (ended asks to stop).
        wake.wait_for(lock, ended, after, [] { return false; });
        if (ended.stop_requested()) return;
        fired_.store(true);
        source.request_stop();
      }) {}

Deadline::~Deadline() {
  timer_.request_stop();
  timer_.join();
}

}  // namespace statekit
