// store_growth_bench — what a long run costs the store (issue: a store that stays
// small). Runs N tool calls through `shadowbox hook claude-code` as hooks installed by
// hand would answer them (a PreToolUse and a PostToolUse event each, one small edit per
// call) on a workspace of F files, then ends the agent's session (SessionEnd), with
// automatic maintenance on, and prints:
//   the store's size before, at the last call and after (bytes on disk), and per call;
//   the loose objects left once the maintenance the session's end started is done;
//   the size of the ledger note of call 10 and of call N;
//   the time of a call (both checkpoints), the median over the first and the last tenth
//   of the calls (at least 10; a maintenance running beside a call slows it).
//
//   store_growth_bench [--calls N] [--files F] [--dir PATH] [--keep-peak 1]
//
// With --keep-peak 1 (and --dir), a copy of the store as it was at its largest is left in
// PATH/store-peak, for a look at where its bytes go, and PATH/store-trace has a line per
// call: the call, the store's bytes, its loose objects, the files and bytes of its pack
// directory, and the call's time in ms.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/filesystem.hpp>

#include "fsnap/maintenance.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "test_support.hpp"

namespace fs = boost::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// The blocks of every file below dir, in bytes. A file or directory a maintenance
// removes while it is counted (a loose object packed, an old pack, an empty fan-out
// directory) counts as gone.
std::uintmax_t disk_usage(const fs::path& dir) {
  std::uintmax_t total = 0;
  boost::system::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    total += static_cast<std::uintmax_t>(st.st_blocks) * 512;
    if (S_ISDIR(st.st_mode)) total += disk_usage(it->path());
  }
  return total;
}

struct Args {
  int calls = 1000;
  int files = 10000;
  fs::path dir;
  bool keep_peak = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--calls") {
      a.calls = std::atoi(argv[i + 1]);
    } else if (k == "--files") {
      a.files = std::atoi(argv[i + 1]);
    } else if (k == "--dir") {
      a.dir = argv[i + 1];
    } else if (k == "--keep-peak") {
      a.keep_peak = std::atoi(argv[i + 1]) != 0;
    } else {
      throw std::runtime_error("unknown option " + k);
    }
  }
  if (a.calls < 10 || a.files < 10) throw std::runtime_error("--calls and --files: at least 10");
  return a;
}

void shadowbox(const fs::path& ws, const fs::path& store, std::vector<std::string> args) {
  std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws.string(), "--store",
                                   store.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  testing_support::CommandResult r =
      testing_support::run_command(argv, ws, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  if (r.exit_code != 0) throw std::runtime_error("shadowbox " + args.at(0) + ": " + r.err);
}

std::size_t note_size(const fs::path& store, const fs::path& ws, const std::string& ref) {
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store / "repo.git", false);
  (void)ws;
  return repo.note(repo.resolve(ref).commit).value_or("").size();
}

// Sends one Claude Code hook event (its name and extra fields) to `shadowbox hook`.
void hook(const fs::path& ws, const fs::path& store, const std::string& name,
          const std::string& fields) {
  std::string event = "{\"hook_event_name\":\"" + name +
                      "\",\"session_id\":\"bench\",\"transcript_path\":\"\",\"cwd\":\"" +
                      ws.string() + "\"" + fields + "}";
  testing_support::CommandResult r = testing_support::run_command(
      {SHADOWBOX_BIN, "--workspace", ws.string(), "--store", store.string(), "hook", "claude-code"},
      ws, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1", "CLAUDE_PROJECT_DIR=" + ws.string()},
      event);
  if (r.exit_code != 0) throw std::runtime_error("shadowbox hook " + name + ": " + r.err);
}

std::size_t loose_objects(const fs::path& store) {
  std::size_t n = 0;
  boost::system::error_code ec;
  fs::directory_iterator end;
  for (fs::directory_iterator dir(store / "repo.git" / "objects", ec); !ec && dir != end;
       dir.increment(ec)) {
    if (dir->path().filename().string().size() != 2) continue;
    boost::system::error_code inner;  // a fan-out directory a maintenance removes: none
    for (fs::directory_iterator it(dir->path(), inner); !inner && it != end; it.increment(inner)) {
      ++n;
    }
  }
  return n;
}

