// hook_overhead_bench — what shadowbox's hooks add to each tool call of the real
// Claude Code CLI. Runs the same scripted scenario (N Bash calls against the mock
// Messages API) on a workspace of F files: without hooks; under
// `shadowbox run` (hooks.transport http: events posted to the run's loopback server,
// workspace watched); and with `shadowbox hooks install` (one hook process per event:
// the thin client `shadowbox-hook`), once with the watch daemon recording the events
// and once with watch.daemon off (the thin client then runs `shadowbox hook`, which
// scans the workspace). The time between consecutive model requests is one tool call's
// round trip; the bench prints the median and 90th percentile of each run and the median overhead
// per call. A run under `shadowbox run` with every limit set (cost ceiling, steps, retries,
// timeout, circuit breaker, budget window) shows what containment's decision adds; one with HTTP
// hooks answered at once by a server that does nothing shows what Claude Code itself spends on two
// HTTP hooks per call.
//
//   hook_overhead_bench [--calls N] [--files F]     (defaults: 50 calls, 10,000 files)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <Poco/JSON/Object.h>

#include "../e2e/agent_harness.hpp"
#include "hooks/claude_code_settings.hpp"
#include "hooks/hook_server.hpp"

namespace fs = boost::filesystem;

namespace {

struct Figures {
  double median = 0;
  double p90 = 0;
};

Figures percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {};
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 9 / 10)]};
}

// Gaps between consecutive requests of the agent's main loop, in ms.
std::vector<double> round_trips(const e2e::MockServer& server) {
  std::vector<double> times;
  for (const Poco::JSON::Object::Ptr& r : server.requests()) {
    if (r->getValue<bool>("main")) times.push_back(r->getValue<double>("t_ms"));
  }
  std::vector<double> gaps;
  for (std::size_t i = 1; i < times.size(); ++i) gaps.push_back(times[i] - times[i - 1]);
  return gaps;
}

enum class Mode {
  kPlain,
  kRun,
  kRunLimited,
  kHookProcesses,
  kHookProcessesScanning,
  kEmptyHttpHooks
};

