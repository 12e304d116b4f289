// fleet_bench — N simulated workers (processes) against one Redis and one git remote,
// all on loopback: each claims a run, records K tool boundaries (a file changed, a
// checkpoint with its ledger note) and has them pushed by its FleetMember, async or
// sync. Prints per mode and N: the p50/p99 latency of a boundary as the worker sees it
// (checkpoint + hand-over to the fleet; sync: + the push), per boundary the Redis calls
// (round trips) and commands (those its Lua scripts run included) and the bytes the
// remote grew by, and the boundaries the fleet records per second.
//
//   fleet_bench [--workers 1,4,16,32] [--boundaries K] [--files F] [--modes async,sync]
//               [--transport path|git]
//
// (git: the remote is served by `git daemon` on loopback, a network transport.)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/filesystem.hpp>

#include "fleet/fleet_member.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store.hpp"
#include "loopback_services.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<int> workers = {1, 4, 16, 32};
  int boundaries = 40;
  int files = 200;
  std::vector<std::string> modes = {"async", "sync"};
  std::string transport = "path";
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

std::uintmax_t dir_size(const fs::path& dir) {
  std::uintmax_t total = 0;
  for (fs::recursive_directory_iterator it(dir), end; it != end; ++it) {
    if (fs::is_regular_file(it->status())) total += fs::file_size(it->path());
  }
  return total;
}

// Redis's counts so far: the commands clients sent (round trips) and every command it
// ran, those inside the Lua scripts included.
struct RedisCounts {
  long calls = 0;
  long commands = 0;
};

RedisCounts redis_counts(const testing_support::RedisServer& redis) {
  RedisCounts out;
  std::istringstream in(redis.cli({"INFO", "commandstats"}));
  for (std::string line; std::getline(in, line);) {
    // cmdstat_<name>:calls=N,...
    std::size_t colon = line.find(':');
    if (line.rfind("cmdstat_", 0) != 0 || colon == std::string::npos) continue;
    std::string name = line.substr(8, colon - 8);
    long calls = std::stol(line.substr(line.find("calls=") + 6));
    if (name == "info" || name == "flushall" || name == "config") continue;
    out.commands += calls;
    for (const char* sent : {"evalsha", "eval", "hgetall", "pttl", "zscore", "zrevrange", "hmget",
                             "ping", "select", "auth"}) {
      if (name == sent) out.calls += calls;
    }
  }
  return out;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t i = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(i, values.size() - 1)];
}

// One worker's life, in its own process: writes its latencies (µs) to out.
int work(const fs::path& dir, int index, const Options& options, bool sync,
         const std::string& redis_url, const std::string& remote) {
  fs::path ws = dir / "ws";
  fsnap::Store store = fsnap::Store::open(dir / "store", ws, true);
  fsnap::HostFilesystem host(store, {});
  std::string run = "bench-" + std::to_string(index);
  host.checkpoint({.phase = fsnap::Phase::kCheckpoint, .run = run});
  fleet::FleetSettings settings;
  settings.redis = redis_url;
  settings.remote = remote;
  settings.worker_id = "worker-" + std::to_string(index);
  settings.lease_ttl = std::chrono::seconds(30);
  settings.sync_push = sync;
  fleet::FleetMember member({settings, store, run, ws.string(), nullptr,
                             [](const std::string& w) { std::fprintf(stderr, "%s\n", w.c_str()); }},
                            fleet::FleetMember::Join::kClaim);
  std::ofstream out((dir / "latencies").string());
  for (int k = 0; k < options.boundaries; ++k) {
    testing_support::write_file(ws / ("f" + std::to_string(k % options.files) + ".txt"),
                                "changed at boundary " + std::to_string(k) + "\n");
    auto start = Clock::now();
    host.checkpoint(
        {.phase = fsnap::Phase::kPostTool,
         .tool_call_id = "call-" + std::to_string(k),
         .tool_name = "Bash",
         .run = run},
        [&](const fsnap::Checkpoint& c) {
          return std::vector<fsnap::Note>{
              {c.commit, "{\"run\":\"" + run + "\",\"step\":" + std::to_string(k) + "}"}};
        });
    member.boundary_recorded();
    out << std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count()
        << '\n';
  }
  member.finish();
  return 0;
}

