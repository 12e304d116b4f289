// run_exit_bench — how long `shadowbox run` takes to end once its agent has ended, on a
// small store and on a large one. The agent is the real Claude Code CLI against the mock
// Messages API (one Bash call, then an answer), started through a wrapper script that
// writes the time the moment Claude Code has exited; the bench reads the clock when
// `run` has exited. Each store starts as one pack (a first snapshot, then `shadowbox
// maintenance`); between runs, `shadowbox maintenance` (not timed) waits for whatever
// upkeep the run before left behind, so that every run finds the store settled.
//
//   run_exit_bench [--runs N] [--small-files F] [--large-mb M] [--shadowbox PATH]
//   (defaults: 5 runs, 200 files, 40 MB of files that do not compress, this build)
//
// --shadowbox runs another build of the program (an older one, for a baseline).
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../e2e/agent_harness.hpp"

namespace fs = boost::filesystem;

namespace {

struct Args {
  int runs = 5;
  int small_files = 200;
  int large_mb = 40;
  std::string shadowbox = SHADOWBOX_BIN;
};

// The bytes of the files under dir.
std::uintmax_t bytes_under(const fs::path& dir) {
  std::uintmax_t total = 0;
  for (fs::recursive_directory_iterator it(dir), end; it != end; ++it) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<std::uintmax_t>(st.st_size);
    }
  }
  return total;
}

// Nanoseconds since the epoch, as `date +%s%N` prints them.
long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A workspace of files source-like text files and megabytes of files that do not
// compress (100 KiB each).
void make_workspace(const fs::path& ws, int files, int megabytes) {
  for (int i = 0; i < files; ++i) {
    testing_support::write_file(
        ws / ("src/d" + std::to_string(i % 10)) / ("f" + std::to_string(i)),
        "int f" + std::to_string(i) + "() { return " + std::to_string(i) + "; }\n");
  }
  std::mt19937 random(34);
  for (int i = 0; i < megabytes * 10; ++i) {
    std::string content(100 * 1024, '\0');
    for (char& c : content) c = static_cast<char>(random());
    testing_support::write_file(ws / "data" / ("blob" + std::to_string(i)), content);
  }
}

