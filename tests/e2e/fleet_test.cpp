// Two workers of a fleet with the real Claude Code CLI against the mock Messages API,
// one redis-server on a loopback port and one bare git remote: worker A runs an agent
// and is killed with -9 mid-run; worker B, in an empty directory with a store of its
// own, recovers the run (once A's lease expired): the workspace exactly A's last
// checkpoint, the agent resumed with its history under B's path; A's later resume is
// refused with B's name; the remote is browsable with plain git. Two workers whose runs
// share a budget stop at its one step limit. A Redis restarted (empty) mid-run loses
// nothing. A worker whose run was taken over (--force) stops its agent at the next tool
// boundary and writes nothing more for the run.
#include <signal.h>
#include <sys/wait.h>

#include <random>
#include <sstream>
#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "fleet/redis_client.hpp"
#include "fleet/run_registry.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/claude_code_home.hpp"
#include "loopback_services.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

// One machine of the fleet: its workspace, store and config.
struct Worker {
  std::string id;
  fs::path ws;
  fs::path store;
  fs::path config;
};

class FleetTest : public ::testing::Test {
 protected:
  FleetTest() {
    std::random_device rd;
    secret_ = "sk-ant-test-" + std::to_string(rd());
    testing_support::init_bare_remote(remote_);
  }

  Worker worker(const std::string& id, const std::string& more_config = "") {
    Worker w{id, temp_.path() / id / "ws", temp_.path() / id / "store",
             temp_.path() / id / "shadowbox.yaml"};
    fs::create_directories(w.ws);
    w.ws = fs::canonical(w.ws);
    testing_support::write_file(
        w.config, "fleet:\n  redis: " + redis_.url() + "\n  remote: " + remote_.string() +
                      "\n  worker_id: " + id + "\n  lease_ttl: 2s\n" + more_config);
    return w;
  }

  void start_mock(const std::string& name, const std::string& scenario) {
    testing_support::write_file(temp_.path() / (name + ".json"), scenario);
    server_ = std::make_unique<e2e::MockServer>(temp_.path() / (name + ".json"),
                                                temp_.path() / (name + ".log"));
  }