std::vector<double> run_scenario(const fs::path& base, const std::string& name, const fs::path& ws,
                                 int calls, Mode mode) {
  std::string steps;
  for (int i = 0; i < calls; ++i) {
    steps += "{\"tool\":\"Bash\",\"id\":\"toolu_" + name + std::to_string(i) +
             "\",\"input\":{\"command\":\"echo " + std::to_string(i) +
             " > step.txt\",\"description\":\"step\"}},";
  }
  steps += "{\"text\":\"done\"}";
  testing_support::write_file(base / (name + ".json"), "{\"steps\":[" + steps + "]}");
  e2e::MockServer server(base / (name + ".json"), base / (name + ".log"));
  fs::path home = base / (name + "-home");
  fs::create_directories(home);
  std::vector<std::string> env = e2e::claude_env(server, home);
  fs::path store = base / (name + "-store");
  std::vector<std::string> sb = {SHADOWBOX_BIN, "--workspace", ws.string(), "--store",
                                 store.string()};
  std::vector<std::string> agent = {e2e::claude_binary(), "-p", "go",
                                    "--dangerously-skip-permissions"};
  std::unique_ptr<hooks::HookServer> empty;
  if (mode == Mode::kEmptyHttpHooks) {
    empty = std::make_unique<hooks::HookServer>([](const std::string&) {
      return hooks::HttpHookReply{200, "application/json", "{}"};
    });
    hooks::install_http_hooks_in_file(home / ".claude" / "settings.json", empty->url(), "true");
  } else if (mode == Mode::kHookProcesses || mode == Mode::kHookProcessesScanning) {
    // The project's hooks, as `shadowbox hooks install` writes them: the thin client
    // (`shadowbox-hook`) naming this store.
    env.push_back("SHADOWBOX_STORE=" + store.string());
    if (mode == Mode::kHookProcessesScanning) {
      testing_support::write_file(base / "no-daemon.yaml", "watch: {daemon: off}\n");
      env.push_back("SHADOWBOX_CONFIG=" + (base / "no-daemon.yaml").string());
    }
    // The first capture of the workspace is not per call; with the daemon, the second
    // snapshot is its first capture (a walk with the stat cache).
    for (std::vector<std::string> args : {std::vector<std::string>{"hooks", "install"},
                                          std::vector<std::string>{"snapshot", "--tag", "baseline"},
                                          std::vector<std::string>{"daemon", "status"},
                                          std::vector<std::string>{"snapshot", "--tag", "warm"}}) {
      std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws.string()};
      argv.insert(argv.end(), args.begin(), args.end());
      testing_support::CommandResult r = testing_support::run_command(argv, ws, env);
      if (r.exit_code != 0) throw std::runtime_error("shadowbox failed: " + r.err);
    }
  } else if (mode == Mode::kRun || mode == Mode::kRunLimited) {
    std::vector<std::string> argv = sb;
    if (mode == Mode::kRunLimited) {
      // Limits far away: every call is checked against all of them, none trips.
      testing_support::write_file(
          base / "limits.yaml",
          "policy:\n"
          "  circuit_breaker: {failure_threshold: 5, recovery_timeout: 30s}\n"
          "  budget_window: {window: 5m, max_calls: 100000, max_cost_usd: 1000}\n");
      argv.push_back("--config");
      argv.push_back((base / "limits.yaml").string());
    }
    for (const char* a : {"run", "--run-id", "bench"}) argv.push_back(a);
    if (mode == Mode::kRunLimited) {
      for (const char* a : {"--max-cost-usd", "1000", "--max-steps", "100000", "--max-retries",
                            "1000", "--timeout", "2h"}) {
        argv.push_back(a);
      }
    }
    argv.push_back("--");
    agent.insert(agent.begin(), argv.begin(), argv.end());
  }
  testing_support::CommandResult r =
      testing_support::run_command(agent, ws, env, "", std::chrono::seconds(1800));
  if (r.exit_code != 0) throw std::runtime_error("claude failed: " + r.out + r.err);
  return round_trips(server);
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 50;
  int files = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string arg = argv[i];
    if (arg == "--calls") {
      calls = std::atoi(argv[i + 1]);
    } else if (arg == "--files") {
      files = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: hook_overhead_bench [--calls N] [--files F]\n");
      return 2;
    }
  }
  try {
    if (!fs::exists(e2e::claude_binary())) {
      throw std::runtime_error("no Claude Code CLI at " + e2e::claude_binary() +
                               " (run scripts/setup.sh)");
    }
    testing_support::TempDir base("shadowbox-hook-bench");
    fs::path ws = base / "ws";
    for (int i = 0; i < files; ++i) {
      testing_support::write_file(ws / ("d" + std::to_string(i % 100)) / ("f" + std::to_string(i)),
                                  "file " + std::to_string(i) + "\n");
    }
    Figures p = percentiles(run_scenario(base.path(), "plain", ws, calls, Mode::kPlain));
    Figures r = percentiles(run_scenario(base.path(), "run", ws, calls, Mode::kRun));
    Figures l = percentiles(run_scenario(base.path(), "limited", ws, calls, Mode::kRunLimited));
    Figures h = percentiles(run_scenario(base.path(), "hooked", ws, calls, Mode::kHookProcesses));
    Figures hs =
        percentiles(run_scenario(base.path(), "scanning", ws, calls, Mode::kHookProcessesScanning));
    Figures e = percentiles(run_scenario(base.path(), "empty", ws, calls, Mode::kEmptyHttpHooks));
    std::printf("workspace: %d files; %d Bash calls per run; real Claude Code CLI, mock API\n",
                files, calls);
    std::printf("%-34s %10s %10s %12s\n", "per tool call", "median", "p90", "overhead");
    std::printf("%-34s %8.1fms %8.1fms\n", "without hooks", p.median, p.p90);
    std::printf("%-34s %8.1fms %8.1fms %10.1fms\n", "shadowbox run (http, watched)", r.median,
                r.p90, r.median - p.median);
    std::printf("%-34s %8.1fms %8.1fms %10.1fms\n", "shadowbox run, every limit set", l.median,
                l.p90, l.median - p.median);
    std::printf("%-34s %8.1fms %8.1fms %10.1fms\n", "hook processes, watch daemon", h.median, h.p90,
                h.median - p.median);
    std::printf("%-34s %8.1fms %8.1fms %10.1fms\n", "hook processes, daemon off (scan)", hs.median,
                hs.p90, hs.median - p.median);
    std::printf("%-34s %8.1fms %8.1fms %10.1fms\n", "HTTP hooks that do nothing (floor)", e.median,
                e.p90, e.median - p.median);
    std::printf(
        "overhead per call under shadowbox run (median): %.1f ms, with every limit "
        "set: %.1f ms (goal: <= 20 ms)\n",
        r.median - p.median, l.median - p.median);
    std::printf(
        "overhead per call with hook processes (median): %.1f ms with the watch daemon, "
        "%.1f ms scanning: %.1fx (goal: <= 25 ms)\n",
        h.median - p.median, hs.median - p.median, (hs.median - p.median) / (h.median - p.median));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hook_overhead_bench: %s\n", e.what());
    return 1;
  }
}
