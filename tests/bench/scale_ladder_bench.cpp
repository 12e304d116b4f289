// scale_ladder_bench — the scale ladder of issue 37: shadowbox against git on the same
// files, rung by rung, in one run.
//
//   A  N files in N/20 directories (default 500,000), as a git checkout;
//   B  2,000 tracked files and 270,000 untracked ones in an ignored node_modules/;
//   C  a few hundred files and 20 large binaries (2 GB in all), a plain tree;
//   D  a git worktree (`.git` is a file), and a repository with a submodule.
//
// For each workspace: the first snapshot (of a checkout against `git status`; the same
// files read as a plain tree against `git add -A && git commit`); a boundary as `run`
// takes it (in process, watched), as a hook process takes it through the watch daemon
// (`shadowbox-hook`), and `shadowbox snapshot` through the daemon, each against an
// incremental `git add -A && git commit`; the restore of one changed file against
// `git reset --hard`; the daemon's resident memory per file; the store's size against
// `git gc` of the baseline's history of the same states; and the p99 of a boundary
// while `shadowbox maintenance` runs beside it, again and again. Each goal of the issue
// is printed beside its figure. Each rung's directory is removed once it is measured,
// so the run needs the disk of one rung at a time.
//
//   scale_ladder_bench [--rungs ABCD] [--files-a N] [--tracked-b N] [--untracked-b N]
//                      [--files-c N] [--binaries-c N] [--bytes-c N] [--files-d N]
//                      [--file-size BYTES] [--repeat N] [--boundaries N] [--dir PATH]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <boost/filesystem.hpp>

#include "bench_workspace.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store.hpp"
#include "test_support.hpp"

namespace fs = boost::filesystem;
using bench::check;
using bench::git_in;
using bench::median;
using bench::percentile;
using bench::seconds_of;
using bench::text_of_size;

namespace {

struct Settings {
  std::string rungs = "ABCD";
  std::size_t files_a = 500000;
  std::size_t tracked_b = 2000;
  std::size_t untracked_b = 270000;
  std::size_t files_c = 300;
  std::size_t binaries_c = 20;
  std::uint64_t bytes_c = 2'000'000'000;
  std::size_t files_d = 20000;
  std::size_t file_size = 4096;  // average bytes of a source file
  std::size_t repeat = 5;        // runs per median
  std::size_t boundaries = 100;  // boundaries per p99
  std::string dir;
};

Settings parse_settings(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
    std::string value = argv[++i];
    auto number = [&] { return static_cast<std::size_t>(std::stoull(value)); };
    if (arg == "--rungs") {
      s.rungs = value;
    } else if (arg == "--files-a") {
      s.files_a = number();
    } else if (arg == "--tracked-b") {
      s.tracked_b = number();
    } else if (arg == "--untracked-b") {
      s.untracked_b = number();
    } else if (arg == "--files-c") {
      s.files_c = number();
    } else if (arg == "--binaries-c") {
      s.binaries_c = number();
    } else if (arg == "--bytes-c") {
      s.bytes_c = number();
    } else if (arg == "--files-d") {
      s.files_d = number();
    } else if (arg == "--file-size") {
      s.file_size = number();
    } else if (arg == "--repeat") {
      s.repeat = std::max<std::size_t>(1, number());
    } else if (arg == "--boundaries") {
      s.boundaries = std::max<std::size_t>(1, number());
    } else if (arg == "--dir") {
      s.dir = value;
    } else {
      throw std::invalid_argument("unknown option " + arg +
                                  " (use --rungs, --files-a, --tracked-b, --untracked-b, "
                                  "--files-c, --binaries-c, --bytes-c, --files-d, --file-size, "
                                  "--repeat, --boundaries, --dir)");
    }
  }
  if (s.files_a < 20 || s.tracked_b < 20 || s.untracked_b < 20 || s.files_c < 1 || s.files_d < 40 ||
      s.binaries_c < 1) {
    throw std::invalid_argument(
        "each rung needs some files (--files-a, --tracked-b, "
        "--untracked-b, --files-d: at least 40; --files-c: 1)");
  }
  return s;
}

// Bytes on disk under path (blocks, as du counts them).
std::uintmax_t disk_usage(const fs::path& path) {
  std::uintmax_t total = 0;
  boost::system::error_code ec;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0) {
      total += static_cast<std::uintmax_t>(st.st_blocks) * 512;
    }
  }
  return total;
}