  std::vector<std::string> env(const Worker& w) const {
    std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
    const char* path = std::getenv("PATH");
    return {"HOME=" + (temp_.path() / w.id / "user-home").string(),
            "ANTHROPIC_BASE_URL=" + server_->base_url(),
            "ANTHROPIC_API_KEY=" + secret_,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "IS_SANDBOX=1",
            "SHADOWBOX_CONFIG=",
            "PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin")};
  }

  std::vector<std::string> argv(const Worker& w, std::vector<std::string> args) const {
    std::vector<std::string> out = {SHADOWBOX_BIN,    "--workspace", w.ws.string(),    "--store",
                                    w.store.string(), "--config",    w.config.string()};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }

  CommandResult shadowbox(const Worker& w, std::vector<std::string> args) {
    return run_command(argv(w, std::move(args)), w.ws, env(w), "", std::chrono::seconds(180));
  }

  pid_t start_in_own_group(const Worker& w, std::vector<std::string> args) const {
    std::vector<std::string> a = argv(w, std::move(args));
    std::vector<std::string> environment = env(w);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      for (const std::string& e : environment) ::putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> raw;
      for (const std::string& arg : a) raw.push_back(const_cast<char*>(arg.c_str()));
      raw.push_back(nullptr);
      ::dup2(::open("/dev/null", O_WRONLY), STDOUT_FILENO);
      if (::chdir(w.ws.c_str()) == 0) ::execv(raw[0], raw.data());
      ::_exit(127);
    }
    ::setpgid(pid, pid);
    return pid;
  }

  // The run's entry in `fleet runs --json` as worker w sees it (null if none).
  Poco::JSON::Object::Ptr fleet_run(const Worker& w, const std::string& run) {
    CommandResult r = shadowbox(w, {"--json", "fleet", "runs"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    if (r.exit_code != 0) return nullptr;
    Poco::JSON::Parser parser;
    auto runs = parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
    for (std::size_t i = 0; i < runs->size(); ++i) {
      Poco::JSON::Object::Ptr o = runs->getObject(static_cast<unsigned>(i));
      if (o->getValue<std::string>("run") == run) return o;
    }
    return nullptr;
  }

  // Waits (60 s at most) until run is in the registry with its agent session.
  bool eventually_running(const Worker& w, const std::string& run) {
    for (int i = 0; i < 300; ++i) {
      Poco::JSON::Object::Ptr info = fleet_run(w, run);
      if (info && !info->optValue<std::string>("session_id", "").empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  std::string remote_git(const std::vector<std::string>& args) {
    return testing_support::git_at(remote_, args);
  }

  // Whether worker a's agent hung after its two calls with both on the remote (waits up
  // to a minute).
  bool wait_until_both_calls_pushed(const Worker& a) {
    bool pushed = false;
    for (int i = 0; i < 240 && !pushed; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      bool hung = false;
      for (const Poco::JSON::Object::Ptr& req : server_->requests()) {
        if (req->getValue<bool>("main") && !req->isNull("step") &&
            req->getValue<int>("step") == 2) {
          hung = true;
        }
      }
      if (!hung) continue;
      // Both calls ended, and the run's newest checkpoint is the remote's (the record's
      // lag may predate the last boundary: the refs themselves are compared).
      Poco::JSON::Object::Ptr info = fleet_run(a, "job");
      std::string local = run_command({"git", "--git-dir", (a.store / "repo.git").string(),
                                       "rev-parse", fsnap::layout::run_ref("job")})
                              .out;
      pushed = info && std::stoi(info->optValue<std::string>("calls", "0")) == 2 &&
               run_command({"git", "--git-dir", remote_.string(), "rev-parse", "-q", "--verify",
                            fsnap::layout::run_ref("job")})
                       .out == local;
    }
    return pushed;
  }

  // Whether the session's transcript reached the remote too (preserved at each boundary,
  // pushed after).
  bool wait_until_transcript_pushed() {
    bool home_pushed = false;
    for (int i = 0; i < 100 && !home_pushed; ++i) {
      home_pushed = run_command({"git", "--git-dir", remote_.string(), "grep", "-q", "-F",
                                 "toolu_a2", fsnap::layout::home_ref("job")})
                        .exit_code == 0;
      if (!home_pushed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return home_pushed;
  }

  // B cannot take the run while A's lease lives; the run shows as orphaned once it ends.
  void expect_no_recovery_while_leased(const Worker& b) {
    CommandResult early = shadowbox(b, {"recover", "job", "--", "-p", "continue"});
    EXPECT_EQ(early.exit_code, 1);
    EXPECT_NE(early.err.find("belongs to worker 'worker-a'"), std::string::npos) << early.err;
    EXPECT_TRUE(fs::is_empty(b.ws)) << "a refused recovery wrote into the workspace";
    std::this_thread::sleep_for(std::chrono::milliseconds(2200));
    CommandResult table = shadowbox(b, {"fleet", "runs"});
    EXPECT_NE(table.out.find("orphaned"), std::string::npos)
        << "a running run without a lease is shown as orphaned\n"
        << table.out;
  }

  // After the recovery: the workspace is A's last checkpoint (checked by the agent's
  // first call, before anything else changes it), the model saw the calls A made, and
  // the agent worked on.
  void expect_recovered_where_a_stopped(const Worker& b,
                                        const testing_support::Manifest& at_crash) {
    EXPECT_EQ(testing_support::read_file(b.ws.parent_path() / "seen.txt"), "./a.txt\n./b.txt\n");
    testing_support::Manifest now = testing_support::take_manifest(b.ws);
    now.erase("c.txt");
    EXPECT_EQ(testing_support::describe_difference(at_crash, now), "");
    EXPECT_EQ(testing_support::read_file(b.ws / "c.txt"), "on B\n");
    std::vector<Poco::JSON::Object::Ptr> requests = e2e::main_requests(server_->requests());
    ASSERT_FALSE(requests.empty());
    std::ostringstream first;
    requests.front()->stringify(first);
    EXPECT_NE(first.str().find("toolu_a2"), std::string::npos) << first.str();
  }

  // The fleet's record: B owns the run, complete, A's session then B's, all pushed, released.
  void expect_fleet_record(const Worker& b, const std::string& session_a) {
    Poco::JSON::Object::Ptr info = fleet_run(b, "job");
    ASSERT_TRUE(info);
    EXPECT_EQ(info->getValue<std::string>("owner"), "worker-b");
    EXPECT_EQ(info->getValue<std::string>("status"), "complete");
    EXPECT_EQ(info->getValue<std::string>("session_ids").rfind(session_a, 0), 0u)
        << "A's session first, then B's resumed one: "
        << info->getValue<std::string>("session_ids");
    EXPECT_EQ(info->getValue<std::string>("unpushed_checkpoints"), "0");
    EXPECT_TRUE(info->isNull("lease_left_ms")) << "released at the end";
  }

  // Claude Code keeps sessions by working directory: A's session is under B's path now.
  void expect_session_moved_to_b(const Worker& a, const Worker& b, const std::string& session_a) {
    std::string files =
        remote_git({"ls-tree", "-r", "--name-only", fsnap::layout::home_ref("job")});
    std::string moved = ".claude/projects/" + hooks::claude_code_project_dir(b.ws.string()) + "/" +
                        session_a + ".jsonl";
    EXPECT_NE(files.find(moved), std::string::npos) << moved << " not in\n" << files;
    EXPECT_EQ(files.find(hooks::claude_code_project_dir(a.ws.string())), std::string::npos)
        << files;
  }

  // The whole run, A's calls and B's, with their records, in plain git on the remote;
  // never the API key.
  void expect_whole_run_on_the_remote() {
    std::string log =
        remote_git({"log", "--notes=shadowbox/*", "--format=%N", fsnap::layout::run_ref("job")});
    for (const char* id : {"toolu_a1", "toolu_a2", "toolu_b1", "toolu_b2"}) {
      EXPECT_NE(log.find(id), std::string::npos) << id << " missing from\n" << log;
    }
    EXPECT_EQ(log.find(secret_), std::string::npos) << "the API key reached the remote";
    EXPECT_EQ(run_command({"git", "--git-dir", remote_.string(), "grep", "-q", "-F", secret_,
                           fsnap::layout::home_ref("job")})
                  .exit_code,
              1)
        << "the API key reached the remote";
  }

  testing_support::TempDir temp_;
  testing_support::RedisServer redis_{temp_.path()};
  fs::path remote_ = temp_.path() / "remote.git";
  std::string secret_;
  std::unique_ptr<e2e::MockServer> server_;
};

TEST_F(FleetTest, AKilledWorkersRunIsRecoveredOnAnotherMachine) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  Worker a = worker("worker-a");
  Worker b = worker("worker-b");
  testing_support::write_file(a.ws / "notes" / "kept.txt", "there before the run\n");
  start_mock("first", R"({"steps":[
    {"tool":"Write","id":"toolu_a1","input":{"file_path":")" +
                          (a.ws / "a.txt").string() + R"(","content":"written on A\n"}},
    {"tool":"Bash","id":"toolu_a2","input":{"command":"echo second > b.txt; rm notes/kept.txt","description":"b"}},
    {"hang":true}]})");
  pid_t pid = start_in_own_group(
      a, {"run", "--run-id", "job", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  ASSERT_TRUE(wait_until_both_calls_pushed(a)) << "worker A's two calls never reached the remote";
  std::string session_a = fleet_run(a, "job")->optValue<std::string>("session_id", "");
  ASSERT_FALSE(session_a.empty());
  ASSERT_TRUE(wait_until_transcript_pushed()) << "the transcript never reached the remote";
  testing_support::Manifest at_crash = testing_support::take_manifest(a.ws);
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);

  expect_no_recovery_while_leased(b);
  // B takes the run once the lease has expired.
  start_mock("second", R"({"steps":[
    {"tool":"Bash","id":"toolu_b1","input":{"command":"find . -type f | sort > ../seen.txt","description":"look"}},
    {"tool":"Bash","id":"toolu_b2","input":{"command":"echo on B > c.txt","description":"c"}},
    {"text":"recovered"}]})");
  CommandResult recovered =
      shadowbox(b, {"recover", "job", "--", "-p", "continue", "--dangerously-skip-permissions"});
  ASSERT_EQ(recovered.exit_code, 0) << recovered.out << recovered.err;
  expect_recovered_where_a_stopped(b, at_crash);
  expect_fleet_record(b, session_a);
  expect_session_moved_to_b(a, b, session_a);
  // Worker A comes back: its resume of the run is refused with the owner's name.
  CommandResult again = shadowbox(a, {"resume", "job", "--validation", "none", "--", "-p", "x"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("belongs to worker 'worker-b'"), std::string::npos) << again.err;

  expect_whole_run_on_the_remote();
}

TEST_F(FleetTest, TwoWorkersWithASharedBudgetStopAtOneLimit) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  // Both agents repeat one call: the repeat guard is off, so that the budget stops them.
  const std::string budget =
      "policy:\n  shared_budget: team\n  max_steps: 6\n"
      "  repeat: {deny_threshold: 0, halt_threshold: 0}\n";
  Worker a = worker("worker-a", budget);
  Worker b = worker("worker-b", budget);
  fs::path ran = temp_.path() / "ran.txt";  // both agents' calls append here
  start_mock("endless", R"({"steps":[{"loop":{"tool":"Bash","input":{"command":"echo call >> )" +
                            ran.string() + R"(","description":"again"}}}]})");
  pid_t pa = start_in_own_group(
      a, {"run", "--run-id", "ra", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  pid_t pb = start_in_own_group(
      b, {"run", "--run-id", "rb", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  int status_a = 0;
  int status_b = 0;
  ::waitpid(pa, &status_a, 0);
  ::waitpid(pb, &status_b, 0);
  ASSERT_TRUE(WIFEXITED(status_a) && WIFEXITED(status_b));
  EXPECT_EQ(WEXITSTATUS(status_a), 3) << "run ra was not halted";
  EXPECT_EQ(WEXITSTATUS(status_b), 3) << "run rb was not halted";
  std::string text = testing_support::read_file(ran);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 6) << "six calls ran between them";
  for (const char* run : {"ra", "rb"}) {
    Poco::JSON::Object::Ptr info = fleet_run(a, run);
    ASSERT_TRUE(info) << run;
    EXPECT_EQ(info->optValue<std::string>("status", ""), "halted") << run;
    EXPECT_EQ(info->optValue<std::string>("halt_reason", ""), "max_steps") << run;
  }
  // Every attempted call counted once: the six that ran and each run's denied one.
  EXPECT_EQ(redis_.cli({"HGET", "shadowbox:budget:team", "steps"}), "8\n");
}

// Waits (30 s at most) until file exists.
bool wait_for_file(const fs::path& file) {
  for (int i = 0; i < 600 && !fs::exists(file); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return fs::exists(file);
}

TEST_F(FleetTest, ARedisRestartedMidRunLosesNothing) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  Worker a = worker("worker-a");
  fs::path gate = temp_.path() / "gate";
  // Call 1 waits for gate/1 (Redis goes down meanwhile), call 2 runs while it is down,
  // call 3 waits for gate/2 (Redis is back, empty, by then).
  auto waiting = [&](const std::string& name, const std::string& then) {
    return "while [ ! -f " + (gate / name).string() + " ]; do sleep 0.05; done; " + then;
  };
  start_mock("outage", R"({"steps":[
    {"tool":"Bash","id":"toolu_1","input":{"command":")" +
                           waiting("1", "echo one > one.txt; touch ../ran-1") +
                           R"(","description":"one"}},
    {"tool":"Bash","id":"toolu_2","input":{"command":"echo two > two.txt; touch ../ran-2","description":"two"}},
    {"tool":"Bash","id":"toolu_3","input":{"command":")" +
                           waiting("2", "echo three > three.txt") +
                           R"(","description":"three"}},
    {"text":"done"}]})");
  fs::create_directories(gate);
  pid_t pid = start_in_own_group(
      a, {"run", "--run-id", "job", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  // Call 1 is running: Redis goes away, the calls go on.
  ASSERT_TRUE(eventually_running(a, "job"));
  redis_.stop();
  testing_support::write_file(gate / "1", "");
  ASSERT_TRUE(wait_for_file(temp_.path() / "worker-a" / "ran-2")) << "call 2 never ran";
  // Its boundaries reached the remote without Redis; then Redis comes back empty.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  redis_.start();
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    back = redis_.cli({"HGET", "shadowbox:run:job", "owner"}) == "worker-a\n";
  }
  EXPECT_TRUE(back) << "the run's lease was never learned back";
  testing_support::write_file(gate / "2", "");
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  Poco::JSON::Object::Ptr info = fleet_run(a, "job");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->getValue<std::string>("owner"), "worker-a");
  EXPECT_EQ(info->getValue<std::string>("status"), "complete");
  EXPECT_EQ(info->getValue<std::string>("calls"), "3");
  EXPECT_EQ(info->getValue<std::string>("unpushed_checkpoints"), "0");
  // Every checkpoint of the run is on the remote, with its record.
  CommandResult local = run_command({"git", "--git-dir", (a.store / "repo.git").string(),
                                     "rev-parse", fsnap::layout::run_ref("job")});
  EXPECT_EQ(remote_git({"rev-parse", fsnap::layout::run_ref("job")}), local.out);
  std::string log =
      remote_git({"log", "--notes=shadowbox/*", "--format=%N", fsnap::layout::run_ref("job")});
  for (const char* id : {"toolu_1", "toolu_2", "toolu_3"}) {
    EXPECT_NE(log.find(id), std::string::npos) << id;
  }
}

