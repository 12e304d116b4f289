// hook_event_bench — what shadowbox itself spends on one tool call under `shadowbox run`,
// without the agent: the run's LedgerRun (its store, watched workspace, containment and
// session, as `run` sets them up from the default config) answers a Claude Code
// PreToolUse event, the tool edits one file, and the run answers the PostToolUse event —
// the two answers `run`'s loopback HTTP server gives, minus the HTTP. Prints the median
// and p90 of each answer and of the call, so the part of hook_overhead_bench's figure
// that is shadowbox's can be read apart from the agent's own cost of two hooks.
//
//   hook_event_bench [--calls N] [--files F] [--scan] [--keep DIR]
//
// --scan: no watch (a capture walks the workspace with the stat cache), as a run whose
// inotify limits are too low. --keep: the workspace and store are made in DIR (new) and
// kept, to be looked at with git (`git --git-dir DIR/store/repo.git log --all`).
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/filesystem.hpp>

#include "bench_workspace.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_hook.hpp"
#include "hooks/config.hpp"
#include "hooks/run_policy.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/ledger_run.hpp"
#include "test_support.hpp"

namespace fs = boost::filesystem;

namespace {

struct Settings {
  int calls = 200;
  int files = 10000;
  bool scan = false;
  std::string keep;
};

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--scan") {
      s.scan = true;
    } else if (arg == "--keep" && i + 1 < argc) {
      s.keep = argv[++i];
    } else if (arg == "--calls" && i + 1 < argc) {
      s.calls = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--files" && i + 1 < argc) {
      s.files = std::max(1, std::stoi(argv[++i]));
    } else {
      throw std::invalid_argument(
          "usage: hook_event_bench [--calls N] [--files F] [--scan] [--keep DIR]");
    }
  }
  return s;
}

// CPU time (user and system, every thread) this process has used, in ms: on a loaded
// machine the wall-clock figures wait for a core, this does not.
double cpu_ms() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto to_ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return to_ms(u.ru_utime) + to_ms(u.ru_stime);
}

// Answers one event and returns the time it took; throws if the answer blocks.
double answer(runs::LedgerRun& run, const hooks::HookOptions& options, const fs::path& ws,
              const std::string& name, const std::string& fields) {
  std::string event = "{\"hook_event_name\":\"" + name +
                      "\",\"session_id\":\"bench\",\"transcript_path\":\"\",\"cwd\":\"" +
                      ws.string() + "\"" + fields + "}";
  hooks::HookAnswer a;
  double t =
      1e3 * bench::seconds_of([&] { a = hooks::handle_claude_code_event(event, run, options); });
  if (a.exit_code != 0) throw std::runtime_error(name + " was not recorded: " + a.stderr_text);
  return t;
}

}  // namespace

int main(int argc, char** argv) try {
  Settings s = parse(argc, argv);
  hooks::register_agent_run_slice_types();
  testing_support::TempDir temp("shadowbox-hook-event-bench");
  fs::path dir = s.keep.empty() ? temp.path() : fs::path(s.keep);
  if (!s.keep.empty() && !fs::create_directory(dir)) {
    throw std::invalid_argument("--keep " + s.keep + ": give a directory that does not exist");
  }
  fs::path ws = dir / "ws";
  // Source-like files (2 KB on average) in a twentieth as many directories, two levels
  // deep, as the scale ladder builds them.
  std::vector<std::string> files =
      bench::build_workspace(ws, s.files, std::max(1, s.files / 20), 2048);

  hooks::Config config;  // the defaults, as a workspace with no config file has them
  runs::LedgerRun run(fsnap::Store::open(dir / "store", ws, true),
                      {config.capture, config.rollback.policy(), "bench-run"});
  hooks::contain_run(run, config, config.policy.limits);
  if (!s.scan) run.workspace().watch([](const std::string&) {});
  hooks::HookOptions options;
  options.supervised = true;
  answer(run, options, ws, "SessionStart", ",\"source\":\"startup\"");

  std::vector<double> pre, post, call;
  double cpu_before = cpu_ms();
  for (int i = 1; i <= s.calls; ++i) {
    const std::string& file = files[static_cast<std::size_t>(i) % files.size()];
    std::string tool = ",\"tool_name\":\"Edit\",\"tool_use_id\":\"toolu_" + std::to_string(i) +
                       "\",\"tool_input\":{\"file_path\":\"" + file + "\"}";
    double a = answer(run, options, ws, "PreToolUse", tool);
    testing_support::write_file(ws / file, "line " + std::to_string(i) + "\n");
    double b = answer(run, options, ws, "PostToolUse", tool + ",\"tool_response\":{\"ok\":true}");
    pre.push_back(a);
    post.push_back(b);
    call.push_back(a + b);
  }
  double cpu_per_call = (cpu_ms() - cpu_before) / s.calls;  // the edits' writes included
  std::printf("hook_event_bench: %d calls on %d files, %s, in process (no HTTP)\n", s.calls,
              s.files, s.scan ? "scanning" : "watched");
  std::printf("%-22s %10s %10s\n", "per tool call", "median", "p90");
  std::printf("%-22s %8.2f ms %8.2f ms\n", "PreToolUse answer", bench::percentile(pre, 50),
              bench::percentile(pre, 90));
  std::printf("%-22s %8.2f ms %8.2f ms\n", "PostToolUse answer", bench::percentile(post, 50),
              bench::percentile(post, 90));
  std::printf("%-22s %8.2f ms %8.2f ms   (goal: <= 5 ms)\n", "both", bench::percentile(call, 50),
              bench::percentile(call, 90));
  std::printf("%-22s %8.2f ms (mean; the wall-clock figures include waiting for a core)\n",
              "CPU per call", cpu_per_call);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "hook_event_bench: %s\n", e.what());
  return 1;
}
