// What the snapshot benchmarks share: timing, synthetic source-like workspaces, the git
// CLI baseline, the shadowbox CLI with a store of its own, and the stat floor.
// Header-only: each benchmark is one executable.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace bench {

namespace fs = boost::filesystem;

using Clock = std::chrono::steady_clock;

inline double seconds_of(const std::function<void()>& f) {
  auto start = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The value below which p percent of v lie (nearest rank).
inline double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  std::size_t rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size()) + 0.999);
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// Source-like text: lines of pseudo-random words, so it compresses like code does.
inline std::string text_of_size(std::mt19937_64& rng, std::size_t size) {
  static const char* words[] = {"int",    "return", "if",    "for",   "value", "const",
                                "auto",   "std",    "void",  "class", "while", "struct",
                                "string", "vector", "count", "index", "data",  "size"};
  std::string out;
  out.reserve(size + 16);
  while (out.size() < size) {
    out += words[rng() % (sizeof words / sizeof *words)];
    out.push_back(rng() % 8 == 0 ? '\n' : ' ');
    if (rng() % 16 == 0) out += std::to_string(rng() % 100000);
  }
  out.resize(size);
  return out;
}

// files source-like files (file_size bytes on average) in dirs directories nested two
// levels (d0042/s07) so that the tree has depth; returns their relative paths.
inline std::vector<std::string> build_workspace(const fs::path& root, std::size_t files,
                                                std::size_t dirs, std::size_t file_size,
                                                std::uint64_t seed = 42) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> dir_names;
  std::size_t top = std::max<std::size_t>(1, dirs / 20);
  for (std::size_t i = 0; i < dirs; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "d%04zu/s%03zu", i % top, i / top);
    dir_names.push_back(name);
    fs::create_directories(root / name);
  }
  std::vector<std::string> out;
  out.reserve(files);
  for (std::size_t i = 0; i < files; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/f%06zu.txt", i);
    std::string rel = dir_names[i % dir_names.size()] + name;
    std::size_t size = file_size / 2 + rng() % (file_size + 1);
    testing_support::write_file(root / rel, text_of_size(rng, size));
    out.push_back(rel);
  }
  return out;
}

inline void check(const testing_support::CommandResult& r, const std::string& what) {
  if (r.exit_code != 0) {
    throw std::runtime_error(what + " failed (exit " + std::to_string(r.exit_code) + "): " + r.err);
  }
}

// The directory a bench works in: a new temporary one named after prefix (held by temp),
// or dir, which must not exist yet.
inline fs::path bench_base(const fs::path& dir, const char* prefix,
                           std::optional<testing_support::TempDir>& temp) {
  if (dir.empty()) {
    temp.emplace(prefix);
    return temp->path();
  }
  fs::path base = fs::absolute(dir);
  if (fs::exists(base)) throw std::runtime_error(base.string() + " exists; give a new path");
  fs::create_directories(base);
  return base;
}

// git, as a user runs it in work_tree (no hooks, no auto-gc, a committer set).
inline testing_support::CommandResult git_in(const fs::path& work_tree,
                                             std::vector<std::string> args) {
  std::vector<std::string> argv = {"git",
                                   "-c",
                                   "user.name=bench",
                                   "-c",
                                   "user.email=bench@localhost",
                                   "-c",
                                   "core.hooksPath=/dev/null",
                                   "-c",
                                   "protocol.file.allow=always"};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing_support::run_command(argv, work_tree, {}, "", std::chrono::seconds(3600));
}

// The git CLI baseline: a git dir outside the work tree, no auto-gc, no hooks.
struct GitBaseline {
  fs::path git_dir;
  fs::path work_tree;
  int commits = 0;