// One workspace of the ladder, built.
struct Workspace {
  std::string name;         // "A", "B", "C", "D worktree", "D submodule"
  std::string description;  // for the report
  fs::path root;
  std::vector<std::string> editable;  // files an agent edits (relative)
  std::size_t entries = 0;            // files in it, for memory per file
  bool checkout = false;              // a git checkout (`git status` is the baseline)
};

// Makes dir a git checkout of what is in it (committed and packed, as a clone's are),
// with feature.manyFiles and the untracked cache as a large repository sets them.
void make_checkout(const fs::path& dir) {
  check(git_in(dir, {"init", "-q"}), "git init");
  for (auto [key, value] : {std::pair{"feature.manyFiles", "true"},
                            std::pair{"core.untrackedCache", "true"}, std::pair{"gc.auto", "0"}}) {
    check(git_in(dir, {"config", key, value}), "git config");
  }
  check(git_in(dir, {"add", "-A"}), "git add -A");
  check(git_in(dir, {"commit", "-q", "-m", "checkout"}), "git commit");
  // No delta search: the synthetic files share no content worth a delta, and at 500,000
  // files the search alone takes many minutes.
  check(git_in(dir, {"repack", "-adq", "--window=0"}), "git repack");
}

// A few files edited and a few untracked ones added, as a checkout in use has.
void touch_checkout(const Workspace& w, std::size_t file_size) {
  std::mt19937_64 rng(11);
  for (std::size_t i = 0; i < 10; ++i) {
    testing_support::write_file(w.root / w.editable[rng() % w.editable.size()],
                                text_of_size(rng, file_size));
    testing_support::write_file(w.root / ("untracked-" + std::to_string(i) + ".txt"),
                                text_of_size(rng, file_size));
  }
}

Workspace rung_a(const fs::path& base, const Settings& s) {
  Workspace w{"A", "", base / "ws", {}, s.files_a, true};
  w.editable = bench::build_workspace(w.root, s.files_a, s.files_a / 20, s.file_size);
  make_checkout(w.root);
  touch_checkout(w, s.file_size);
  w.entries += 10;
  w.description = std::to_string(s.files_a) + " files in " + std::to_string(s.files_a / 20) +
                  " directories, a git checkout";
  return w;
}

Workspace rung_b(const fs::path& base, const Settings& s) {
  Workspace w{"B", "", base / "ws", {}, s.tracked_b + s.untracked_b, true};
  for (const std::string& f :
       bench::build_workspace(w.root / "src", s.tracked_b, s.tracked_b / 20, s.file_size)) {
    w.editable.push_back("src/" + f);
  }
  testing_support::write_file(w.root / ".gitignore", "node_modules/\n");
  make_checkout(w.root);
  // The dependencies, installed after the clone: small files, many directories.
  bench::build_workspace(w.root / "node_modules", s.untracked_b, s.untracked_b / 20, 1024, 43);
  w.description = std::to_string(s.tracked_b) + " tracked files, " + std::to_string(s.untracked_b) +
                  " untracked in node_modules/ (.gitignore)";
  return w;
}

Workspace rung_c(const fs::path& base, const Settings& s) {
  Workspace w{"C", "", base / "ws", {}, s.files_c + s.binaries_c, false};
  w.editable = bench::build_workspace(w.root, s.files_c, std::max<std::size_t>(1, s.files_c / 20),
                                      s.file_size);
  // Binaries that do not compress (as media, archives and models do not).
  std::mt19937_64 rng(5);
  std::vector<std::uint64_t> chunk(1 << 17);
  std::uint64_t each = s.bytes_c / s.binaries_c;
  for (std::size_t i = 0; i < s.binaries_c; ++i) {
    fs::create_directories(w.root / "assets");
    std::ofstream out((w.root / "assets" / ("blob-" + std::to_string(i) + ".bin")).string(),
                      std::ios::binary);
    for (std::uint64_t done = 0; done < each;) {
      for (std::uint64_t& v : chunk) v = rng();
      auto n = static_cast<std::streamsize>(std::min<std::uint64_t>(chunk.size() * 8, each - done));
      out.write(reinterpret_cast<const char*>(chunk.data()), n);
      done += static_cast<std::uint64_t>(n);
    }
    if (!out) throw std::runtime_error("cannot write the binaries of rung C");
  }
  char what[160];
  std::snprintf(what, sizeof what, "%zu files and %zu binaries of %.1f MB (%.2f GB), a plain tree",
                s.files_c, s.binaries_c, static_cast<double>(each) / 1e6,
                static_cast<double>(s.bytes_c) / 1e9);
  w.description = what;
  return w;
}

