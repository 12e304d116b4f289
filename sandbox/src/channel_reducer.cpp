#include "sandbox/channel_reducer.hpp"

namespace sandbox::channel_reducer_detail {

std::uint64_t next_binding() {
  static std::atomic<std::uint64_t> last{0};
  return ++last;
}

}  // namespace sandbox::channel_reducer_detail
