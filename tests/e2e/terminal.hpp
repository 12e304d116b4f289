// A terminal for end-to-end tests of interactive programs: a command running in a
// detached tmux session on a tmux server of the test's own (its socket in a temporary
// directory), whose screen the test reads and into which it types.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace e2e {

// One command in a 200x50 terminal, for the lifetime of the object.
class Terminal {
 public:
  // Starts argv in cwd with exactly env (NAME=VALUE entries). Its exit status goes to a
  // file in dir, which wait_exit reads.
  Terminal(const boost::filesystem::path& dir, const boost::filesystem::path& cwd,
           const std::vector<std::string>& env, const std::vector<std::string>& argv)
      : socket_(dir / "tmux.sock"), status_(dir / "exit-status") {
    boost::filesystem::remove(status_);
    std::string command = "env -i";
    for (const std::string& e : env) command += " " + quote(e);
    for (const std::string& a : argv) command += " " + quote(a);
    // The screen stays as the command left it until the object goes.
    command += "; echo $? > " + quote(status_.string()) + "; exec sleep 3600";
    testing_support::CommandResult r = tmux(
        {"new-session", "-d", "-s", "0", "-x", "200", "-y", "50", "-c", cwd.string(), command});
    started_ = r.exit_code == 0;
    start_error_ = r.err;
  }
  ~Terminal() { tmux({"kill-server"}); }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  bool started() const { return started_; }
  const std::string& start_error() const { return start_error_; }

  // What the terminal shows now.
  std::string screen() const { return tmux({"capture-pane", "-p", "-t", "0"}).out; }
  // Waits up to timeout for text to be on the screen.
  bool wait_for(const std::string& text, std::chrono::seconds timeout) const {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      if (screen().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  // Types text (literally, as keys), then Enter.
  void type_line(const std::string& text) const {
    tmux({"send-keys", "-t", "0", "-l", text});
    tmux({"send-keys", "-t", "0", "Enter"});
  }
  // Types text (literally, as keys), without Enter.
  void type(const std::string& text) const { tmux({"send-keys", "-t", "0", "-l", text}); }
  // Presses a key by its tmux name (Enter, Escape, C-c...).
  void press(const std::string& key) const { tmux({"send-keys", "-t", "0", key}); }
  // Waits up to timeout for the command to end: its exit status, or nullopt.
  std::optional<int> wait_exit(std::chrono::seconds timeout) const {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      if (boost::filesystem::exists(status_)) {
        std::string text = testing_support::read_file(status_);
        if (!text.empty() && text.back() == '\n') return std::stoi(text);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return std::nullopt;
  }

 private:
  static std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  testing_support::CommandResult tmux(std::vector<std::string> args) const {
    args.insert(args.begin(), {"tmux", "-S", socket_.string()});
    return testing_support::run_command(args, std::nullopt, {}, "", std::chrono::seconds(20));
  }

  boost::filesystem::path socket_;
  boost::filesystem::path status_;
  bool started_ = false;
  std::string start_error_;
};

}  // namespace e2e
