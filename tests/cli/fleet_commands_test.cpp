// The fleet from the command line, with a real redis-server and a bare remote, and a
// plain command as the agent: a run pushed and registered, Redis unreachable at the
// start (an error, or a local run when fleet.required is false), a remote that is away
// (the queue holds, `fleet runs` shows the lag, `fleet push` catches up), and the clear
// errors of recover and fleet without what they need.
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"
#include "loopback_services.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

class FleetCommandsTest : public ::testing::Test {
 protected:
  FleetCommandsTest() {
    fs::create_directories(ws_);
    init_remote();
  }

  void init_remote() { testing_support::init_bare_remote(remote_); }

  std::string config(const std::string& redis_url, const std::string& more = "") const {
    return "fleet:\n  redis: " + redis_url + "\n  remote: " + remote_.string() +
           "\n  worker_id: worker-a\n  lease_ttl: 2s\n" + more;
  }

  CommandResult shadowbox(const std::string& config_text, std::vector<std::string> args) {
    testing_support::write_file(temp_.path() / "config.yaml", config_text);
    std::vector<std::string> argv = {SHADOWBOX_BIN,
                                     "--workspace",
                                     ws_.string(),
                                     "--store",
                                     store_.string(),
                                     "--config",
                                     (temp_.path() / "config.yaml").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG="}, "", std::chrono::seconds(60));
  }

  Poco::JSON::Object::Ptr fleet_run(const std::string& run) {
    CommandResult r = shadowbox(config(redis_.url()), {"--json", "fleet", "runs"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Poco::JSON::Parser parser;
    auto runs = parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
    for (std::size_t i = 0; i < runs->size(); ++i) {
      if (runs->getObject(static_cast<unsigned>(i))->getValue<std::string>("run") == run) {
        return runs->getObject(static_cast<unsigned>(i));
      }
    }
    return nullptr;
  }

  std::string remote_ref(const std::string& ref) {
    CommandResult r =
        run_command({"git", "--git-dir", remote_.string(), "rev-parse", "-q", "--verify", ref});
    return r.exit_code == 0 ? r.out.substr(0, 40) : "";
  }
  std::string local_ref(const std::string& ref) {
    CommandResult r = run_command(
        {"git", "--git-dir", (store_ / "repo.git").string(), "rev-parse", "-q", "--verify", ref});
    return r.exit_code == 0 ? r.out.substr(0, 40) : "";
  }

  testing_support::TempDir temp_;
  testing_support::RedisServer redis_{temp_.path()};
  fs::path ws_ = temp_.path() / "ws";
  fs::path store_ = temp_.path() / "store";
  fs::path remote_ = temp_.path() / "remote.git";
};

TEST_F(FleetCommandsTest, ARunIsRegisteredAndPushedWithItsRecords) {
  CommandResult r = shadowbox(config(redis_.url()), {"run", "--agent", "claude-sdk", "--run-id",
                                                     "r1", "--", "sh", "-c", "echo one > a.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Poco::JSON::Object::Ptr info = fleet_run("r1");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->getValue<std::string>("owner"), "worker-a");
  EXPECT_EQ(info->getValue<std::string>("status"), "complete");
  EXPECT_EQ(info->getValue<std::string>("unpushed_checkpoints"), "0");
  EXPECT_EQ(info->getValue<std::string>("workspace"), ws_.string());
  EXPECT_EQ(info->getValue<std::string>("agent"), "claude-sdk");
  EXPECT_EQ(info->getValue<std::string>("checkpoints"), "2");
  EXPECT_TRUE(info->isNull("lease_left_ms")) << "released when the run ended";
  std::string tip = local_ref(fsnap::layout::run_ref("r1"));
  ASSERT_FALSE(tip.empty());
  EXPECT_EQ(remote_ref(fsnap::layout::run_ref("r1")), tip);
  CommandResult log =
      run_command({"git", "--git-dir", remote_.string(), "log", "--notes=shadowbox/*",
                   "--format=%N", fsnap::layout::run_ref("r1")});
  EXPECT_NE(log.out.find("run started: sh -c"), std::string::npos) << log.out;
  // The table too.
  CommandResult table = shadowbox(config(redis_.url()), {"fleet", "runs"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("worker-a"), std::string::npos) << table.out;
}

TEST_F(FleetCommandsTest, TheRecordsCommandLineIsRedactedAsTheLedgerIs) {
  const std::string token = "sk-ant-api03-" + std::string(24, 'Q');
  CommandResult r = shadowbox(config(redis_.url()), {"run", "--agent", "claude-sdk", "--run-id",
                                                     "r1", "--", "sh", "-c", "true " + token});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string run_json = redis_.cli({"HGET", "shadowbox:run:r1", "run_json"});
  EXPECT_NE(run_json.find("[REDACTED]"), std::string::npos) << run_json;
  EXPECT_EQ(run_json.find(token), std::string::npos) << run_json;
}

TEST_F(FleetCommandsTest, TheRecordsCommandLineHoldsNoSecretJsonWouldEscape) {
  // run.json writes the command line as JSON: a '"' or '\' of a secret comes escaped.
  const std::string secret = R"(pa"ss\word-0123)";
  testing_support::write_file(temp_.path() / "config.yaml",
                              config(redis_.url(), "run:\n  secrets: [FLEET_TEST_SECRET]\n"));
  CommandResult r = run_command(
      {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store", store_.string(), "--config",
       (temp_.path() / "config.yaml").string(), "run", "--agent", "claude-sdk", "--run-id", "r1",
       "--", "sh", "-c", "true", "--password=" + secret},
      ws_, {"SHADOWBOX_CONFIG=", "FLEET_TEST_SECRET=" + secret}, "", std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string run_json = redis_.cli({"HGET", "shadowbox:run:r1", "run_json"});
  EXPECT_EQ(run_json.find(secret), std::string::npos) << run_json;
  EXPECT_EQ(run_json.find(R"(pa\"ss\\word-0123)"), std::string::npos) << run_json;
  EXPECT_NE(run_json.find("--password=[REDACTED]"), std::string::npos) << run_json;
  Poco::JSON::Parser parser;
  EXPECT_NO_THROW(parser.parse(run_json)) << "recover reads it back";
}

TEST_F(FleetCommandsTest, RedisUnreachableAtTheStartIsAClearErrorOrALocalRun) {
  std::string dead = "redis://127.0.0.1:" + std::to_string(testing_support::free_loopback_port());
  CommandResult r = shadowbox(config(dead), {"run", "--agent", "claude-sdk", "--run-id", "r1", "--",
                                             "sh", "-c", "echo one > a.txt"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot reach Redis at 127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(ws_ / "a.txt")) << "the agent ran without the fleet";
  EXPECT_FALSE(fs::exists(fsnap::layout::run_dir(store_, "r1"))) << "the run was started";

  CommandResult local = shadowbox(
      config(dead, "  required: false\n"),
      {"run", "--agent", "claude-sdk", "--run-id", "r1", "--", "sh", "-c", "echo one > a.txt"});
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_NE(local.err.find("running locally"), std::string::npos) << local.err;
  EXPECT_TRUE(fs::exists(ws_ / "a.txt"));
  EXPECT_EQ(remote_ref(fsnap::layout::run_ref("r1")), "") << "a local run pushes nothing";
}

TEST_F(FleetCommandsTest, AnAbsentRemoteKeepsTheQueueAndFleetPushCatchesUp) {
  fs::remove_all(remote_);
  CommandResult r = shadowbox(config(redis_.url()), {"run", "--agent", "claude-sdk", "--run-id",
                                                     "r1", "--", "sh", "-c", "echo one > a.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cannot push to the fleet's remote"), std::string::npos) << r.err;
  Poco::JSON::Object::Ptr info = fleet_run("r1");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->getValue<std::string>("unpushed_checkpoints"), "2");  // opening, closing
  EXPECT_NE(info->getValue<std::string>("push_error"), "");
  CommandResult table = shadowbox(config(redis_.url()), {"fleet", "runs"});
  EXPECT_NE(table.err.find("cannot push"), std::string::npos) << table.err;

  CommandResult still = shadowbox(config(redis_.url()), {"fleet", "push"});
  EXPECT_EQ(still.exit_code, 1);
  EXPECT_NE(still.err.find("run r1:"), std::string::npos) << still.err;
  init_remote();
  CommandResult pushed = shadowbox(config(redis_.url()), {"fleet", "push"});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.err;
  EXPECT_NE(pushed.out.find("run r1: 3 refs pushed"), std::string::npos)  // runs, sessions, notes
      << pushed.out;
  EXPECT_EQ(remote_ref(fsnap::layout::run_ref("r1")), local_ref(fsnap::layout::run_ref("r1")));
  info = fleet_run("r1");
  EXPECT_EQ(info->getValue<std::string>("unpushed_checkpoints"), "0");
  EXPECT_EQ(info->getValue<std::string>("push_error"), "");
}

TEST_F(FleetCommandsTest, RecoverAndFleetSayWhatTheyNeed) {
  CommandResult unknown = shadowbox(config(redis_.url()), {"recover", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("the fleet knows no run 'nope'"), std::string::npos) << unknown.err;
  for (std::vector<std::string> args :
       {std::vector<std::string>{"recover", "r1"}, std::vector<std::string>{"fleet", "runs"}}) {
    CommandResult none = shadowbox("", args);
    EXPECT_EQ(none.exit_code, 1) << args[0];
    EXPECT_NE(none.err.find("the config has no fleet section"), std::string::npos) << none.err;
  }
  CommandResult bad = shadowbox(config(redis_.url()), {"fleet", "list"});
  EXPECT_EQ(bad.exit_code, 2);
  // Another worker's run is not pushed by this one.
  shadowbox(config(redis_.url()), {"run", "--agent", "claude-sdk", "--run-id", "r1", "--", "true"});
  std::string other = config(redis_.url());
  other.replace(other.find("worker-a"), 8, "worker-b");
  CommandResult not_mine = shadowbox(other, {"fleet", "push", "r1"});
  EXPECT_EQ(not_mine.exit_code, 1);
  EXPECT_NE(not_mine.err.find("belongs to worker 'worker-a'"), std::string::npos) << not_mine.err;
}

}  // namespace