Workspace rung_d_worktree(const fs::path& base, const Settings& s) {
  fs::path main = base / "main-checkout";
  std::vector<std::string> files =
      bench::build_workspace(main, s.files_d, s.files_d / 20, s.file_size);
  make_checkout(main);
  Workspace w{"D worktree", "", base / "ws", files, s.files_d, true};
  check(git_in(main, {"worktree", "add", "-q", w.root.string()}), "git worktree add");
  touch_checkout(w, s.file_size);
  w.entries += 10;
  w.description = std::to_string(s.files_d) + " files, a linked worktree (.git is a file)";
  return w;
}

Workspace rung_d_submodule(const fs::path& base, const Settings& s) {
  fs::path library = base / "library";
  bench::build_workspace(library, s.files_d / 2, s.files_d / 40, s.file_size, 44);
  make_checkout(library);
  Workspace w{"D submodule", "", base / "ws", {}, s.files_d, true};
  w.editable = bench::build_workspace(w.root, s.files_d / 2, s.files_d / 40, s.file_size);
  make_checkout(w.root);
  check(git_in(w.root, {"submodule", "add", "-q", library.string(), "lib"}), "git submodule add");
  check(git_in(w.root, {"commit", "-q", "-m", "the library"}), "git commit");
  touch_checkout(w, s.file_size);
  w.entries += 10;
  w.description = std::to_string(s.files_d / 2) + " files and a submodule of " +
                  std::to_string(s.files_d / 2) + " (its .git a file)";
  return w;
}

// One line of a rung's table: shadowbox's figure, git's beside it, and the goal.
struct Row {
  std::string what;
  std::string shadowbox;
  std::string git;
  std::string ratio;
  std::string goal;
};

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, seconds < 0.1 ? "%.1f ms" : "%.0f ms", seconds * 1000);
  return buf;
}