  testing_support::CommandResult git(std::vector<std::string> args) const {
    std::vector<std::string> argv = {"--git-dir=" + git_dir.string(),
                                     "--work-tree=" + work_tree.string(),
                                     "-c",
                                     "gc.auto=0",
                                     "-c",
                                     "feature.manyFiles=true",
                                     "-c",
                                     "core.untrackedCache=true"};
    argv.insert(argv.end(), args.begin(), args.end());
    return git_in(work_tree, std::move(argv));
  }
  void snapshot() {
    check(git({"add", "-A"}), "git add -A");
    check(git({"commit", "-q", "--allow-empty", "-m", "snapshot " + std::to_string(++commits)}),
          "git commit");
  }
  void restore_head() { check(git({"reset", "-q", "--hard", "HEAD"}), "git reset --hard"); }
};

// The shadowbox CLI with its own store (and a config, if given).
struct CliRunner {
  fs::path store;
  fs::path workspace;
  fs::path config;

  testing_support::CommandResult run(std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", workspace.string(), "--store",
                                     store.string()};
    if (!config.empty()) {
      argv.push_back("--config");
      argv.push_back(config.string());
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return testing_support::run_command(argv, workspace, {"SHADOWBOX_CONFIG="}, "",
                                        std::chrono::seconds(3600));
  }
  std::string snapshot() {
    testing_support::CommandResult r = run({"snapshot"});
    check(r, "shadowbox snapshot");
    return r.out.substr(0, r.out.find(' '));
  }
};

// Stats every entry below the directory fd (closes it); returns how many.
inline std::size_t stat_tree(int dfd) {
  DIR* dir = ::fdopendir(dfd);
  if (dir == nullptr) return 0;
  std::size_t n = 0;
  std::vector<std::string> subdirs;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    ++n;
    if (S_ISDIR(st.st_mode)) subdirs.push_back(name);
  }
  for (const std::string& sub : subdirs) {
    n += stat_tree(::openat(::dirfd(dir), sub.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  ::closedir(dir);
  return n;
}

// The floor of any stat-based capture: one fstatat per entry, top-level directories
// spread over all hardware threads, nothing else.
inline double stat_floor(const fs::path& root) {
  std::vector<std::string> tops;
  for (fs::directory_iterator it(root), end; it != end; ++it) tops.push_back(it->path().string());
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  return seconds_of([&] {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (std::size_t i = t; i < tops.size(); i += threads) {
          stat_tree(::open(tops[i].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        }
      });
    }
    for (std::thread& th : pool) th.join();
  });
}

// Appends text to file (as an agent appends to its transcript); throws if it cannot.
inline void append_file(const fs::path& file, const std::string& text) {
  std::FILE* f = std::fopen(file.c_str(), "ab");
  bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  if (!ok) throw std::runtime_error("cannot append to " + file.string());
}

// One tool call as an agent's transcript (Claude Code's JSON lines) records it: an
// assistant turn asking for tool call id and the tool's result, about 5 KB of words
// from a small vocabulary (text that compresses about as prose and code do).
inline std::string transcript_call(std::mt19937& rng, const std::string& id) {
  static const char* kWords[] = {"the",   "file",  "return", "const", "std::string", "int",
                                 "error", "tests", "value",  "path",  "{",           "}",
                                 "if",    "for",   "write",  "read",  "commit",      "build"};
  auto text = [&](std::size_t bytes) {
    std::string out;
    while (out.size() < bytes) {
      out += kWords[rng() % (sizeof kWords / sizeof *kWords)];
      out += ' ';
    }
    return out;
  };
  return "{\"type\":\"assistant\",\"requestId\":\"req_" + id + "\",\"message\":{\"id\":\"msg_" +
         id +
         "\",\"model\":\"claude-sonnet-4-5\",\"role\":\"assistant\",\"content\":[{"
         "\"type\":\"text\",\"text\":\"" +
         text(1200) + "\"},{\"type\":\"tool_use\",\"id\":\"" + id +
         "\",\"name\":\"Edit\"}],\"usage\":{\"input_tokens\":100,\"output_tokens\":300}}}\n"
         "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":"
         "\"tool_result\",\"tool_use_id\":\"" +
         id + "\",\"content\":\"" + text(3500) + "\"}]}}\n";
}

}  // namespace bench
