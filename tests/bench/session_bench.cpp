// session_bench — snapshot and append cost of a session against the size of its LOG
// slice (issue 3: both must be independent of size). For each size it prints the
// mean time of a snapshot (all slices) and of one dispatch that appends to the log,
// the same append to a log that a count window (session.windows) holds at that size,
// so that each append evicts the oldest item (issue 36), next to the cost of copying
// the log as a plain std::vector for scale.
//
//   session_bench [--max N]   (default 1,000,000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "embed/agent_slices.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/session.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double mean_ns(int iterations, F&& f) {
  auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) f(i);
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max = 1000000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--max" && i + 1 < argc) {
      max = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: session_bench [--max N]\n");
      return 2;
    }
  }
  sandbox::Session session;
  session.register_reducer<sandbox::ToolInvoked, sandbox::ToolInvoked>(
      statekit::reducers::append_all<sandbox::ToolInvoked>);
  session.seed<embed::Plan>({embed::Plan{"bench", "active", {}}});
  sandbox::ToolInvoked event{"toolu_bench", "Bash", "{}", true, "ok", 1};
  sandbox::Session windowed;
  windowed.register_reducer<sandbox::ToolInvoked, sandbox::ToolInvoked>(
      statekit::reducers::append_all<sandbox::ToolInvoked>);

  std::printf("%12s %16s %16s %20s %20s\n", "log items", "snapshot (ns)", "append (ns)",
              "windowed append (ns)", "vector copy (ns)");
  std::vector<sandbox::ToolInvoked> plain;
  std::vector<sandbox::SessionSnapshot> keep;  // snapshots stay alive, as a ledger would
  std::size_t size = 0;
  for (std::size_t target = 1000; target <= max; target *= 10) {
    while (size < target) {
      session.dispatch(event);
      plain.push_back(event);
      ++size;
    }
    double snap = mean_ns(1000, [&](int) { keep.push_back(session.snapshot({}, true)); });
    double append = mean_ns(1000, [&](int) { session.dispatch(event); });
    size += 1000;
    windowed.set_count_window(typeid(sandbox::ToolInvoked), target);
    while (windowed.all<sandbox::ToolInvoked>().size() < target) windowed.dispatch(event);
    double evicting = mean_ns(1000, [&](int) { windowed.dispatch(event); });
    if (windowed.all<sandbox::ToolInvoked>().size() != target) {
      std::fprintf(stderr, "session_bench: the window kept %zu items, not %zu\n",
                   windowed.all<sandbox::ToolInvoked>().size(), target);
      return 1;
    }
    double copy = mean_ns(3, [&](int) {
      std::vector<sandbox::ToolInvoked> c = plain;
      if (c.size() != plain.size()) std::abort();
    });
    std::printf("%12zu %16.0f %16.0f %20.0f %20.0f\n", target, snap, append, evicting, copy);
    keep.clear();
  }
  if (session.all<sandbox::ToolInvoked>().size() != size) {
    std::fprintf(stderr, "session_bench: lost appends\n");
    return 1;
  }
  return 0;
}
