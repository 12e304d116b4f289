#include "test_support.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/filesystem.hpp>

extern char** environ;

namespace testing_support {
namespace fs = boost::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

// Makes every directory under root writable and searchable so it can be removed.
void make_removable(const std::string& root) {
  struct stat st;
  if (::lstat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  ::chmod(root.c_str(), 0700);
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    make_removable(root + "/" + name);
  }
  ::closedir(dir);
}

void walk(const std::string& abs, const std::string& rel, bool include_git, Manifest& out) {
  DIR* dir = ::opendir(abs.c_str());
  if (dir == nullptr) fail("opendir " + abs);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  for (const std::string& name : names) {
    if (name == ".git" && !include_git) continue;
    std::string child_abs = abs + "/" + name;
    std::string child_rel = rel.empty() ? name : rel + "/" + name;
    struct stat st;
    if (::lstat(child_abs.c_str(), &st) != 0) fail("lstat " + child_abs);
    ManifestEntry entry;
    if (S_ISDIR(st.st_mode)) {
      entry.type = 'd';
      out[child_rel] = entry;
      walk(child_abs, child_rel, include_git, out);
    } else if (S_ISLNK(st.st_mode)) {
      entry.type = 'l';
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n = ::readlink(child_abs.c_str(), target.data(), target.size());
      if (n < 0) fail("readlink " + child_abs);
      target.resize(static_cast<size_t>(n));
      entry.data = target;
      out[child_rel] = entry;
    } else if (S_ISREG(st.st_mode)) {
      entry.type = 'f';
      entry.executable = (st.st_mode & S_IXUSR) != 0;
      entry.data = read_file(child_abs);
      out[child_rel] = entry;
    }
  }
}

std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string describe(const ManifestEntry& e) {
  std::string s(1, e.type);
  if (e.executable) s += "x";
  s += " " + std::to_string(e.data.size()) + "B";
  if (e.type == 'l') s += " -> " + printable(e.data);
  return s;
}

}  // namespace

TempDir::TempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) fail("mkdtemp " + templ);
  path_ = fs::canonical(fs::path(buf.data()));
}

