// Helpers shared by shadowbox's tests: temporary directories, whole-tree manifests
// (for exact round-trip comparisons) and subprocesses with captured output.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include <boost/filesystem/path.hpp>

namespace testing_support {

// A fresh directory under $TMPDIR, removed (recursively, permissions restored) on
// destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "shadowbox-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const boost::filesystem::path& path() const { return path_; }
  boost::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  boost::filesystem::path path_;
};

// Everything that must round-trip about one entry of a tree.
struct ManifestEntry {
  char type = 'f';          // 'f' file, 'd' directory, 'l' symlink
  bool executable = false;  // files: owner-executable bit
  std::string data;         // file content or symlink target
  friend bool operator==(const ManifestEntry&, const ManifestEntry&) = default;
};

// Relative path (bytes, '/'-separated) -> entry, for every entry under a root
// (directories included, so empty ones count). `.git` directories and files are left
// out unless include_git is set.
using Manifest = std::map<std::string, ManifestEntry>;
Manifest take_manifest(const boost::filesystem::path& root, bool include_git = false);
// A readable account of how two manifests differ ("" when they are equal).
std::string describe_difference(const Manifest& expected, const Manifest& actual);

// Writes a file (creating parents) with the given content and executable bit.
void write_file(const boost::filesystem::path& path, const std::string& content,
                bool executable = false);
// Reads a whole file.
std::string read_file(const boost::filesystem::path& path);

// Makes dir refuse new and removed entries — immutable (chattr +i) when running as root,
// who ignores permissions, else read-only — so that writes into it fail the way they do
// on a read-only or full filesystem. Returns false if this filesystem cannot.
bool lock_directory(const boost::filesystem::path& dir);
// Undoes lock_directory.
void unlock_directory(const boost::filesystem::path& dir);

// Outcome of run_command.
struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or timed out
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up in PATH) with args, in cwd (if set), with extra environment
// variables added (NAME=VALUE), feeding stdin_data; kills it after timeout.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::optional<boost::filesystem::path>& cwd = std::nullopt,
                          const std::vector<std::string>& extra_env = {},
                          const std::string& stdin_data = "",
                          std::chrono::seconds timeout = std::chrono::seconds(120));

// Runs argv (an absolute program; SHADOWBOX_CONFIG emptied) with SIGPIPE at its default,
// as a shell starts it, its stdout a pipe whose reader is gone before a byte is written
// (`| head` that stopped reading) and its stderr to err_file. Returns its wait status.
int run_with_reader_gone(const std::vector<std::string>& argv,
                         const boost::filesystem::path& err_file);

// Starts a process with start() (which returns its pid) and sends it SIGKILL the moment
// an entry whose name begins with prefix is created in dir — inotify reports the
// creation at once, so the process is caught in the middle of what it was doing — then
// reaps it. True if it was killed so; false if it ended first or limit passed (it is
// killed then too).
bool kill_on_creation(const boost::filesystem::path& dir, const std::string& prefix,
                      const std::function<pid_t()>& start,
                      std::chrono::seconds limit = std::chrono::seconds(60));

}  // namespace testing_support
