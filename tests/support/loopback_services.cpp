#include "loopback_services.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace testing_support {

namespace {

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

}  // namespace

void init_bare_remote(const boost::filesystem::path& dir) {
  CommandResult r = run_command({"git", "init", "-q", "--bare", dir.string()});
  if (r.exit_code != 0) throw std::runtime_error("git init --bare failed: " + r.err);
}

std::string git_at(const boost::filesystem::path& git_dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "--git-dir", git_dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = run_command(argv);
  if (r.exit_code != 0) {
    std::string command;
    for (const std::string& a : argv) command += " " + a;
    ADD_FAILURE() << "failed:" << command << "\n" << r.err;
  }
  return r.out;
}

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in a = loopback(0);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

bool wait_for_port(int port, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(port);
    bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (up) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

ServerProcess::ServerProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::setpgid(0, 0);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);  // git daemon's complaints about probes; Redis logs to a file
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);
}

ServerProcess::~ServerProcess() {
  stop(SIGKILL);
}

ServerProcess::ServerProcess(ServerProcess&& other) noexcept : pid_(other.pid_) {
  other.pid_ = -1;
}

ServerProcess& ServerProcess::operator=(ServerProcess&& other) noexcept {
  if (this != &other) {
    stop(SIGKILL);
    pid_ = other.pid_;
    other.pid_ = -1;
  }
  return *this;
}

bool ServerProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void ServerProcess::stop(int signal) {
  if (pid_ <= 0) return;
  ::kill(-pid_, signal);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

RedisServer::RedisServer(const boost::filesystem::path& dir) : dir_(dir) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_loopback_port();
    if (launch()) return;
  }
  throw std::runtime_error(
      "redis-server did not start on a loopback port (is it installed? scripts/setup.sh "
      "installs it)");
}

bool RedisServer::launch() {
  process_ = ServerProcess({"redis-server", "--bind", "127.0.0.1", "--port", std::to_string(port_),
                            "--save", "", "--appendonly", "no", "--dir", dir_.string(),
                            "--protected-mode", "no", "--logfile",
                            (dir_ / ("redis-" + std::to_string(port_) + ".log")).string()});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_.running()) return false;  // the port was taken meanwhile
    if (wait_for_port(port_, 50) && cli({"PING"}).find("PONG") != std::string::npos) return true;
  }
  process_.stop(SIGKILL);
  return false;
}

std::string RedisServer::url(int db) const {
  return "redis://127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

void RedisServer::stop() {
  process_.stop(SIGKILL);
}

void RedisServer::start() {
  if (!launch()) throw std::runtime_error("redis-server did not start again on its port");
}

std::string RedisServer::cli(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"redis-cli", "-h", "127.0.0.1", "-p", std::to_string(port_)};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = run_command(argv, std::nullopt, {}, "", std::chrono::seconds(10));
  return r.exit_code == 0 ? r.out : "";
}

GitDaemon::GitDaemon(const boost::filesystem::path& base) : base_(base) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_loopback_port();
    process_ = ServerProcess({"git", "daemon", "--reuseaddr", "--listen=127.0.0.1",
                              "--port=" + std::to_string(port_), "--base-path=" + base.string(),
                              "--export-all", "--enable=receive-pack", base.string()});
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (process_.running() && std::chrono::steady_clock::now() < deadline) {
      if (wait_for_port(port_, 50)) return;
    }
    process_.stop(SIGKILL);
  }
  throw std::runtime_error("git daemon did not start on a loopback port");
}

std::string GitDaemon::url(const std::string& name) const {
  return "git://127.0.0.1:" + std::to_string(port_) + "/" + name;
}

}  // namespace testing_support