// Runs `shadowbox maintenance`; whether it ran (no other one held the store).
bool ran_maintenance(const fs::path& ws, const fs::path& store) {
  testing_support::CommandResult r =
      testing_support::run_command({SHADOWBOX_BIN, "--workspace", ws.string(), "--store",
                                    store.string(), "--json", "maintenance"},
                                   ws, {"SHADOWBOX_CONFIG="});
  return r.exit_code == 0 && r.out.find("\"ran\":true") != std::string::npos;
}

// Returns once no maintenance of the store is running (packing or merging).
void wait_for_maintenance(const fs::path& store, const fs::path& ws) {
  fsnap::Store opened = fsnap::Store::open(store, ws, false);
  fsnap::MaintenanceLock::acquire(opened, /*wait=*/true);
}

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// calls edits of one file each through hook processes (PreToolUse, the edit,
// PostToolUse); each call's time in ms.
// The largest the store was after any call, and after which (sampled after each call,
// outside its time).
struct Peak {
  std::uintmax_t bytes = 0;
  int call = 0;
  fs::path copy;  // where to copy the store at its largest, if anywhere
};

std::vector<double> edit_calls(const fs::path& ws, const fs::path& store, int calls, int files,
                               Peak& peak) {
  std::vector<double> call_ms;
  for (int i = 1; i <= calls; ++i) {
    std::string id = "toolu_" + std::to_string(i);
    std::string file = "d" + std::to_string(i % 100) + "/f" + std::to_string(i % files);
    std::string tool = ",\"tool_name\":\"Edit\",\"tool_use_id\":\"" + id +
                       "\",\"tool_input\":{\"file_path\":\"" + file + "\"}";
    Clock::time_point start = Clock::now();
    hook(ws, store, "PreToolUse", tool);
    testing_support::write_file(ws / file, "line " + std::to_string(i) + " edited by " + id + "\n");
    hook(ws, store, "PostToolUse", tool + ",\"tool_response\":{\"ok\":true}");
    call_ms.push_back(ms(Clock::now() - start));
    std::uintmax_t now = disk_usage(store);
    if (!peak.copy.empty()) {
      // The trace: call, store, loose objects, the pack directory's files and bytes.
      std::FILE* trace = std::fopen((peak.copy.parent_path() / "store-trace").c_str(), "a");
      std::size_t pack_files = 0;
      boost::system::error_code ec;
      fs::path pack_dir = store / "repo.git" / "objects" / "pack";
      for (fs::directory_iterator it(pack_dir, ec), end; !ec && it != end; it.increment(ec)) {
        ++pack_files;
      }
      std::fprintf(trace, "%d %ju %zu %zu %ju %.1f\n", i, now, loose_objects(store), pack_files,
                   disk_usage(pack_dir), call_ms.back());
      std::fclose(trace);
    }
    if (now > peak.bytes) {
      peak.bytes = now;
      peak.call = i;
      if (!peak.copy.empty()) {
        fs::remove_all(peak.copy);
        testing_support::run_command({"cp", "-a", store.string(), peak.copy.string()}, ws);
      }
    }
  }
  return call_ms;
}

// The size of a copy of store after `git gc` (under dir).
std::uintmax_t git_gc_size(const fs::path& dir, const fs::path& store) {
  fs::path copy = dir / "store-git-gc";
  testing_support::run_command({"cp", "-a", store.string(), copy.string()}, dir);
  testing_support::run_command({"git", "--git-dir", (copy / "repo.git").string(), "-c", "gc.auto=0",
                                "gc", "--quiet", "--prune=now"},
                               dir);
  return disk_usage(copy);
}