TempDir::~TempDir() {
  // A process the test started may still write here while it is removed (a watch daemon
  // logging that its workspace went, a detached maintenance taking its lock), and
  // removing stops at a directory that got a new entry meanwhile: it is tried again, for
  // half a second at most, rather than leaving the rest behind.
  for (int attempt = 0; attempt < 50; ++attempt) {
    make_removable(path_.string());
    boost::system::error_code ec;
    fs::remove_all(path_, ec);
    struct stat st {};
    if (::lstat(path_.c_str(), &st) != 0 && errno == ENOENT) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Manifest take_manifest(const fs::path& root, bool include_git) {
  Manifest out;
  walk(root.string(), "", include_git, out);
  return out;
}

std::string describe_difference(const Manifest& expected, const Manifest& actual) {
  std::ostringstream out;
  for (const auto& [path, entry] : expected) {
    auto it = actual.find(path);
    if (it == actual.end()) {
      out << "missing: " << printable(path) << " (" << describe(entry) << ")\n";
    } else if (!(it->second == entry)) {
      out << "differs: " << printable(path) << " expected " << describe(entry) << ", got "
          << describe(it->second) << "\n";
    }
  }
  for (const auto& [path, entry] : actual) {
    if (!expected.count(path)) {
      out << "unexpected: " << printable(path) << " (" << describe(entry) << ")\n";
    }
  }
  return out.str();
}

void write_file(const fs::path& path, const std::string& content, bool executable) {
  fs::create_directories(path.parent_path());
  {
    std::ofstream out(path.string(), std::ios::binary | std::ios::trunc);
    if (!out) fail("open " + path.string());
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  }
  if (::chmod(path.c_str(), executable ? 0755 : 0644) != 0) fail("chmod " + path.string());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path.string(), std::ios::binary);
  if (!in) fail("open " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

// This process's environment with extra_env's NAME=value entries in place of its own.
std::vector<std::string> environment_with(const std::vector<std::string>& extra_env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const std::string& kv : extra_env) {
    std::string name = kv.substr(0, kv.find('='));
    std::erase_if(env_strings, [&](const std::string& s) { return s.rfind(name + "=", 0) == 0; });
    env_strings.push_back(kv);
  }
  return env_strings;
}

// Feeds stdin_data to in_fd (-1: none) and reads out_fd and err_fd into result until
// both end or the deadline passes (then the process group pid is killed). Closes them.
void pump(pid_t pid, int in_fd, int out_fd, int err_fd, const std::string& stdin_data,
          std::chrono::steady_clock::time_point deadline, CommandResult& result) {
  size_t written = 0;
  while (out_fd >= 0 || err_fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[3];
    int n = 0;
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    int rc = ::poll(fds, n, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) fail("poll");
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_fd) {
        ssize_t w = ::write(in_fd, stdin_data.data() + written, stdin_data.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == stdin_data.size()) {
          ::close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      std::string& sink = fds[i].fd == out_fd ? result.out : result.err;
      if (r > 0) {
        sink.append(buf, static_cast<size_t>(r));
      } else {
        ::close(fds[i].fd);
        (fds[i].fd == out_fd ? out_fd : err_fd) = -1;
      }
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const std::optional<fs::path>& cwd,
                          const std::vector<std::string>& extra_env, const std::string& stdin_data,
                          std::chrono::seconds timeout) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC))
    fail("pipe");
  std::vector<std::string> env_strings = environment_with(extra_env);
  std::vector<char*> env_ptrs, arg_ptrs;
  for (auto& s : env_strings) env_ptrs.push_back(s.data());
  env_ptrs.push_back(nullptr);
  std::vector<std::string> args = argv;
  for (auto& s : args) arg_ptrs.push_back(s.data());
  arg_ptrs.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) fail("fork");
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (cwd && ::chdir(cwd->c_str()) != 0) _exit(126);
    ::execvpe(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    _exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  CommandResult result;
  int in_fd = in_pipe[1];
  if (stdin_data.empty()) {
    ::close(in_fd);
    in_fd = -1;
  } else {
    ::fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  ::signal(SIGPIPE, SIG_IGN);
  pump(pid, in_fd, out_pipe[0], err_pipe[0], stdin_data, std::chrono::steady_clock::now() + timeout,
       result);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

bool lock_directory(const boost::filesystem::path& dir) {
  if (::geteuid() == 0) return run_command({"chattr", "+i", dir.string()}).exit_code == 0;
  return ::chmod(dir.c_str(), 0555) == 0;
}

void unlock_directory(const boost::filesystem::path& dir) {
  if (::geteuid() == 0) run_command({"chattr", "-i", dir.string()});
  ::chmod(dir.c_str(), 0755);
}

bool kill_on_creation(const fs::path& dir, const std::string& prefix,
                      const std::function<pid_t()>& start, std::chrono::seconds limit) {
  int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (watch < 0) fail("inotify_init1");
  if (::inotify_add_watch(watch, dir.c_str(), IN_CREATE | IN_MOVED_TO) < 0) {
    ::close(watch);
    fail("inotify_add_watch " + dir.string());
  }
  pid_t pid = start();
  bool killed = false;
  bool ended = false;
  int status = 0;
  auto until = std::chrono::steady_clock::now() + limit;
  while (!killed && !ended && std::chrono::steady_clock::now() < until) {
    pollfd p{watch, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      alignas(inotify_event) char buf[8192];
      ssize_t n = ::read(watch, buf, sizeof buf);
      for (char* at = buf; n > 0 && at < buf + n;) {
        auto* e = reinterpret_cast<inotify_event*>(at);
        if (!killed && e->len > 0 && std::string(e->name).rfind(prefix, 0) == 0) {
          ::kill(pid, SIGKILL);
          killed = true;
        }
        at += sizeof(inotify_event) + e->len;
      }
    }
    if (!killed) ended = ::waitpid(pid, &status, WNOHANG) == pid;
  }
  ::close(watch);
  if (!ended) {
    if (!killed) ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  return killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

int run_with_reader_gone(const std::vector<std::string>& argv,
                         const boost::filesystem::path& err_file) {
  int out[2];
  if (::pipe(out) != 0) return -1;
  ::close(out[0]);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(out[1], STDOUT_FILENO);
    int e = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(e, STDERR_FILENO);
    ::setenv("SHADOWBOX_CONFIG", "", 1);
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(127);
  }
  ::close(out[1]);
  int status = -1;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

}  // namespace testing_support