// The options of the command line; nullopt (after a usage line) if they are wrong.
std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 < argc && arg == "--workers") {
      options.workers.clear();
      for (const std::string& n : split(argv[++i])) options.workers.push_back(std::stoi(n));
    } else if (i + 1 < argc && arg == "--boundaries") {
      options.boundaries = std::stoi(argv[++i]);
    } else if (i + 1 < argc && arg == "--files") {
      options.files = std::stoi(argv[++i]);
    } else if (i + 1 < argc && arg == "--modes") {
      options.modes = split(argv[++i]);
    } else if (i + 1 < argc && arg == "--transport") {
      options.transport = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: fleet_bench [--workers 1,4,16,32] [--boundaries K] [--files F] "
                   "[--modes async,sync] [--transport path|git]\n");
      return std::nullopt;
    }
  }
  return options;
}

// n workers' workspaces under round, files files each.
void write_workspaces(const fs::path& round, int n, int files) {
  for (int w = 0; w < n; ++w) {
    fs::path ws = round / ("w" + std::to_string(w)) / "ws";
    for (int f = 0; f < files; ++f) {
      testing_support::write_file(
          ws / ("f" + std::to_string(f) + ".txt"),
          "file " + std::to_string(f) + " of worker " + std::to_string(w) + "\n");
    }
  }
}

// Runs n workers, each a process of its own, and waits for them; how many failed.
int run_workers(const fs::path& round, int n, const Options& options, bool sync,
                const std::string& redis_url, const std::string& remote) {
  std::fflush(nullptr);  // nothing buffered is written again by the children
  std::vector<pid_t> children;
  for (int w = 0; w < n; ++w) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int rc = 1;
      try {
        rc = work(round / ("w" + std::to_string(w)), w, options, sync, redis_url, remote);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "worker %d: %s\n", w, e.what());
      }
      std::fflush(nullptr);
      ::_exit(rc);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  return failed;
}

// Every boundary's latency of n workers, in milliseconds.
std::vector<double> read_latencies(const fs::path& round, int n) {
  std::vector<double> latencies;
  for (int w = 0; w < n; ++w) {
    std::ifstream in((round / ("w" + std::to_string(w)) / "latencies").string());
    for (double us; in >> us;) latencies.push_back(us / 1000.0);
  }
  return latencies;
}

// One round (a mode, n workers) on a fresh remote; prints its row. false if a worker
// failed.
bool run_round(const fs::path& round, const std::string& mode, int n, const Options& options,
               testing_support::RedisServer& redis) {
  fs::path remote_dir = round / "remote.git";
  fs::create_directories(round);
  testing_support::init_bare_remote(remote_dir);
  std::unique_ptr<testing_support::GitDaemon> daemon;
  std::string remote = remote_dir.string();
  if (options.transport == "git") {
    daemon = std::make_unique<testing_support::GitDaemon>(round);
    remote = daemon->url("remote.git");
  }
  write_workspaces(round, n, options.files);
  redis.cli({"FLUSHALL"});
  redis.cli({"CONFIG", "RESETSTAT"});
  std::uintmax_t remote_before = dir_size(remote_dir);
  auto started = Clock::now();
  int failed = run_workers(round, n, options, mode == "sync", redis.url(), remote);
  double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  RedisCounts counts = redis_counts(redis);
  std::uintmax_t pushed = dir_size(remote_dir) - remote_before;
  std::vector<double> latencies = read_latencies(round, n);
  double boundaries = static_cast<double>(n) * options.boundaries;
  std::printf("%-6s %7d %10.2f %10.2f %13.2f %12.2f %15.0f %13.0f%s\n", mode.c_str(), n,
              percentile(latencies, 0.5), percentile(latencies, 0.99),
              static_cast<double>(counts.calls) / boundaries,
              static_cast<double>(counts.commands) / boundaries,
              static_cast<double>(pushed) / boundaries, boundaries / seconds,
              failed != 0 ? "  (workers failed!)" : "");
  std::fflush(stdout);
  return failed == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options = parse_options(argc, argv);
  if (!options) return 2;
  testing_support::TempDir temp;
  testing_support::RedisServer redis(temp.path());
  std::printf(
      "%d boundaries per worker, %d files per workspace, remote by %s; one Redis, "
      "one remote, all on loopback\n",
      options->boundaries, options->files, options->transport.c_str());
  std::printf("%-6s %7s %10s %10s %13s %12s %15s %13s\n", "mode", "workers", "p50 (ms)", "p99 (ms)",
              "redis calls/b", "redis cmds/b", "bytes pushed/b", "boundaries/s");
  for (const std::string& mode : options->modes) {
    for (int n : options->workers) {
      fs::path round = temp.path() / (mode + "-" + std::to_string(n));
      if (!run_round(round, mode, n, *options, redis)) return 1;
    }
  }
  return 0;
}