// Runs `shadowbox` args on the store; throws if it fails.
void shadowbox(const Args& args, const fs::path& ws, const fs::path& store,
               std::vector<std::string> rest) {
  std::vector<std::string> argv = {args.shadowbox, "--workspace", ws.string(), "--store",
                                   store.string()};
  argv.insert(argv.end(), rest.begin(), rest.end());
  testing_support::CommandResult r = testing_support::run_command(
      argv, ws, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"}, "", std::chrono::seconds(600));
  if (r.exit_code != 0) throw std::runtime_error("shadowbox " + rest.at(0) + " failed: " + r.err);
}

struct Figures {
  std::uintmax_t store_bytes = 0;
  std::vector<double> exit_ms;  // agent's exit to run's exit, per run
  std::vector<double> run_ms;   // the whole `run`, per run
};

// runs runs of Claude Code under `shadowbox run` on ws and its store; the figures.
Figures measure(const Args& args, const fs::path& base, const std::string& name, int files,
                int megabytes) {
  fs::path dir = base / name;
  fs::path ws = dir / "ws";
  fs::path store = dir / "store";
  make_workspace(ws, files, megabytes);
  shadowbox(args, ws, store, {"snapshot", "--tag", "start"});
  shadowbox(args, ws, store, {"maintenance"});
  Figures out;
  out.store_bytes = bytes_under(store / "repo.git");
  fs::path mark = dir / "agent-exited";
  fs::path agent = dir / "agent.sh";
  // The agent's environment is filtered: the paths are in the script itself.
  testing_support::write_file(agent,
                              "#!/bin/sh\n'" + e2e::claude_binary() +
                                  "' \"$@\"\nstatus=$?\ndate +%s%N > '" + mark.string() +
                                  "'\nexit $status\n",
                              true);
  for (int i = 0; i < args.runs; ++i) {
    std::string run = "run" + std::to_string(i);
    testing_support::write_file(dir / (run + ".json"),
                                R"({"steps":[{"tool":"Bash","id":"toolu_)" + run +
                                    R"(","input":{"command":"echo )" + run +
                                    R"( > step.txt","description":"step"}},{"text":"done"}]})");
    e2e::MockServer server(dir / (run + ".json"), dir / (run + ".log"));
    fs::path home = dir / (run + "-home");
    fs::create_directories(home);
    std::vector<std::string> env = e2e::claude_env(server, home);
    std::vector<std::string> argv = {
        args.shadowbox, "--workspace",  ws.string(), "--store", store.string(),
        "run",          "--run-id",     run,         "--agent", "claude-code",
        "--",           agent.string(), "-p",        "go",      "--dangerously-skip-permissions"};
    fs::remove(mark);
    long long started = now_ns();
    testing_support::CommandResult r =
        testing_support::run_command(argv, ws, env, "", std::chrono::seconds(600));
    long long ended = now_ns();
    if (r.exit_code != 0) throw std::runtime_error("run failed: " + r.out + r.err);
    long long agent_exited = std::stoll(testing_support::read_file(mark));
    out.exit_ms.push_back(static_cast<double>(ended - agent_exited) / 1e6);
    out.run_ms.push_back(static_cast<double>(ended - started) / 1e6);
    // What the run left for later is done before the next one starts (not timed).
    shadowbox(args, ws, store, {"maintenance"});
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double largest(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; i += 2) {
    std::string arg = argv[i];
    if (i + 1 < argc && arg == "--runs") {
      args.runs = std::atoi(argv[i + 1]);
    } else if (i + 1 < argc && arg == "--small-files") {
      args.small_files = std::atoi(argv[i + 1]);
    } else if (i + 1 < argc && arg == "--large-mb") {
      args.large_mb = std::atoi(argv[i + 1]);
    } else if (i + 1 < argc && arg == "--shadowbox") {
      args.shadowbox = argv[i + 1];
    } else {
      std::fprintf(stderr,
                   "usage: run_exit_bench [--runs N] [--small-files F] [--large-mb M] "
                   "[--shadowbox PATH]\n");
      return 2;
    }
  }
  if (args.runs < 1 || args.small_files < 1 || args.large_mb < 1) {
    std::fprintf(stderr, "run_exit_bench: --runs, --small-files and --large-mb must be >= 1\n");
    return 2;
  }
  try {
    if (!fs::exists(e2e::claude_binary())) {
      throw std::runtime_error("no Claude Code CLI at " + e2e::claude_binary() +
                               " (run scripts/setup.sh)");
    }
    testing_support::TempDir base("shadowbox-run-exit-bench");
    Figures small = measure(args, base.path(), "small", args.small_files, 0);
    Figures large = measure(args, base.path(), "large", args.small_files, args.large_mb);
    std::printf("shadowbox: %s\n", args.shadowbox.c_str());
    std::printf("Claude Code under `shadowbox run` (one Bash call, the mock API); %d runs each\n",
                args.runs);
    std::printf("%-30s %12s %16s %12s %14s\n", "store", "repo bytes", "exit->exit med", "max",
                "whole run med");
    auto row = [](const char* label, const Figures& f) {
      std::printf("%-30s %12ju %13.1f ms %9.1f ms %11.1f ms\n", label, f.store_bytes,
                  median(f.exit_ms), largest(f.exit_ms), median(f.run_ms));
    };
    std::string large_label = "large (" + std::to_string(args.large_mb) + " MB of data)";
    row("small", small);
    row(large_label.c_str(), large);
    std::printf("goal: run ends within 100 ms of its agent, at any store size\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_exit_bench: %s\n", e.what());
    return 1;
  }
}
