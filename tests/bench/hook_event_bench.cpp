// hook_event_bench — what shadowbox itself spends on one tool call under `shadowbox run`,
// without the agent: the run's LedgerRun (its store, watched workspace, containment and
// session, as `run` sets them up from the default config) answers a Claude Code
// PreToolUse event, the tool edits one file, and the run answers the PostToolUse event
// and the PostToolBatch that ends the batch of one call — the answers `run`'s loopback
// HTTP server gives, minus the HTTP. Prints the median and p90 of each answer and of the
// call, so the part of hook_overhead_bench's figure that is shadowbox's can be read apart
// from the agent's own cost of its hooks.
//
//   hook_event_bench [--calls N] [--files F] [--transcript-kb K] [--scan] [--keep DIR]
//
// --transcript-kb: the agent has a transcript of K KB to begin with (Claude Code's JSON
// lines), to which each call adds its turn and its result (about 5 KB); the answers
// price it (the run's spend meter reads what is new), and after each answer the agent's
// HOME is preserved, as `run` does once it has replied (a row of its own, and the call
// with it).
// --scan: no watch (a capture walks the workspace with the stat cache), as a run whose
// inotify limits are too low. --keep: the workspace and store are made in DIR (new) and
// kept, to be looked at with git (`git --git-dir DIR/store/repo.git log --all`).
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/filesystem.hpp>

#include "bench_workspace.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_hook.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/config.hpp"
#include "hooks/run_policy.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/home_preservation.hpp"
#include "runs/ledger_run.hpp"
#include "test_support.hpp"

namespace fs = boost::filesystem;

namespace {

struct Settings {
  int calls = 200;
  int files = 10000;
  int transcript_kb = 0;
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
    } else if (arg == "--transcript-kb" && i + 1 < argc) {
      s.transcript_kb = std::max(0, std::stoi(argv[++i]));
    } else {
      throw std::invalid_argument(
          "usage: hook_event_bench [--calls N] [--files F] [--transcript-kb K] [--scan] "
          "[--keep DIR]");
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
              const fs::path& transcript, const std::string& name, const std::string& fields) {
  std::string event = "{\"hook_event_name\":\"" + name +
                      "\",\"session_id\":\"bench\",\"transcript_path\":\"" + transcript.string() +
                      "\",\"cwd\":\"" + ws.string() + "\"" + fields + "}";
  hooks::HookAnswer a;
  double t =
      1e3 * bench::seconds_of([&] { a = hooks::handle_claude_code_event(event, run, options); });
  if (a.exit_code != 0) throw std::runtime_error(name + " was not recorded: " + a.stderr_text);
  return t;
}

// The agent's HOME as `run` keeps it, with --transcript-kb: a transcript of that size
// that each call grows, priced by the run's spend meter and preserved after each answer.
class AgentHome {
 public:
  AgentHome(const Settings& s, const fs::path& dir, runs::LedgerRun& run,
            const hooks::Config& config, hooks::HookOptions& options) {
    if (s.transcript_kb == 0) return;
    transcript_ = dir / "home/.claude/projects/p/bench.jsonl";
    std::string text;
    for (int i = 0; text.size() < static_cast<std::size_t>(s.transcript_kb) * 1024; ++i) {
      text += bench::transcript_call(rng_, "toolu_old_" + std::to_string(i));
    }
    testing_support::write_file(transcript_, text);
    meter_.emplace(config.policy.prices, dir / "agent-cost.json");
    options.spend = &*meter_;
    preserver_.emplace(run.store(), run.repo(), "bench-run", dir / "home",
                       std::vector<std::string>{".claude/projects"}, std::vector<std::string>{});
    preserver_->preserve_now();
  }
  bool kept() const { return preserver_.has_value(); }
  const fs::path& transcript() const { return transcript_; }
  // The model's turn that asks for call id, and its result, appended.
  void add_call(const std::string& id) {
    if (kept()) bench::append_file(transcript_, bench::transcript_call(rng_, id));
  }
  // Preserves the HOME as `run` does after an answer; the ms it took (0 without one).
  double preserve() {
    return kept() ? 1e3 * bench::seconds_of([&] { preserver_->preserve(); }) : 0.0;
  }

 private:
  fs::path transcript_;
  std::mt19937 rng_{7};
  std::optional<hooks::SpendMeter> meter_;
  std::optional<runs::HomePreserver> preserver_;
};

// What each call took, in ms.
struct Timings {
  std::vector<double> pre, post, call, preserved, whole;
  double cpu_per_call = 0;
};

void report(const Settings& s, const Timings& t, bool home) {
  std::printf("hook_event_bench: %d calls on %d files, %s, in process (no HTTP)", s.calls, s.files,
              s.scan ? "scanning" : "watched");
  if (home) std::printf(", a transcript of %d KB growing by a call's 5 KB", s.transcript_kb);
  auto row = [](const char* what, const std::vector<double>& v, const char* note) {
    std::printf("%-22s %8.2f ms %8.2f ms%s\n", what, bench::percentile(v, 50),
                bench::percentile(v, 90), note);
  };
  std::printf("\n%-22s %10s %10s\n", "per tool call", "median", "p90");
  row("PreToolUse answer", t.pre, "");
  row("PostToolUse, Batch", t.post, "");
  row("both", t.call, "   (goal: <= 5 ms)");
  if (home) {
    row("HOME preserved", t.preserved, "   (after each answer, as run does)");
    row("both, HOME preserved", t.whole, "");
  }
  std::printf("%-22s %8.2f ms (mean; the wall-clock figures include waiting for a core)\n",
              "CPU per call", t.cpu_per_call);
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
  AgentHome home(s, dir, run, config, options);
  answer(run, options, ws, home.transcript(), "SessionStart", ",\"source\":\"startup\"");

  Timings t;
  double cpu_before = cpu_ms();
  for (int i = 1; i <= s.calls; ++i) {
    const std::string& file = files[static_cast<std::size_t>(i) % files.size()];
    std::string id = "toolu_" + std::to_string(i);
    std::string tool = ",\"tool_name\":\"Edit\",\"tool_use_id\":\"" + id +
                       "\",\"tool_input\":{\"file_path\":\"" + file + "\"}";
    // The model's turn that asks for the call is in the transcript before the call's
    // hook (its result after the tool: here both at once, the next call's before it).
    home.add_call(id);
    double a = answer(run, options, ws, home.transcript(), "PreToolUse", tool);
    double pa = home.preserve();
    testing_support::write_file(ws / file, "line " + std::to_string(i) + "\n");
    double b = answer(run, options, ws, home.transcript(), "PostToolUse",
                      tool + ",\"tool_response\":{\"ok\":true}");
    // Claude Code ends each batch of calls (here one) with PostToolBatch.
    b += answer(run, options, ws, home.transcript(), "PostToolBatch",
                ",\"tool_calls\":[{\"tool_use_id\":\"" + id +
                    "\",\"tool_name\":\"Edit\",\"tool_response\":{\"ok\":true}}]");
    double pb = home.preserve();
    t.pre.push_back(a);
    t.post.push_back(b);
    t.call.push_back(a + b);
    t.preserved.push_back(pa + pb);
    t.whole.push_back(a + b + pa + pb);
  }
  t.cpu_per_call = (cpu_ms() - cpu_before) / s.calls;  // the edits' writes included
  report(s, t, home.kept());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "hook_event_bench: %s\n", e.what());
  return 1;
}
