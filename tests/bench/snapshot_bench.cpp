// snapshot_bench — shadowbox's snapshot engine against the git CLI, in one run.
//
// Builds a synthetic workspace (default: 100,000 files in 2,000 directories, ~400 MB)
// and times, for the fsnap library in-process (scanning, and watched with inotify as
// `shadowbox run` uses it), the `shadowbox` CLI and the git CLI baseline (`git add -A
// && git commit` into a separate git dir with the same work tree):
//   first snapshot, snapshot after one file changed, snapshot with nothing changed,
//   restore of one changed file (shadowbox restore, which also takes a safety
//   checkpoint, vs `git reset --hard`).
// Prints the median of --repeat runs per case and the ratios git / shadowbox.
//
//   snapshot_bench [--files N] [--dirs N] [--file-size BYTES] [--repeat N] [--dir PATH]
//                  [--under DIR] [--checkout-only [--cold]]
// --under puts the files in the workspace's directory DIR (as a repository's are under
// src/), not in directories at its root.
// --checkout-only times only the first snapshot of a git checkout (vs `git status`);
// with --cold, each side starts with the page cache emptied (as after a reboot: the
// files come from the disk), which needs root.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/filesystem.hpp>

#include "bench_workspace.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store.hpp"
#include "test_support.hpp"

namespace fs = boost::filesystem;
using bench::check;
using bench::CliRunner;
using bench::git_in;
using bench::GitBaseline;
using bench::median;
using bench::seconds_of;
using bench::stat_floor;
using bench::text_of_size;
using testing_support::run_command;

namespace {

struct Settings {
  std::size_t files = 100000;
  std::size_t dirs = 2000;
  std::size_t file_size = 4096;  // average bytes per file
  std::size_t repeat = 5;
  std::string dir;             // where to build the workspace (default: a temporary directory)
  bool checkout_only = false;  // only the first snapshot of a git checkout
  bool cold = false;           // the page cache emptied before each first snapshot
  std::string under;           // the workspace's directory the files are in ("": its root)
};

Settings parse_settings(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--files") {
      s.files = std::stoul(value());
    } else if (arg == "--dirs") {
      s.dirs = std::stoul(value());
    } else if (arg == "--file-size") {
      s.file_size = std::stoul(value());
    } else if (arg == "--repeat") {
      s.repeat = std::max<std::size_t>(1, std::stoul(value()));
    } else if (arg == "--dir") {
      s.dir = value();
    } else if (arg == "--checkout-only") {
      s.checkout_only = true;
    } else if (arg == "--cold") {
      s.cold = true;
    } else if (arg == "--under") {
      s.under = value();
    } else {
      throw std::invalid_argument("unknown option " + arg +
                                  " (use --files, --dirs, --file-size, --repeat, --dir, "
                                  "--under, --checkout-only, --cold)");
    }
  }
  if (s.dirs == 0 || s.files == 0) throw std::invalid_argument("--files and --dirs must be > 0");
  if (s.cold && !s.checkout_only) throw std::invalid_argument("--cold goes with --checkout-only");
  if (!s.under.empty() && (s.under.front() == '/' || s.under.find("..") != std::string::npos)) {
    throw std::invalid_argument("--under names a directory inside the workspace");
  }
  return s;
}

// The workspace of these settings (see bench::build_workspace).
std::vector<std::string> build_workspace(const fs::path& root, const Settings& s) {
  if (s.under.empty()) return bench::build_workspace(root, s.files, s.dirs, s.file_size);
  std::vector<std::string> files =
      bench::build_workspace(root / s.under, s.files, s.dirs, s.file_size);
  for (std::string& f : files) f = s.under + "/" + f;
  return files;
}

// Empties the page cache (dirty pages written first), so that what is read next comes
// from the disk. Throws if this process may not.
void drop_page_cache() {
  ::sync();
  std::FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w");
  if (f == nullptr || std::fputs("3\n", f) < 0 || std::fclose(f) != 0) {
    throw std::runtime_error("--cold: cannot write /proc/sys/vm/drop_caches (run as root)");
  }
}

