// AgentProcess and the process tree a stopped run ends: waiting with a time limit, and
// every descendant gone — a backgrounded child, a daemon that left its session, one
// that ignores SIGTERM — with the agent's own exit status kept. The agent's guard: its
// whole tree ends soon after its supervisor is killed with SIGKILL, or gives it up, even
// an agent that ignores SIGTERM; the run's processes lock is held until then.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/error.hpp"
#include "hooks/agent_process.hpp"
#include "hooks/process_tree.hpp"
#include "hooks/run_processes.hpp"
#include "runs/run_meta.hpp"
#include "supervisor_process.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace std::chrono_literals;

std::vector<std::string> path_env() {
  return {std::string("PATH=") + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin")};
}

using testing_support::eventually;

// Whether none of pids is alive (zombies are not).
bool all_gone(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids) {
    if (runs::process_alive(pid)) return false;
  }
  return true;
}

// An agent that ignores SIGTERM, with a child that does too, a daemon that left its
// session, and a plain sleeper; ready once all are started.
std::string stubborn_agent(const fs::path& ready) {
  return "trap '' TERM; "
         "sh -c 'trap \"\" TERM; while :; do sleep 1; done' & "
         "setsid sh -c 'sleep 301 & exit 0' & "
         "sleep 300 & "
         "sleep 0.2; touch " +
         ready.string() + "; while :; do sleep 1; done";
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
  hooks::TreeEnding ending = agent.end_tree(500ms);
  EXPECT_TRUE(ending.all_gone);
  EXPECT_GE(ending.terminated, 4u);
  EXPECT_GE(ending.killed, 1u) << "the one ignoring SIGTERM";
  EXPECT_TRUE(hooks::live_descendants(::getpid()).empty());
  for (pid_t pid : before) {
    EXPECT_FALSE(runs::process_alive(pid)) << pid << " is still there";
    EXPECT_NE(::kill(pid, 0), 0) << pid << " was not reaped";
  }
  // The agent's own status was kept for its supervisor.
  ASSERT_TRUE(agent.ended());
  EXPECT_EQ(agent.exit()->code(), 128 + SIGTERM);
  EXPECT_EQ(agent.guard_pid(), -1) << "the guard, its tree empty, exited and was reaped";
}

