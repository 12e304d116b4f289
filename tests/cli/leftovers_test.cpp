// What a process killed with SIGKILL leaves behind does not stay: the temporary pack
// of a maintenance killed mid-way is removed by a later `shadowbox gc` once it is older
// than retention.prune_grace (a younger one may be a live writer's, and stays); and
// the processes of an agent killed with -9 — even one that left its session and was
// orphaned — are ended before `shadowbox run` returns, so nothing writes into the
// workspace after the run's last checkpoint.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::TempDir;
using testing_support::write_file;

class LeftoversTest : public ::testing::Test {
 protected:
  LeftoversTest() : ws_(temp_ / "ws"), store_(temp_ / "store") {
    fs::create_directories(ws_);
    // No helper started behind the test's back: no daemon, no maintenance.
    write_file(config_, "watch:\n  daemon: off\nmaintenance:\n  auto: false\n");
  }

  std::vector<std::string> argv(const std::vector<std::string>& args) const {
    std::vector<std::string> out = {SHADOWBOX_BIN,   "--workspace", ws_.string(),    "--store",
                                    store_.string(), "--config",    config_.string()};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }
  static std::vector<std::string> env() { return {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"}; }

  CommandResult shadowbox(const std::vector<std::string>& args) const {
    return testing_support::run_command(argv(args), ws_, env());
  }
  std::string ok(const std::vector<std::string>& args) const {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }

  // Starts shadowbox with args, its output to /dev/null; returns its pid.
  pid_t start(const std::vector<std::string>& args) const {
    std::vector<std::string> a = argv(args);
    std::vector<char*> raw;
    for (std::string& s : a) raw.push_back(s.data());
    raw.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      for (const std::string& e : env()) ::putenv(const_cast<char*>(e.c_str()));
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 1);
      ::dup2(null, 2);
      if (::chdir(ws_.c_str()) == 0) ::execv(raw[0], raw.data());
      ::_exit(127);
    }
    return pid;
  }

  fs::path pack_dir() const { return store_ / "repo.git" / "objects" / "pack"; }

  // The names in the pack directory that begin with prefix.
  std::vector<std::string> in_pack_dir(const std::string& prefix) const {
    std::vector<std::string> out;
    for (fs::directory_iterator it(pack_dir()), end; it != end; ++it) {
      std::string name = it->path().filename().string();
      if (name.rfind(prefix, 0) == 0) out.push_back(name);
    }
    return out;
  }

  TempDir temp_;
  fs::path ws_;
  fs::path store_;
  fs::path config_ = temp_ / "config.yaml";
};

// Sets the modification time of file to age ago.
void age(const fs::path& file, std::chrono::seconds age) {
  auto then = std::chrono::system_clock::now() - age;
  timeval times[2];
  times[0].tv_sec = times[1].tv_sec = std::chrono::system_clock::to_time_t(then);
  times[0].tv_usec = times[1].tv_usec = 0;
  ASSERT_EQ(::utimes(file.c_str(), times), 0) << file;
}

