// AgentProcess and the process tree a stopped run ends: waiting with a time limit, and
// every descendant gone — a backgrounded child, a daemon that left its session, one
// that ignores SIGTERM — with the agent's own exit status kept.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "hooks/agent_process.hpp"
#include "hooks/process_tree.hpp"
#include "sandbox/run_meta.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace std::chrono_literals;

std::vector<std::string> path_env() {
  return {std::string("PATH=") + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin")};
}

// Waits up to limit for pred.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 10s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

TEST(AgentProcessTest, WaitsWithATimeLimitAndReportsTheExit) {
  testing_support::TempDir dir;
  hooks::AgentProcess quick({"sh", "-c", "exit 7"}, dir.path(), path_env());
  std::optional<hooks::AgentExit> exit = quick.wait_for(10s);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code(), 7);
  EXPECT_EQ(quick.wait_for(0ms)->code(), 7) << "asked again";

  hooks::AgentProcess slow({"sleep", "30"}, dir.path(), path_env());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(slow.wait_for(200ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  ::kill(slow.pid(), SIGKILL);
  ASSERT_TRUE(slow.wait_for(10s));
  EXPECT_EQ(slow.exit()->code(), 128 + SIGKILL);

  EXPECT_THROW(hooks::AgentProcess({"no-such-agent-xyz"}, dir.path(), path_env()), std::exception);
}

TEST(ProcessTreeTest, EveryDescendantEndsEvenDaemonsAndThoseIgnoringSigterm) {
  hooks::become_subreaper();
  testing_support::TempDir dir;
  fs::path ready = dir / "ready";
  // The agent: a backgrounded sleeper, a daemon that double-forks out of its session
  // (reparented to us, the subreaper), and a child that ignores SIGTERM.
  std::string script =
      "sleep 300 & "
      "setsid sh -c 'sleep 301 & exit 0' & "
      "sh -c 'trap \"\" TERM; while :; do sleep 1; done' & "
      "sleep 0.3; touch " +
      ready.string() + "; wait";
  hooks::AgentProcess agent({"sh", "-c", script}, dir.path(), path_env());
  ASSERT_TRUE(eventually([&] { return fs::exists(ready); }));
  std::vector<pid_t> before = hooks::live_descendants(::getpid());
  EXPECT_GE(before.size(), 4u);
  hooks::TreeEnding ending = hooks::end_descendants(500ms, agent.pid(), [&] { agent.reap(); });
  EXPECT_TRUE(ending.all_gone);
  EXPECT_GE(ending.terminated, 4u);
  EXPECT_GE(ending.killed, 1u) << "the one ignoring SIGTERM";
  EXPECT_TRUE(hooks::live_descendants(::getpid()).empty());
  for (pid_t pid : before) {
    EXPECT_FALSE(sandbox::process_alive(pid)) << pid << " is still there";
    EXPECT_NE(::kill(pid, 0), 0) << pid << " was not reaped";
  }
  // The agent's own status was kept for its supervisor.
  ASSERT_TRUE(agent.ended());
  EXPECT_EQ(agent.exit()->code(), 128 + SIGTERM);
}

TEST(ProcessTreeTest, NothingToEndIsQuick) {
  auto start = std::chrono::steady_clock::now();
  hooks::TreeEnding ending = hooks::end_descendants(5s, 0, {});
  EXPECT_EQ(ending.terminated, 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

}  // namespace
