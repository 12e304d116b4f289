// `shadowbox run` on a terminal (a pseudo-terminal here, as a person's shell has it): the
// agent owns the screen while it runs, so what shadowbox has to say meanwhile — here,
// that it stops the agent an abort asked it to stop — is written after the agent has
// exited, before the run's summary, and is in the run's log as it happens.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

// argv run with a pseudo-terminal as its stdin, stdout and stderr, in cwd: all it
// wrote there until it and everything it started closed the terminal (at most timeout).
std::string run_on_terminal(const std::vector<std::string>& argv, const fs::path& cwd,
                            std::chrono::seconds timeout, int& status) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return "no pty";
  std::string terminal = ::ptsname(master);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();  // the terminal becomes its controlling one, as a shell's is
    int t = ::open(terminal.c_str(), O_RDWR);
    ::dup2(t, 0);
    ::dup2(t, 1);
    ::dup2(t, 2);
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::setenv("SHADOWBOX_CONFIG", "", 1);
    ::setenv("SHADOWBOX_NO_PROGRESS", "1", 1);
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(127);
  }
  std::string out;
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    struct pollfd p = {master, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buffer[4096];
    ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO: every holder of the terminal has closed it
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::kill(pid, SIGKILL);  // (gone already, unless it overran the timeout)
  ::waitpid(pid, &status, 0);
  ::close(master);
  return out;
}

TEST(AgentScreenTest, WhatShadowboxSaysWhileAnInteractiveAgentRunsIsWrittenOnceItExits) {
  testing_support::TempDir temp;
  fs::path ws = temp / "ws";
  fs::path store = temp / "store";
  fs::create_directories(ws);
  std::string self =
      std::string(SHADOWBOX_BIN) + " --workspace " + ws.string() + " --store " + store.string();
  // The agent draws, has the run aborted (as another terminal would), and draws again
  // when it is told to stop.
  std::string agent = "echo AGENT-DRAWS; trap 'echo AGENT-EXITS; exit 0' TERM; " + self +
                      " abort r --reason 'from another terminal' >/dev/null 2>&1 & "
                      "while :; do sleep 0.05; done";
  int status = 0;
  std::string screen =
      run_on_terminal({SHADOWBOX_BIN, "--workspace", ws.string(), "--store", store.string(), "run",
                       "--agent", "claude-sdk", "--run-id", "r", "--", "sh", "-c", agent},
                      ws, std::chrono::seconds(30), status);
  ASSERT_TRUE(WIFEXITED(status)) << screen;
  EXPECT_EQ(WEXITSTATUS(status), 3) << "halted\n" << screen;
  std::size_t exits = screen.find("AGENT-EXITS");
  std::size_t said = screen.find("shadowbox: stopping the agent: ");
  std::size_t summary = screen.find("shadowbox: run r halted");
  ASSERT_NE(exits, std::string::npos) << screen;
  ASSERT_NE(said, std::string::npos) << screen;
  ASSERT_NE(summary, std::string::npos) << screen;
  EXPECT_GT(said, exits) << "not over the agent's screen\n" << screen;
  EXPECT_LT(said, summary) << screen;
  EXPECT_LT(screen.find("AGENT-DRAWS"), exits);
  // What the supervisor did is in the run's log too.
  std::string log = testing_support::read_file(fsnap::layout::run_log_file(store, "r"));
  EXPECT_NE(log.find("stopping the agent: "), std::string::npos) << log;
}

}  // namespace