// The median of values[from, to).
double median_of(const std::vector<double>& values, std::size_t from, std::size_t to) {
  std::vector<double> part(values.begin() + static_cast<std::ptrdiff_t>(from),
                           values.begin() + static_cast<std::ptrdiff_t>(to));
  std::nth_element(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(part.size() / 2),
                   part.end());
  return part[part.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  Args args = parse(argc, argv);
  std::unique_ptr<testing_support::TempDir> temp;
  if (args.dir.empty()) {
    temp = std::make_unique<testing_support::TempDir>();
    args.dir = temp->path();
  }
  fs::path ws = args.dir / "ws";
  fs::path store = args.dir / "store";
  for (int i = 0; i < args.files; ++i) {
    testing_support::write_file(ws / ("d" + std::to_string(i % 100)) / ("f" + std::to_string(i)),
                                "line " + std::to_string(i) + "\n");
  }
  shadowbox(ws, store, {"snapshot", "--tag", "baseline"});
  // Packed for a fair start: a maintenance the snapshot started may hold the lock, so
  // until one of ours has run.
  for (int i = 0; i < 600 && !ran_maintenance(ws, store); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::uintmax_t before = disk_usage(store);
  Peak peak;
  if (args.keep_peak) peak.copy = args.dir / "store-peak";
  std::vector<double> call_ms = edit_calls(ws, store, args.calls, args.files, peak);
  // Before the session ends, once a maintenance that may be running has finished.
  wait_for_maintenance(store, ws);
  std::uintmax_t during = disk_usage(store);
  hook(ws, store, "SessionEnd", ",\"reason\":\"other\"");
  // The maintenance the session's end started (detached) packs what is loose: wait for
  // it to start, then to finish.
  for (int i = 0; i < 600 && loose_objects(store) > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  wait_for_maintenance(store, ws);
  std::size_t loose_left = loose_objects(store);
  std::uintmax_t after = disk_usage(store);
  // The baseline: `git gc` on a copy of the same store.
  std::uintmax_t git_gc = git_gc_size(args.dir, store);
  auto median = [&](std::size_t from, std::size_t to) { return median_of(call_ms, from, to); };

  std::size_t n = call_ms.size();
  std::size_t note10 = note_size(store, ws, "post:toolu_10");
  std::size_t note_last = note_size(store, ws, "post:toolu_" + std::to_string(args.calls));
  std::printf(
      "store_growth_bench: %d tool calls (%d checkpoints) through hook processes, %d files, "
      "automatic maintenance\n",
      args.calls, 2 * args.calls, args.files);
  std::printf("  store before        %10.2f MB\n", static_cast<double>(before) / 1e6);
  std::printf("  store at call %-6d%10.2f MB  (growth %.2f MB, before the session ends)\n",
              args.calls, static_cast<double>(during) / 1e6,
              (static_cast<double>(during) - static_cast<double>(before)) / 1e6);
  std::printf("  store at its largest%10.2f MB  (growth %.2f MB, after call %d)\n",
              static_cast<double>(peak.bytes) / 1e6,
              (static_cast<double>(peak.bytes) - static_cast<double>(before)) / 1e6, peak.call);
  std::printf("  store after         %10.2f MB\n", static_cast<double>(after) / 1e6);
  double growth = static_cast<double>(after) - static_cast<double>(before);
  std::printf("  growth              %10.2f MB  (%.1f KB per call)\n", growth / 1e6,
              growth / 1e3 / args.calls);
  std::printf("  loose objects left  %10zu\n", loose_left);
  std::printf("  git gc on a copy    %10.2f MB  (store / git gc: %.2fx)\n",
              static_cast<double>(git_gc) / 1e6,
              static_cast<double>(after) / static_cast<double>(git_gc));
  std::printf("  note of call 10     %10zu bytes\n", note10);
  std::printf("  note of call %-6d %10zu bytes  (%.1fx call 10)\n", args.calls, note_last,
              static_cast<double>(note_last) / static_cast<double>(note10));
  std::size_t tenth = std::max<std::size_t>(10, n / 10);
  std::printf("  call, first %-5zu   %10.1f ms  (median)\n", tenth, median(0, tenth));
  std::printf("  call, last %-5zu    %10.1f ms  (median, %.2fx)\n", tenth, median(n - tenth, n),
              median(n - tenth, n) / median(0, tenth));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "store_growth_bench: %s\n", e.what());
  return 1;
}