struct Row {
  std::string name;
  double lib = 0;
  double watched = 0;
  double cli = 0;
  double daemon = 0;
  double git = 0;
};

void print_rows(const std::vector<Row>& rows) {
  std::printf("\n%-28s %11s %11s %11s %11s %11s %9s %9s %9s %9s\n", "case", "fsnap lib",
              "lib watched", "CLI scan", "CLI daemon", "git CLI", "git/lib", "git/watch",
              "git/scan", "git/daemon");
  for (const Row& r : rows) {
    std::printf("%-28s %9.1fms %9.1fms %9.1fms %9.1fms %9.1fms %8.1fx %8.1fx %8.1fx %8.1fx\n",
                r.name.c_str(), r.lib * 1000, r.watched * 1000, r.cli * 1000, r.daemon * 1000,
                r.git * 1000, r.git / r.lib, r.git / r.watched, r.git / r.cli, r.git / r.daemon);
  }
}

// The first snapshot of a git checkout against `git status` on it: the workspace
// becomes a checkout (its files committed and packed, as a clone's are; a few edited,
// a few untracked), then each shadowbox side takes a first snapshot into a fresh store.
void checkout_first_snapshot(const fs::path& base, const fs::path& workspace,
                             const std::vector<std::string>& files, const Settings& s) {
  auto git = [&](std::vector<std::string> args) { return git_in(workspace, std::move(args)); };
  double setup = seconds_of([&] {
    check(git({"init", "-q"}), "git init");
    check(git({"config", "feature.manyFiles", "true"}), "git config");
    check(git({"config", "core.untrackedCache", "true"}), "git config");
    check(git({"config", "gc.auto", "0"}), "git config");
    check(git({"add", "-A"}), "git add -A");
    check(git({"commit", "-q", "-m", "checkout"}), "git commit");
    check(git({"repack", "-adq"}), "git repack");
  });
  std::mt19937_64 rng(11);
  for (std::size_t i = 0; i < 10; ++i) {
    testing_support::write_file(workspace / files[rng() % files.size()],
                                text_of_size(rng, s.file_size));
    testing_support::write_file(workspace / ("untracked-" + std::to_string(i) + ".txt"),
                                text_of_size(rng, s.file_size));
  }
  // Twice: the first status refreshes the index and writes the untracked cache.
  check(git({"status", "--porcelain"}), "git status");
  check(git({"status", "--porcelain"}), "git status");
  std::printf(
      "\nfirst snapshot of a git checkout (committed and packed in %.1f s; 10 files "
      "edited, 10 untracked)%s:\n",
      setup, s.cold ? ", each side with the page cache emptied" : "");

  std::vector<double> status_t, lib_t, cli_t, read_all_t;
  testing_support::write_file(base / "no-daemon.yaml", "watch: {daemon: off}\n");
  auto cold = [&] {
    if (s.cold) drop_page_cache();
  };
  for (std::size_t i = 0; i < s.repeat; ++i) {
    std::string n = std::to_string(i);
    cold();
    status_t.push_back(seconds_of([&] { check(git({"status", "--porcelain"}), "git status"); }));
    cold();
    lib_t.push_back(seconds_of([&] {
      fsnap::HostFilesystem fresh(fsnap::Store::open(base / ("checkout-lib-" + n), workspace, true),
                                  fsnap::CaptureOptions{});
      fresh.checkpoint({});
    }));
    CliRunner cli{base / ("checkout-cli-" + n), workspace, base / "no-daemon.yaml"};
    cold();
    cli_t.push_back(seconds_of([&] { cli.snapshot(); }));
    if (i == 0) {  // once: the same capture reading every file, for scale
      fsnap::CaptureOptions read_all;
      read_all.use_git_index = false;
      cold();
      read_all_t.push_back(seconds_of([&] {
        fsnap::HostFilesystem fresh(fsnap::Store::open(base / "checkout-read-all", workspace, true),
                                    read_all);
        fresh.checkpoint({});
      }));
    }
  }
  double status = median(status_t);
  std::printf("  git status:                        %9.1fms\n", status * 1000);
  std::printf("  fsnap lib, from the index:         %9.1fms  (%.2fx git status)\n",
              median(lib_t) * 1000, median(lib_t) / status);
  std::printf("  shadowbox CLI, from the index:     %9.1fms  (%.2fx git status)\n",
              median(cli_t) * 1000, median(cli_t) / status);
  std::printf("  fsnap lib, reading every file (1): %9.1fms  (%.2fx git status)\n",
              read_all_t.front() * 1000, read_all_t.front() / status);
}

