// Real servers the tests start for themselves, on 127.0.0.1 only, each bounded in time:
// a Redis server (Debian's redis-server, no persistence) and `git daemon` serving a
// directory of repositories (pushes allowed) for git:// remotes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace testing_support {

// Creates a bare git repository at dir (a remote for the fleet's tests). Throws
// std::runtime_error if git cannot.
void init_bare_remote(const boost::filesystem::path& dir);

// The output of `git --git-dir git_dir ARGS...`; a test failure naming the command when
// it fails.
std::string git_at(const boost::filesystem::path& git_dir, const std::vector<std::string>& args);

// A free TCP port on 127.0.0.1 (bound, then released: whoever binds it next gets it,
// barring a race the callers retry).
int free_loopback_port();

// Waits until something accepts TCP connections on 127.0.0.1:port; false after timeout_ms.
bool wait_for_port(int port, int timeout_ms);

// A process started in a process group of its own, killed (the group) with the object.
class ServerProcess {
 public:
  ServerProcess() = default;
  explicit ServerProcess(const std::vector<std::string>& argv);
  ~ServerProcess();
  ServerProcess(ServerProcess&& other) noexcept;
  ServerProcess& operator=(ServerProcess&& other) noexcept;
  pid_t pid() const { return pid_; }
  bool running();
  // Sends signal to the group and waits for the process.
  void stop(int signal);

 private:
  pid_t pid_ = -1;
};

// redis-server on a free loopback port, its files in dir; no RDB or AOF (a restart
// starts empty, as a lost server does).
class RedisServer {
 public:
  explicit RedisServer(const boost::filesystem::path& dir);
  int port() const { return port_; }
  std::string url(int db = 0) const;
  // Kills the server (SIGKILL: nothing is saved) / starts it again on the same port.
  void stop();
  void start();
  // Runs one command with redis-cli and returns its output ("" if it failed).
  std::string cli(const std::vector<std::string>& args) const;

 private:
  bool launch();
  boost::filesystem::path dir_;
  int port_ = 0;
  ServerProcess process_;
};

// `git daemon` exporting every repository under base (receive-pack enabled).
class GitDaemon {
 public:
  explicit GitDaemon(const boost::filesystem::path& base);
  // git://127.0.0.1:PORT/<name>
  std::string url(const std::string& name) const;

 private:
  boost::filesystem::path base_;
  int port_ = 0;
  ServerProcess process_;
};

}  // namespace testing_support