// A maintenance of the store the run started while its agent ran (reparented to the
// run, a subreaper) outlives the agent's tree; its pid stays its own — not reaped —
// until the run reaps it.
TEST(ProcessTreeTest, SparedHelpersAreNeitherSignalledNorReaped) {
  hooks::become_subreaper();
  testing_support::TempDir dir;
  pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    ::execlp("sleep", "sleep", "300", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  hooks::AgentProcess agent({"sh", "-c", "sleep 300 & wait"}, dir.path(), path_env());
  hooks::TreeEnding ending = agent.end_tree(500ms, {helper});
  EXPECT_TRUE(ending.all_gone);
  EXPECT_TRUE(runs::process_alive(helper)) << "the helper was ended with the agent's tree";
  EXPECT_EQ(hooks::live_descendants(::getpid()), std::vector<pid_t>{helper});
  // Once it has exited, it stays a zombie through another ending: its pid is not free.
  ::kill(helper, SIGKILL);
  EXPECT_TRUE(eventually([&] { return !runs::process_alive(helper); }));
  hooks::end_descendants(500ms, 0, {}, {helper});
  EXPECT_EQ(::waitpid(helper, nullptr, WNOHANG), helper) << "it was reaped behind the caller";
}

// kill -9 of the supervisor alone: nothing can pass a signal on, and the agent ignores
// SIGTERM anyway. Its guard ends the whole tree within the grace.
TEST(AgentGuardTest, TheAgentsWholeTreeEndsSoonAfterItsSupervisorIsKilled) {
  testing_support::TempDir dir;
  fs::path ready = dir / "ready";
  testing_support::SupervisorProcess supervisor({"sh", "-c", stubborn_agent(ready)}, dir.path(),
                                                100ms);
  ASSERT_TRUE(eventually([&] { return fs::exists(ready); }));
  std::vector<pid_t> tree = hooks::live_descendants(supervisor.pid());
  EXPECT_GE(tree.size(), 5u) << "the guard, the agent, and what it started";
  supervisor.kill();
  auto killed = std::chrono::steady_clock::now();
  EXPECT_TRUE(eventually([&] { return all_gone(tree); }, 5s))
      << "processes of the agent outlived their supervisor";
  EXPECT_LT(std::chrono::steady_clock::now() - killed, 3s) << "SIGKILL comes after the grace";
}

// A supervisor that lets go of a running agent (an error on its way out) does not leave
// it running unsupervised.
TEST(AgentGuardTest, ASupervisorThatGivesItsAgentUpEndsItsTree) {
  testing_support::TempDir dir;
  fs::path ready = dir / "ready";
  std::vector<pid_t> tree;
  pid_t guard = -1;
  {
    hooks::AgentProcess agent({"sh", "-c", stubborn_agent(ready)}, dir.path(), path_env(),
                              {100ms, -1});
    ASSERT_TRUE(eventually([&] { return fs::exists(ready); }));
    guard = agent.guard_pid();
    tree = hooks::live_descendants(guard);
    tree.push_back(guard);
  }
  EXPECT_TRUE(eventually([&] { return all_gone(tree); }, 5s));
  ::waitpid(guard, nullptr, 0);
}

// What `runs` and `resume` go by: the run's processes lock, held by the supervisor, then
// by the guard alone until the tree has ended — not a pid.
TEST(AgentGuardTest, TheRunsProcessesLockIsHeldUntilItsWholeTreeHasEnded) {
  testing_support::TempDir dir;
  fs::create_directories(dir / "ws");
  fsnap::Store store = fsnap::Store::open(dir / "store", dir / "ws", true);
  EXPECT_EQ(hooks::run_processes(store, "r", std::nullopt), hooks::RunProcesses::kNone);
  std::optional<testing_support::SupervisorProcess> supervisor;
  supervisor.emplace(std::vector<std::string>{"sh", "-c", "trap '' TERM; sleep 300"}, dir / "ws",
                     100ms, &store, "r");
  EXPECT_EQ(hooks::run_processes(store, "r", std::nullopt), hooks::RunProcesses::kSupervised);
  try {
    hooks::RunProcessLocks::take(store, "r");
    ADD_FAILURE() << "a second supervisor took the run";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kConflict);
    EXPECT_NE(std::string(e.what()).find("another shadowbox process supervises it"),
              std::string::npos)
        << e.what();
  }
  // The guard held still: the supervisor is gone, the agent lives.
  ASSERT_EQ(::kill(supervisor->guard(), SIGSTOP), 0);
  supervisor->kill();
  EXPECT_EQ(hooks::run_processes(store, "r", std::nullopt), hooks::RunProcesses::kUnsupervised);
  try {
    hooks::RunProcessLocks::take(store, "r");
    ADD_FAILURE() << "a supervisor took a run whose agent lives";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kConflict);
    EXPECT_NE(std::string(e.what()).find("are still running"), std::string::npos) << e.what();
  }
  // Let go, the guard ends the tree, and then no process of the run is left.
  pid_t agent = supervisor->agent();
  ::kill(supervisor->guard(), SIGCONT);
  EXPECT_TRUE(eventually([&] {
    return hooks::run_processes(store, "r", std::nullopt) == hooks::RunProcesses::kNone;
  }));
  EXPECT_FALSE(runs::process_alive(agent)) << "the lock went before the agent";
  supervisor.reset();
  hooks::RunProcessLocks again = hooks::RunProcessLocks::take(store, "r");
  EXPECT_GE(again.tree_fd(), 0);
}

TEST(ProcessTreeTest, NothingToEndIsQuick) {
  auto start = std::chrono::steady_clock::now();
  hooks::TreeEnding ending = hooks::end_descendants(5s, 0, {});
  EXPECT_EQ(ending.terminated, 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

}  // namespace