std::string mb(std::uintmax_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

std::string times(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fx", x);
  return buf;
}

std::string verdict(bool met, const std::string& goal) {
  return goal + (met ? ": met" : ": MISSED");
}

// Resident memory of a process, from /proc, in bytes: VmRSS, VmHWM, and of VmRSS the
// anonymous part (the heap) and the file-backed part (mapped files: the store's packs).
struct Resident {
  std::uint64_t rss = 0, hwm = 0, anon = 0, file = 0;
};
Resident memory_of(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  Resident out;
  for (std::string line; std::getline(status, line);) {
    std::istringstream in(line);
    std::string key;
    std::uint64_t kb = 0;
    in >> key >> kb;
    if (key == "VmRSS:") out.rss = kb * 1024;
    if (key == "VmHWM:") out.hwm = kb * 1024;
    if (key == "RssAnon:") out.anon = kb * 1024;
    if (key == "RssFile:") out.file = kb * 1024;
  }
  return out;
}

// The pid of the store's watch daemon (0 if none answers).
int daemon_pid(const bench::CliRunner& cli) {
  testing_support::CommandResult r = cli.run({"--json", "daemon", "status"});
  std::size_t at = r.out.find("\"pid\":");
  return at == std::string::npos ? 0 : std::atoi(r.out.c_str() + at + 6);
}

// One hook event as Claude Code sends it, handed to the daemon by the thin client.
void hook_event(const Workspace& w, const fs::path& store, const std::string& name,
                const std::string& call) {
  std::string event = "{\"hook_event_name\":\"" + name +
                      "\",\"session_id\":\"ladder\",\"transcript_path\":\"\",\"cwd\":\"" +
                      w.root.string() + "\",\"tool_name\":\"Edit\",\"tool_use_id\":\"" + call +
                      "\",\"tool_input\":{\"file_path\":\"x\"}" +
                      (name == "PostToolUse" ? ",\"tool_response\":{\"ok\":true}" : "") + "}";
  std::string client = (fs::path(SHADOWBOX_BIN).parent_path() / "shadowbox-hook").string();
  check(
      testing_support::run_command(
          {client, "--store", store.string(), "hook", "claude-code"}, w.root,
          {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1", "CLAUDE_PROJECT_DIR=" + w.root.string()},
          event),
      "shadowbox-hook " + name);
}

// Measures one built workspace, step by step; base holds its store and the git
// baseline. The in-process HostFilesystem (as `run` has it), the CLI and the hook
// client share the one store, as they would on a user's machine.
class RungBench {
 public:
  RungBench(const Workspace& w, const fs::path& base, const Settings& s)
      : w_(w),
        base_(base),
        s_(s),
        store_(base / "store"),
        git_{base / "baseline.git", w.root},
        cli_{base / "store", w.root, {}} {}

  std::vector<Row> run() {
    first_snapshots();
    watched_boundaries();
    daemon_boundaries();
    restores();
    daemon_memory();
    boundaries_beside_maintenance();
    check(cli_.run({"daemon", "stop"}), "shadowbox daemon stop");
    store_size();
    return std::move(rows_);
  }

 private:
  void change_one() {
    testing_support::write_file(w_.root / w_.editable[rng_() % w_.editable.size()],
                                text_of_size(rng_, s_.file_size));
  }

  // The time of a first snapshot into a fresh store (removed after) with options.
  double fresh_first(const std::string& name, fsnap::CaptureOptions options) {
    ::sync();  // (what the last measure wrote is not written back during this one)
    double t = seconds_of([&] {
      fsnap::HostFilesystem fresh(fsnap::Store::open(base_ / name, w_.root, true),
                                  std::move(options));
      fresh.checkpoint({});
    });
    fs::remove_all(base_ / name);
    return t;
  }

  // `git status` of a checkout (warm), median; 0 for a plain tree.
  double git_status() {
    if (!w_.checkout) return 0;
    // Twice first: the first status refreshes the index and writes the untracked cache.
    check(git_in(w_.root, {"status", "--porcelain"}), "git status");
    check(git_in(w_.root, {"status", "--porcelain"}), "git status");
    std::vector<double> t;
    for (std::size_t i = 0; i < s_.repeat; ++i) {
      t.push_back(seconds_of([&] { check(git_in(w_.root, {"status", "--porcelain"}), "status"); }));
    }
    return median(t);
  }

  void first_snapshots() {
    status_ = git_status();
    check(testing_support::run_command({"git", "init", "-q", "--bare", git_.git_dir.string()}),
          "git init");
    // Each first snapshot starts with the disk quiet: git's writes 2 GB of loose objects
    // at rung A, whose write-back would otherwise fall in the next measure.
    ::sync();
    double git_first = seconds_of([&] { git_.snapshot(); });
    ::sync();
    lib_.emplace(fsnap::Store::open(store_, w_.root, true), fsnap::CaptureOptions{});
    double first = seconds_of([&] { lib_->checkpoint({}); });
    double plain = first;
    if (w_.checkout) {
      fsnap::CaptureOptions read_all;
      read_all.use_git_index = false;
      plain = fresh_first("store-plain", read_all);
      rows_.push_back({"first snapshot of the checkout", ms(first), ms(status_) + " (status)",
                       times(first / status_) + " status",
                       verdict(first <= 3 * status_, "<= 3x git status")});
    }
    rows_.push_back({"first snapshot, every file read", ms(plain), ms(git_first) + " (add+commit)",
                     times(git_first / plain) + " faster",
                     verdict(git_first >= 3 * plain, ">= 3x faster than git")});
    if (w_.name == "B") {
      // What leaving the ignored dependencies out would cost instead.
      fsnap::CaptureOptions ignoring;
      ignoring.respect_gitignore = true;
      double t = fresh_first("store-ignoring", ignoring);
      rows_.push_back({"first snapshot, respect_gitignore", ms(t), ms(status_) + " (status)",
                       times(t / status_) + " status", "(not the default)"});
    }
  }

  // Boundaries as `run` takes them: in process, watched; git's incremental commit.
  void watched_boundaries() {
    lib_->watch();
    lib_->checkpoint({});  // the first watched capture walks, with the stat cache
    std::vector<double> watched, git_t;
    for (std::size_t i = 0; i < std::max(s_.repeat, s_.boundaries); ++i) {
      change_one();
      watched.push_back(seconds_of([&] { lib_->checkpoint({}); }));
      if (i < s_.repeat) git_t.push_back(seconds_of([&] { git_.snapshot(); }));
    }
    git_step_ = median(git_t);
    rows_.push_back({"boundary under run (watched), median", ms(median(watched)),
                     ms(git_step_) + " (add+commit)",
                     times(git_step_ / median(watched)) + " faster",
                     verdict(median(watched) <= 0.010, "<= 10 ms")});
    rows_.push_back({"boundary under run (watched), p99", ms(percentile(watched, 99)), "", "",
                     "(of " + std::to_string(watched.size()) + ")"});
  }

  // Through the watch daemon: `shadowbox snapshot`, and a hook process (thin client).
  void daemon_boundaries() {
    cli_.snapshot();  // starts the daemon
    for (int i = 0; i < 250 && daemon_pid(cli_) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    cli_.snapshot();  // the daemon's first capture: a walk with the stat cache
    std::vector<double> cli_t, hook_t;
    for (std::size_t i = 0; i < s_.repeat; ++i) {
      change_one();
      cli_t.push_back(seconds_of([&] { cli_.snapshot(); }));
      change_one();
      std::string call = "toolu_" + std::to_string(i);
      hook_t.push_back(seconds_of([&] { hook_event(w_, store_, "PreToolUse", call); }));
      hook_event(w_, store_, "PostToolUse", call);
    }
    for (auto [what, t] : {std::pair{"hook process via the daemon", median(hook_t)},
                           std::pair{"`shadowbox snapshot` via the daemon", median(cli_t)}}) {
      rows_.push_back({what, ms(t), ms(git_step_) + " (add+commit)",
                       times(git_step_ / t) + " faster",
                       verdict(git_step_ >= 10 * t, ">= 10x git")});
    }
  }

  // Restore of one changed file, each side to its own newest state.
  void restores() {
    fsnap::Checkpoint target = lib_->checkpoint({});
    std::string cli_target = cli_.snapshot();
    git_.snapshot();
    std::vector<double> lib_r, cli_r, git_r;
    for (std::size_t i = 0; i < s_.repeat; ++i) {
      const std::string& victim = w_.editable[rng_() % w_.editable.size()];
      std::string original = testing_support::read_file(w_.root / victim);
      auto spoil = [&] { testing_support::write_file(w_.root / victim, "spoiled " + victim); };
      spoil();
      lib_r.push_back(seconds_of([&] { lib_->restore_checkpoint(target, {}); }));
      spoil();
      cli_r.push_back(seconds_of([&] { check(cli_.run({"restore", cli_target}), "restore"); }));
      spoil();
      git_r.push_back(seconds_of([&] { git_.restore_head(); }));
      if (testing_support::read_file(w_.root / victim) != original) {
        throw std::runtime_error("restore did not bring back " + victim);
      }
    }
    double git = median(git_r);
    rows_.push_back({"restore one file (run, watched)", ms(median(lib_r)), ms(git) + " (reset)",
                     times(git / median(lib_r)) + " faster", "(safety checkpoint included)"});
    rows_.push_back({"restore one file (CLI via daemon)", ms(median(cli_r)), ms(git) + " (reset)",
                     times(git / median(cli_r)) + " faster", ""});
  }

  // The daemon's memory, after all of the above, per file of the workspace.
  void daemon_memory() {
    int pid = daemon_pid(cli_);
    if (pid <= 0) return;
    Resident m = memory_of(pid);
    auto per_file = [&](std::uint64_t bytes) {
      return static_cast<double>(bytes) / static_cast<double>(w_.entries);
    };
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f B/file (peak %.0f)", per_file(m.rss), per_file(m.hwm));
    rows_.push_back({"daemon memory (VmRSS, VmHWM)", mb(m.rss) + ", " + mb(m.hwm), "", buf,
                     verdict(per_file(m.rss) <= 150, "<= 150 B per file")});
    std::snprintf(buf, sizeof buf, "%.0f + %.0f B/file", per_file(m.anon), per_file(m.file));
    rows_.push_back({"  of it heap, mapped files", mb(m.anon) + ", " + mb(m.file), "", buf, ""});
  }

  // Watched boundaries while `shadowbox maintenance` runs beside them, again and again, at
  // the priority the commands start it at (--background).
  void boundaries_beside_maintenance() {
    std::atomic<bool> stop{false};
    std::atomic<int> maintenances{0};
    std::thread maintainer([&] {
      while (!stop) {
        cli_.run({"maintenance", "--background"});
        ++maintenances;
      }
    });
    std::vector<double> beside;
    for (std::size_t i = 0; i < s_.boundaries; ++i) {
      change_one();
      beside.push_back(seconds_of([&] { lib_->checkpoint({}); }));
    }
    stop = true;
    maintainer.join();
    double p99 = percentile(beside, 99);
    rows_.push_back({"boundary p99, maintenance beside", ms(p99), "",
                     "median " + ms(median(beside)) + ", " + std::to_string(maintenances.load()) +
                         " maintenance(s)",
                     verdict(p99 <= 0.050, "<= 50 ms")});
  }

  // The store, settled, against `git gc` of the baseline's history (the same states).
  void store_size() {
    check(cli_.run({"maintenance"}), "shadowbox maintenance");
    check(git_.git({"gc", "-q", "--prune=now"}), "git gc");
    std::uintmax_t repo = disk_usage(store_ / "repo.git");
    std::uintmax_t gc = disk_usage(git_.git_dir);
    rows_.push_back({"store (repo.git; whole store)", mb(repo) + "; " + mb(disk_usage(store_)),
                     mb(gc) + " (git gc)",
                     times(static_cast<double>(repo) / static_cast<double>(gc)) + " git gc", ""});
  }

  const Workspace& w_;
  fs::path base_;
  const Settings& s_;
  fs::path store_;
  bench::GitBaseline git_;
  bench::CliRunner cli_;
  std::optional<fsnap::HostFilesystem> lib_;
  std::mt19937_64 rng_{7};
  double status_ = 0;    // `git status`, on a checkout
  double git_step_ = 0;  // git's incremental `add -A && commit`
  std::vector<Row> rows_;
};

void print(const Workspace& w, const std::vector<Row>& rows, double built) {
  std::printf("\nrung %s: %s (built in %.1f s)\n", w.name.c_str(), w.description.c_str(), built);
  std::printf("  %-38s %22s %22s %26s  %s\n", "case", "shadowbox", "git", "ratio", "goal");
  for (const Row& r : rows) {
    std::printf("  %-38s %22s %22s %26s  %s\n", r.what.c_str(), r.shadowbox.c_str(), r.git.c_str(),
                r.ratio.c_str(), r.goal.c_str());
  }
  std::fflush(stdout);
}

void run_rung(const std::function<Workspace(const fs::path&, const Settings&)>& build,
              const fs::path& base, const Settings& s) {
  fs::create_directories(base);
  std::optional<Workspace> w;
  double built = seconds_of([&] { w = build(base, s); });
  std::vector<Row> rows = RungBench(*w, base, s).run();
  print(*w, rows, built);
  fs::remove_all(base);  // the next rung's disk
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Settings s = parse_settings(argc, argv);
    std::optional<testing_support::TempDir> temp;
    fs::path base = bench::bench_base(s.dir, "shadowbox-ladder", temp);
    std::printf("scale ladder: median of %zu run(s), p99 of %zu boundaries; %u hardware threads\n",
                s.repeat, s.boundaries, std::thread::hardware_concurrency());
    std::fflush(stdout);
    for (char rung : s.rungs) {
      switch (rung) {
        case 'A':
          run_rung(rung_a, base / "A", s);
          break;
        case 'B':
          run_rung(rung_b, base / "B", s);
          break;
        case 'C':
          run_rung(rung_c, base / "C", s);
          break;
        case 'D':
          run_rung(rung_d_worktree, base / "D-worktree", s);
          run_rung(rung_d_submodule, base / "D-submodule", s);
          break;
        default:
          throw std::invalid_argument(std::string("no rung ") + rung + " (A, B, C, D)");
      }
    }
    if (!s.dir.empty()) fs::remove_all(base);
    std::printf(
        "\nwatched: HostFilesystem::watch() in process, as `shadowbox run`; via the daemon: "
        "the CLI and the\nthin hook client served by a warm watch daemon; git: a separate git "
        "dir, feature.manyFiles,\nthe untracked cache. Restores take a safety checkpoint first; "
        "git's reset does not.\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scale_ladder_bench: %s\n", e.what());
    return 1;
  }
}