TEST_F(FleetTest, AWorkerThatLostItsRunStopsItsAgentAndWritesNothingMore) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  Worker a = worker("worker-a");
  fs::path gate = temp_.path() / "gate";
  start_mock("lost", R"({"steps":[
    {"tool":"Bash","id":"toolu_1","input":{"command":"while [ ! -f )" +
                         gate.string() +
                         R"( ]; do sleep 0.05; done; echo one > one.txt","description":"one"}},
    {"tool":"Bash","id":"toolu_2","input":{"command":"echo two > two.txt","description":"two"}},
    {"text":"done"}]})");
  pid_t pid = start_in_own_group(
      a, {"run", "--run-id", "job", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  ASSERT_TRUE(eventually_running(a, "job"));
  // Call 1 is running when worker B takes the run by force (as `recover --force` does).
  std::string remote_before;
  for (int i = 0; i < 100 && remote_before.empty(); ++i) {
    Poco::JSON::Object::Ptr info = fleet_run(a, "job");
    if (info && info->optValue<std::string>("unpushed_checkpoints", "") == "0" &&
        info->optValue<std::string>("steps", "") == "1") {
      remote_before = remote_git({"rev-parse", fsnap::layout::run_ref("job")});
    }
    if (remote_before.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(remote_before.empty()) << "call 1's pre-tool checkpoint never reached the remote";
  {
    fleet::RedisClient client(fleet::RedisEndpoint::parse(redis_.url()));
    fleet::RunRegistry registry(client);
    fleet::Lease b = registry.take_over("job", "worker-b", std::chrono::seconds(30), true);
    ASSERT_TRUE(registry.publish(b, {{"status", "recovering"}}));
  }
  // A notices at its next renewal and records the loss in its own ledger.
  bool recorded = false;
  for (int i = 0; i < 100 && !recorded; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CommandResult log = shadowbox(a, {"log", "--run", "job", "-n", "3", "--checkpoints"});
    recorded = log.out.find("worker worker-b took run job over") != std::string::npos;
  }
  ASSERT_TRUE(recorded) << "worker A never recorded that it lost the run";
  testing_support::write_file(gate, "");
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << "the run was not stopped";
  EXPECT_TRUE(fs::exists(a.ws / "one.txt")) << "the call in flight was cut short";
  EXPECT_FALSE(fs::exists(a.ws / "two.txt")) << "the next call ran";
  // Nothing more of A's reached the remote or the record.
  EXPECT_EQ(remote_git({"rev-parse", fsnap::layout::run_ref("job")}), remote_before);
  Poco::JSON::Object::Ptr info = fleet_run(a, "job");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->getValue<std::string>("owner"), "worker-b");
  EXPECT_EQ(info->getValue<std::string>("status"), "recovering");
}

}  // namespace