TEST_F(LeftoversTest, TheTemporaryPackOfAKilledMaintenanceIsRemovedByALaterGc) {
  // Thousands of loose objects (the first snapshot packs what it writes; the second
  // leaves its objects loose), so that packing them takes a while.
  for (int i = 0; i < 2000; ++i)
    write_file(ws_ / "d" / std::to_string(i), "v1 " + std::to_string(i));
  ok({"snapshot", "--tag", "first"});
  for (int i = 0; i < 2000; ++i)
    write_file(ws_ / "d" / std::to_string(i), "v2 " + std::to_string(i));
  ok({"snapshot", "--tag", "second"});

  // libgit2's pack builder creates pack_git2_* first, then looks for deltas and writes.
  bool killed = testing_support::kill_on_creation(pack_dir(), "pack_git2_",
                                                  [&] { return start({"maintenance"}); });
  ASSERT_TRUE(killed) << "the maintenance ended before it could be killed";
  std::vector<std::string> leftovers = in_pack_dir("pack_git2_");
  ASSERT_EQ(leftovers.size(), 1u) << "what a killed maintenance leaves";

  // Young, it could be a live writer's: kept.
  ok({"gc"});
  EXPECT_EQ(in_pack_dir("pack_git2_"), leftovers);

  // Once older than prune_grace (1h), the next gc removes it; a young temporary pack (a
  // first capture's, being written) stays.
  age(pack_dir() / leftovers[0], std::chrono::hours(2));
  write_file(pack_dir() / "tmp_pack_live01", "PACK");
  std::string out = ok({"gc"});
  EXPECT_TRUE(in_pack_dir("pack_git2_").empty()) << out;
  EXPECT_NE(out.find("removed 1 temporary file of interrupted writers"), std::string::npos) << out;
  EXPECT_EQ(in_pack_dir("tmp_pack_"), std::vector<std::string>{"tmp_pack_live01"});

  // Nothing else went: a checkpoint restores, and git finds the repository sound.
  ok({"restore", "first"});
  EXPECT_EQ(testing_support::read_file(ws_ / "d" / "7"), "v1 7");
  CommandResult fsck = testing_support::run_command(
      {"git", "--git-dir", (store_ / "repo.git").string(), "fsck", "--strict"}, temp_.path());
  EXPECT_EQ(fsck.exit_code, 0) << fsck.err;
}

bool alive(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

TEST_F(LeftoversTest, AnAgentKilledWithSigkillLeavesNoProcessWritingTheWorkspace) {
  // The agent starts a writer that leaves its session and is orphaned (a double fork),
  // then waits to be killed.
  fs::path writer_pid = temp_ / "writer.pid";
  fs::path agent_pid = temp_ / "agent.pid";
  std::string script = "(setsid sh -c 'echo $$ > " + writer_pid.string() +
                       "; while :; do echo tick >> bg.txt; sleep 0.02; done' "
                       "</dev/null >/dev/null 2>&1 &); echo $$ > " +
                       agent_pid.string() + "; while :; do sleep 0.1; done";
  write_file(config_,
             "watch:\n  daemon: off\nmaintenance:\n  auto: false\npolicy:\n  kill_grace: 1s\n");
  CommandResult run;
  std::thread runner([&] {
    run = shadowbox({"run", "--agent", "claude-sdk", "--run-id", "r", "--", "sh", "-c", script});
  });
  pid_t writer = 0;
  pid_t agent = 0;
  for (int i = 0; i < 1000 && (writer == 0 || agent == 0 || !fs::exists(ws_ / "bg.txt")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::string w = fs::exists(writer_pid) ? testing_support::read_file(writer_pid) : "";
    std::string a = fs::exists(agent_pid) ? testing_support::read_file(agent_pid) : "";
    if (w.find('\n') != std::string::npos) writer = std::stoi(w);
    if (a.find('\n') != std::string::npos) agent = std::stoi(a);
  }
  ASSERT_GT(agent, 0) << "the agent never started";
  ASSERT_GT(writer, 0) << "the agent's writer never started";
  ::kill(agent, SIGKILL);
  runner.join();
  EXPECT_EQ(run.exit_code, 128 + SIGKILL) << run.err;

  // When run has returned, the writer is gone (it was ended and reaped), ...
  bool gone = !alive(writer);
  for (int i = 0; i < 50 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gone = !alive(writer);
  }
  if (!gone) ::kill(writer, SIGKILL);
  EXPECT_TRUE(gone) << "the agent's writer outlived the run";
  // ... and the run's last checkpoint holds the file as the writer left it.
  CommandResult last = testing_support::run_command(
      {"git", "--git-dir", (store_ / "repo.git").string(), "show", "refs/shadowbox/runs/r:bg.txt"},
      temp_.path());
  EXPECT_EQ(last.exit_code, 0) << last.err;
  EXPECT_EQ(last.out, testing_support::read_file(ws_ / "bg.txt"))
      << "the workspace changed after the run's end was recorded";
}

}  // namespace