// The five sides measured on one workspace: the library scanning, the library watched,
// the CLI scanning (no daemon), the CLI through the watch daemon, and git.
struct Sides {
  Sides(const fs::path& base, const fs::path& workspace)
      : lib(fsnap::Store::open(base / "store-lib", workspace, true), fsnap::CaptureOptions{}),
        watched(fsnap::Store::open(base / "store-watched", workspace, true),
                fsnap::CaptureOptions{}),
        cli{base / "store-cli", workspace, base / "no-daemon.yaml"},
        daemon{base / "store-daemon", workspace, {}},
        git{base / "baseline.git", workspace} {}
  fsnap::HostFilesystem lib;
  fsnap::HostFilesystem watched;
  CliRunner cli;
  CliRunner daemon;
  GitBaseline git;
};

// Each side's first snapshot; then the daemon is waited for and its own first capture
// taken (a walk with the stat cache the CLI's scan wrote).
Row first_snapshots(Sides& x) {
  Row first{"first snapshot"};
  first.lib = seconds_of([&] { x.lib.checkpoint({}); });
  first.watched = seconds_of([&] { x.watched.checkpoint({}); });
  first.cli = seconds_of([&] { x.cli.snapshot(); });
  // The first command that captures starts the daemon and scans; the daemon's own
  // first capture reads the stat cache that scan wrote.
  first.daemon = seconds_of([&] { x.daemon.snapshot(); });
  first.git = seconds_of([&] { x.git.snapshot(); });
  for (int i = 0;
       i < 50 && x.daemon.run({"--json", "daemon", "status"}).out.find("\"running\":true") ==
                     std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  x.daemon.snapshot();  // the daemon's first capture: a walk with the stat cache
  return first;
}

// The median snapshot of each side over repeat runs, change() before each run.
Row snapshots(Sides& x, const char* name, std::size_t repeat, const std::function<void()>& change) {
  std::vector<double> lib_t, watched_t, cli_t, daemon_t, git_t;
  for (std::size_t i = 0; i < repeat; ++i) {
    change();
    lib_t.push_back(seconds_of([&] { x.lib.checkpoint({}); }));
    watched_t.push_back(seconds_of([&] { x.watched.checkpoint({}); }));
    cli_t.push_back(seconds_of([&] { x.cli.snapshot(); }));
    daemon_t.push_back(seconds_of([&] { x.daemon.snapshot(); }));
    git_t.push_back(seconds_of([&] { x.git.snapshot(); }));
  }
  return {name, median(lib_t), median(watched_t), median(cli_t), median(daemon_t), median(git_t)};
}

// Every side has the current state as its latest snapshot; one file is changed and put
// back, once per side, repeat times.
Row restores(Sides& x, const fs::path& workspace, const std::vector<std::string>& files,
             std::size_t repeat, std::mt19937_64& rng,
             const std::function<void(const std::string&)>& change_one) {
  fsnap::Checkpoint lib_target = x.lib.checkpoint({});
  fsnap::Checkpoint watched_target = x.watched.checkpoint({});
  std::string cli_target = x.cli.snapshot();
  std::string daemon_target = x.daemon.snapshot();
  x.git.snapshot();
  std::vector<double> lib_t, watched_t, cli_t, daemon_t, git_t;
  for (std::size_t i = 0; i < repeat; ++i) {
    const std::string& victim = files[rng() % files.size()];
    std::string original = testing_support::read_file(workspace / victim);
    change_one(victim);
    lib_t.push_back(seconds_of([&] { x.lib.restore_checkpoint(lib_target, {}); }));
    change_one(victim);
    watched_t.push_back(seconds_of([&] { x.watched.restore_checkpoint(watched_target, {}); }));
    change_one(victim);
    cli_t.push_back(seconds_of([&] { check(x.cli.run({"restore", cli_target}), "restore"); }));
    change_one(victim);
    daemon_t.push_back(seconds_of([&] {
      check(x.daemon.run({"restore", daemon_target}), "restore");
    }));
    change_one(victim);
    git_t.push_back(seconds_of([&] { x.git.restore_head(); }));
    if (testing_support::read_file(workspace / victim) != original) {
      throw std::runtime_error("restore did not bring back " + victim);
    }
  }
  return {"restore one changed file", median(lib_t), median(watched_t), median(cli_t),
          median(daemon_t),           median(git_t)};
}

// The four cases on the five sides, as rows.
std::vector<Row> measure_sides(const fs::path& base, const fs::path& workspace,
                               const std::vector<std::string>& files, const Settings& s) {
  testing_support::write_file(base / "no-daemon.yaml", "watch: {daemon: off}\n");
  Sides x(base, workspace);
  x.watched.watch();
  check(run_command({"git", "init", "-q", "--bare", x.git.git_dir.string()}), "git init");
  std::vector<Row> rows;
  rows.push_back(first_snapshots(x));
  std::mt19937_64 rng(7);
  auto change_one = [&](const std::string& rel) {
    testing_support::write_file(workspace / rel, text_of_size(rng, s.file_size));
  };
  rows.push_back(snapshots(x, "snapshot, one file changed", s.repeat,
                           [&] { change_one(files[rng() % files.size()]); }));
  rows.push_back(snapshots(x, "snapshot, nothing changed", s.repeat, [] {}));
  rows.push_back(restores(x, workspace, files, s.repeat, rng, change_one));
  check(x.daemon.run({"daemon", "stop"}), "shadowbox daemon stop");
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Settings s = parse_settings(argc, argv);
    std::optional<testing_support::TempDir> temp;
    fs::path base = bench::bench_base(s.dir, "shadowbox-bench", temp);
    fs::path workspace = base / "workspace";
    fs::create_directories(workspace);

    std::vector<std::string> files;
    double gen = seconds_of([&] { files = build_workspace(workspace, s); });
    std::uintmax_t bytes = 0;
    for (const std::string& f : files) bytes += fs::file_size(workspace / f);
    std::printf("workspace: %zu files in %zu directories%s%s, %.1f MB (generated in %.1f s)\n",
                files.size(), s.dirs, s.under.empty() ? "" : " under ", s.under.c_str(),
                static_cast<double>(bytes) / 1e6, gen);
    std::printf("median of %zu run(s) per case; %u hardware threads\n", s.repeat,
                std::thread::hardware_concurrency());
    std::fflush(stdout);
    if (s.checkout_only) {
      checkout_first_snapshot(base, workspace, files, s);
      return 0;
    }
    print_rows(measure_sides(base, workspace, files, s));
    checkout_first_snapshot(base, workspace, files, s);
    std::vector<double> floor_t;
    for (std::size_t i = 0; i < s.repeat; ++i) floor_t.push_back(stat_floor(workspace));
    std::printf("\nreference: one fstatat per entry on %u threads, nothing else: %.1fms\n",
                std::thread::hardware_concurrency(), median(floor_t) * 1000);
    std::printf(
        "\nfsnap lib: HostFilesystem in-process; lib watched: the same after watch() (inotify), "
        "as in\n`shadowbox run`; CLI scan: one process per snapshot, watch.daemon off; CLI "
        "daemon: the same\nwith the watch daemon (warm); git CLI: `git add -A && git commit` / "
        "`git reset --hard` with a\nseparate git dir, feature.manyFiles and the untracked cache.\n"
        "shadowbox's restore also takes a safety checkpoint first; git's does not.\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "snapshot_bench: %s\n", e.what());
    return 1;
  }
}
