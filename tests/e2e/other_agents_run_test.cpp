// Codex CLI and Gemini CLI under `shadowbox run`, each the real pinned CLI against its
// scripted mock (fixtures/mock-openai, fixtures/mock-gemini): every tool call between a
// pre-tool and a post-tool checkpoint with its tool name and id, a failing shell command
// rolled back and the model told, the agent's session in `runs --json`, the user's own
// agent configuration carried in and left byte for byte as it was, no credential in any
// git object, a call containment denies blocked, the model spend read from the agent's
// session files so that the cost ceiling holds, the same call asked again and again
// denied then halted as a loop, kill -9 then `resume` with the earlier history sent to
// the model, and in a fleet kill -9 then `recover` on another worker.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <random>
#include <sstream>
#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "loopback_services.hpp"
#include "terminal.hpp"

namespace {

namespace fs = boost::filesystem;
using Poco::JSON::Array;
using Poco::JSON::Object;
using testing_support::CommandResult;
using testing_support::run_command;

// What differs between the agents.
struct Agent {
  std::string name;  // run.json's agent
  e2e::MockApi api;
  std::string binary;
  std::string tool;  // the shell tool's name in its hook events
  // The command that runs it headless with prompt.
  std::function<std::vector<std::string>(const std::string& prompt)> command;
  // What `resume RUN --` adds to give it a new prompt.
  std::function<std::vector<std::string>(const std::string& prompt)> new_prompt;
  // A scenario step running command in the shell.
  std::function<std::string(const std::string& command)> shell;
  // The agent's session id in its stdout.
  std::function<std::string(const std::string& out)> session_id;
  // The user's own configuration: file (relative to the user's HOME) and text (given the
  // mock's URL).
  std::string config_file;
  std::function<std::string(const std::string& url)> config;
  // The environment naming the key and the mock.
  std::function<std::vector<std::string>(const std::string& key, const std::string& url)> env;
  std::string history_key;  // the mock's log field that lists the earlier calls
};

Object::Ptr parse_line(const std::string& line) {
  Poco::JSON::Parser parser;
  return parser.parse(line).extract<Object::Ptr>();
}

Agent codex() {
  Agent a;
  a.name = "codex";
  a.api = e2e::MockApi::kOpenAi;
  a.binary = e2e::codex_binary();
  a.tool = "Bash";
  a.command = [](const std::string& prompt) {
    return std::vector<std::string>{
        "codex",  "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
        "--json", prompt};
  };
  a.new_prompt = [](const std::string& prompt) { return std::vector<std::string>{prompt}; };
  a.shell = [](const std::string& command) {
    return "{\"tool\":\"shell\",\"input\":{\"command\":\"" + command + "\"}}";
  };
  a.session_id = [](const std::string& out) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"thread.started\"") != std::string::npos) {
        return parse_line(line)->optValue<std::string>("thread_id", "");
      }
    }
    return std::string();
  };
  a.config_file = ".codex/config.toml";
  a.config = [](const std::string& url) {
    return "model = \"gpt-5.1-codex\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\n"
           "name = \"mock\"\nbase_url = \"" +
           url +
           "/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
           "request_max_retries = 0\nstream_max_retries = 0\n";
  };
  a.env = [](const std::string& key, const std::string&) {
    return std::vector<std::string>{"OPENAI_API_KEY=" + key};
  };
  a.history_key = "function_call_ids";
  return a;
}

Agent gemini() {
  Agent a;
  a.name = "gemini";
  a.api = e2e::MockApi::kGemini;
  a.binary = e2e::gemini_binary();
  a.tool = "run_shell_command";
  a.command = [](const std::string& prompt) {
    return std::vector<std::string>{"gemini",           "-y", "-o",  "stream-json", "-m",
                                    "gemini-2.5-flash", "-p", prompt};
  };
  a.new_prompt = [](const std::string& prompt) { return std::vector<std::string>{"-p", prompt}; };
  a.shell = [](const std::string& command) {
    return "{\"tool\":\"run_shell_command\",\"input\":{\"command\":\"" + command +
           "\",\"description\":\"step\"}}";
  };
  a.session_id = [](const std::string& out) {
    return parse_line(out.substr(0, out.find('\n')))->optValue<std::string>("session_id", "");
  };
  a.config_file = ".gemini/settings.json";
  a.config = [](const std::string&) {
    return std::string("{\n  \"ui\": {\"hideTips\": true},\n  \"hooks\": {}\n}\n");
  };
  a.env = [](const std::string& key, const std::string& url) {
    return std::vector<std::string>{"GEMINI_API_KEY=" + key, "GOOGLE_GEMINI_BASE_URL=" + url,
                                    "GEMINI_CLI_TRUST_WORKSPACE=true"};
  };
  a.history_key = "function_call_names";
  return a;
}

class OtherAgentRunTest : public e2e::ShadowboxTest,
                          public ::testing::WithParamInterface<const char*> {
 protected:
  OtherAgentRunTest() : agent_(std::string(GetParam()) == "codex" ? codex() : gemini()) {
    std::random_device rd;
    key_ = "sk-test-" + std::to_string(rd()) + std::to_string(rd());
  }

  void start_mock(const std::string& name, const std::string& steps) {
    testing_support::write_file(temp_ / (name + ".json"), "{\"steps\":[" + steps + "]}");
    server_ = std::make_unique<e2e::MockServer>(temp_ / (name + ".json"), temp_ / (name + ".log"),
                                                agent_.api);
    // The user's configuration names the mock (Codex reads its URL from there).
    testing_support::write_file(user_home() / agent_.config_file,
                                agent_.config(server_->base_url()));
  }
  fs::path user_home() const { return temp_ / "user-home"; }

  std::vector<std::string> env() const override {
    std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
    const char* path = std::getenv("PATH");
    std::vector<std::string> out = {"HOME=" + user_home().string(),
                                    "SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
                                    "PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin")};
    for (std::string& v : agent_.env(key_, server_ ? server_->base_url() : "")) {
      out.push_back(std::move(v));
    }
    return out;
  }

  std::vector<std::string> run_args(const std::string& run, const std::string& prompt,
                                    std::vector<std::string> options = {}) {
    std::vector<std::string> args = {"run", "--run-id", run};
    args.insert(args.end(), options.begin(), options.end());
    args.emplace_back("--");
    for (std::string& a : agent_.command(prompt)) args.push_back(std::move(a));
    return args;
  }

  // The run's checkpoints, oldest first.
  std::vector<Object::Ptr> checkpoints(const std::string& run) {
    CommandResult log = shadowbox({"--json", "log", "--run", run});
    EXPECT_EQ(log.exit_code, 0) << log.err;
    Poco::JSON::Parser parser;
    Array::Ptr all = parser.parse(log.out).extract<Array::Ptr>();
    std::vector<Object::Ptr> out;
    for (std::size_t i = all->size(); i-- > 0;)
      out.push_back(all->getObject(static_cast<unsigned>(i)));
    return out;
  }

  std::string all_git_objects() {
    CommandResult all = run_command({"git", "--git-dir", (store_ / "repo.git").string(), "cat-file",
                                     "--batch-all-objects", "--batch"},
                                    temp_.path());
    EXPECT_EQ(all.exit_code, 0) << all.err;
    return all.out;
  }

  Agent agent_;
  std::string key_;
  std::unique_ptr<e2e::MockServer> server_;
};

TEST_P(OtherAgentRunTest, EachCallIsCheckpointedAndAFailedOneRolledBack) {
  ASSERT_TRUE(fs::exists(agent_.binary)) << "run scripts/setup.sh";
  start_mock(
      "s", agent_.shell("echo hello > created.txt && echo key=$" +
                        std::string(agent_.name == "codex" ? "OPENAI_API_KEY" : "GEMINI_API_KEY")) +
               "," + agent_.shell("echo half > broken.txt; exit 3") + ",{\"text\":\"done\"}");
  std::string user_config = testing_support::read_file(user_home() / agent_.config_file);
  CommandResult r = shadowbox(run_args("r1", "do the thing"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("never reached shadowbox"), std::string::npos) << r.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "created.txt"), "hello\n");
  EXPECT_FALSE(fs::exists(ws_ / "broken.txt")) << "the failed call was not rolled back";

  // A pre-tool and a post-tool (or rollback) checkpoint around each call, named.
  std::vector<std::string> seen;
  std::vector<std::string> ids;
  for (const Object::Ptr& c : checkpoints("r1")) {
    std::string phase = c->getValue<std::string>("phase");
    if (phase != "pre_tool" && phase != "post_tool") continue;
    seen.push_back(phase + " " + c->getValue<std::string>("tool_name"));
    ids.push_back(c->getValue<std::string>("tool_call_id"));
  }
  ASSERT_EQ(seen, (std::vector<std::string>{"pre_tool " + agent_.tool, "post_tool " + agent_.tool,
                                            "pre_tool " + agent_.tool}))
      << "the failed call ends in a rollback checkpoint";
  EXPECT_FALSE(ids[0].empty());
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_NE(ids[0], ids[2]);
  // The model was told what came back.
  std::vector<Object::Ptr> main = e2e::main_requests(server_->requests());
  ASSERT_EQ(main.size(), 3u);
  std::string told = e2e::to_json(main[2]);
  EXPECT_NE(told.find("shadowbox rolled back the workspace"), std::string::npos) << told;
  // The person was told in the agent's own place for it (systemMessage): Gemini CLI
  // prints it in the terminal (on stderr in a run without its TUI); Codex keeps it as a
  // warning of the hook's run, which its TUI shows and `codex exec` does not print.
  if (agent_.name == "gemini") {
    EXPECT_NE(r.err.find("Hook system message: shadowbox rolled back the failed "
                         "run_shell_command call " +
                         ids[2] + ": removed broken.txt."),
              std::string::npos)
        << r.err;
  }

  Object::Ptr info = run_info("r1");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("agent"), agent_.name);
  EXPECT_EQ(info->getValue<std::string>("session_id"), agent_.session_id(r.out)) << r.out;
  EXPECT_EQ(info->getValue<std::size_t>("calls"), 2u);
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 1u);
  EXPECT_EQ(info->getValue<std::size_t>("gaps"), 0u);

  // The user's configuration is untouched; the run's copy was removed when it ended.
  EXPECT_EQ(testing_support::read_file(user_home() / agent_.config_file), user_config);
  EXPECT_FALSE(fs::exists(store_ / "runs/r1/home" / agent_.config_file));
  // The key the agent printed was redacted; no object holds it.
  std::string objects = all_git_objects();
  EXPECT_EQ(objects.find(key_), std::string::npos) << "a credential entered the store";
  std::string home_files = run_command({"git", "--git-dir", (store_ / "repo.git").string(),
                                        "ls-tree", "-r", "--name-only", "refs/shadowbox/home/r1"},
                                       temp_.path())
                               .out;
  EXPECT_NE(home_files.find(agent_.session_id(r.out).substr(0, 8)), std::string::npos)
      << home_files;
  // The watch daemon the run's hook processes started (each event goes to it through
  // the thin client) ended with the run: none is left running.
  CommandResult daemon = shadowbox({"--json", "daemon", "status"});
  Poco::JSON::Parser daemon_parser;
  EXPECT_FALSE(daemon_parser.parse(daemon.out).extract<Object::Ptr>()->getValue<bool>("running"))
      << daemon.out;
}

TEST_P(OtherAgentRunTest, ACallContainmentDeniesIsBlockedAndTheRunStops) {
  ASSERT_TRUE(fs::exists(agent_.binary)) << "run scripts/setup.sh";
  start_mock("s", agent_.shell("echo one > one.txt") + "," + agent_.shell("echo two > two.txt") +
                      ",{\"text\":\"done\"}");
  CommandResult r = shadowbox(run_args("limited", "go", {"--max-steps", "1"}));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(fs::exists(ws_ / "one.txt"));
  EXPECT_FALSE(fs::exists(ws_ / "two.txt")) << "the denied call ran";
  Object::Ptr info = run_info("limited");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("halt_reason"), "max_steps");
}

// The repeat guard as shipped (policy.repeat: the third identical call in a row denied,
// the fourth halts the run): before Gemini CLI's own loop check, at the fifth.
TEST_P(OtherAgentRunTest, TheSameCallAgainAndAgainIsDeniedThenHaltsTheRunAsALoop) {
  ASSERT_TRUE(fs::exists(agent_.binary)) << "run scripts/setup.sh";
  fs::path ran = temp_ / "ran.txt";
  start_mock("s", "{\"loop\":" + agent_.shell("echo same >> " + ran.string()) + "}");
  CommandResult r = shadowbox(run_args("looping", "go"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("run looping halted (loop)"), std::string::npos) << r.err;
  std::string text = fs::exists(ran) ? testing_support::read_file(ran) : "";
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << "two calls ran";
  // The third call's denial reached the model (the next request holds it as that call's
  // result).
  bool told = false;
  for (const Object::Ptr& request : e2e::main_requests(server_->requests())) {
    told = told || e2e::to_json(request).find("was asked 3 times in a row") != std::string::npos;
  }
  EXPECT_TRUE(told) << "the model never read the denial";
  Object::Ptr info = run_info("looping");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("halt_reason"), "loop");
  EXPECT_EQ(info->getValue<std::size_t>("steps"), 2u);
  // The denied third and the fourth that stopped the run (Codex may ask once more before
  // its processes are ended: refused too).
  EXPECT_GE(info->getValue<std::size_t>("refused_calls"), 2u);
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 0u);
}

TEST_P(OtherAgentRunTest, ItsModelSpendIsMeteredAndTheCostCeilingHolds) {
  ASSERT_TRUE(fs::exists(agent_.binary)) << "run scripts/setup.sh";
  // $1 per million input tokens, $10 per million output: each request below costs $6.
  testing_support::write_file(
      temp_ / "prices.yaml",
      "policy:\n  prices:\n"
      "    gpt-5.1-codex: {input: 1, output: 10, cache_write_5m: 1, cache_write_1h: 1, "
      "cache_read: 0.1}\n"
      "    gemini-2.5-flash: {input: 1, output: 10, cache_write_5m: 1, cache_write_1h: 1, "
      "cache_read: 0.1}\n");
  auto costly = [&](const std::string& command) {
    std::string step = agent_.shell(command);
    return step.substr(0, step.size() - 1) +
           ",\"usage\":{\"input_tokens\":1000000,\"output_tokens\":500000}}";
  };
  start_mock("s", costly("echo a > a.txt") + "," + costly("echo b > b.txt") + "," +
                      costly("echo c > c.txt") + ",{\"text\":\"done\"}");
  std::vector<std::string> args = {"--config", (temp_ / "prices.yaml").string()};
  for (std::string& a : run_args("costly", "go", {"--max-cost-usd", "10"})) {
    args.push_back(std::move(a));
  }
  CommandResult r = shadowbox(args);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(r.err.find("has no price in policy.prices"), std::string::npos)
      << "the model is priced from the config" << r.err;
  // The first request ($6) let its call run; the second took the spend to $12.
  EXPECT_TRUE(fs::exists(ws_ / "a.txt"));
  EXPECT_FALSE(fs::exists(ws_ / "b.txt")) << "a call past the ceiling ran";
  Object::Ptr info = run_info("costly");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("halt_reason"), "max_cost");
  // Counted as charged: $12 when the call was denied — and a request Codex makes before
  // its process tree is ended (it goes on with its turn after a deny) counts as well.
  double spent = info->getValue<double>("cost_usd");
  EXPECT_GE(spent, 12.0);
  EXPECT_LT(spent, agent_.name == "codex" ? 18.1 : 12.1);
}

// `codex exec` as a user runs it: its sandbox read-only, so a command that writes fails
// (exit 1) — and Codex writes that only after the command's PostToolUse. The call is
// recorded failed, not ok; and the model Codex uses has no price in the default table,
// so the run's cost is an estimate, and the person is told so when the run ends.
TEST_P(OtherAgentRunTest, ACommandItsSandboxStoppedIsFailedAndAnUnpricedCostIsAnEstimate) {
  if (agent_.name != "codex") GTEST_SKIP() << "Codex's read-only sandbox";
  ASSERT_TRUE(fs::exists(agent_.binary)) << "run scripts/setup.sh";
  start_mock("s", agent_.shell("echo x > made.txt") + ",{\"text\":\"done\"}");
  CommandResult r = shadowbox(
      {"run", "--run-id", "ro", "--", "codex", "exec", "--skip-git-repo-check", "--json", "go"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(ws_ / "made.txt")) << "the sandbox let it write";
  Object::Ptr info = run_info("ro");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::size_t>("steps"), 1u);
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 1u) << "logged ok";
  CommandResult log = shadowbox({"log", "--run", "ro"});
  EXPECT_NE(log.out.find("exit code 1"), std::string::npos) << log.out;
  // The cost: gpt-5.1-codex is priced at the table's highest rates.
  EXPECT_FALSE(info->getValue<bool>("cost_exact"));
  EXPECT_EQ(info->getArray("unpriced_models")->getElement<std::string>(0), "gpt-5.1-codex");
  EXPECT_GT(info->getValue<double>("cost_usd"), 0.0);
  EXPECT_NE(r.err.find("run ro's cost, ~$"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is an estimate: 'gpt-5.1-codex' has no price in policy.prices"),
            std::string::npos)
      << r.err;
}

TEST_P(OtherAgentRunTest, AKilledRunIsResumedWithItsHistory) {
  ASSERT_TRUE(fs::exists(agent_.binary)) << "run scripts/setup.sh";
  start_mock("first", agent_.shell("echo one > one.txt") + ",{\"hang\":true}");
  pid_t pid = start_in_own_group(run_args("crash", "first prompt"), /*quiet=*/true);
  // Until the agent waits on its second request and its session data is preserved.
  bool hung = false;
  for (int i = 0; i < 480 && !hung; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    hung = e2e::main_requests(server_->requests()).size() >= 2;
  }
  ASSERT_TRUE(hung) << "the agent never reached the hanging request";
  bool preserved = wait_until_preserved("crash", "echo one > one.txt");
  EXPECT_TRUE(preserved) << "the session's call was never preserved";
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);

  Object::Ptr info = run_info("crash");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("status"), "crashed");
  EXPECT_TRUE(info->getValue<bool>("resumable")) << e2e::to_json(info);
  std::string session = info->getValue<std::string>("session_id");

  start_mock("second", "{\"text\":\"again\"}");
  std::vector<std::string> resume = {"resume", "crash", "--"};
  for (std::string& a : agent_.new_prompt("second prompt")) resume.push_back(std::move(a));
  CommandResult resumed = shadowbox(resume);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  // A resume forks the session, as Claude Code's does: a copy of it goes on.
  std::string forked = agent_.session_id(resumed.out);
  EXPECT_FALSE(forked.empty()) << resumed.out;
  EXPECT_NE(forked, session) << resumed.out;
  std::vector<Object::Ptr> main = e2e::main_requests(server_->requests());
  ASSERT_FALSE(main.empty());
  std::string history = e2e::to_json(main[0]->getArray("user_texts"));
  EXPECT_NE(history.find("first prompt"), std::string::npos) << history;
  EXPECT_NE(history.find("second prompt"), std::string::npos) << history;
  EXPECT_GE(main[0]->getArray(agent_.history_key)->size(), 1u) << e2e::to_json(main[0]);
  Object::Ptr after = run_info("crash");
  EXPECT_EQ(after->getValue<std::string>("session_id"), forked) << e2e::to_json(after);
  EXPECT_EQ(after->getValue<std::string>("status"), "complete");
}

// In a fleet: worker A's run killed with -9, then recovered by worker B — another store,
// an empty directory at another path — with the agent's session resumed there.
TEST_P(OtherAgentRunTest, AKilledRunIsRecoveredByAnotherWorker) {
  ASSERT_TRUE(fs::exists(agent_.binary)) << "run scripts/setup.sh";
  testing_support::RedisServer redis(temp_.path());
  fs::path remote = temp_ / "remote.git";
  testing_support::init_bare_remote(remote);
  auto fleet_config = [&](const std::string& worker) {
    fs::path file = temp_ / (worker + ".yaml");
    testing_support::write_file(file, "fleet:\n  redis: " + redis.url() +
                                          "\n  remote: " + remote.string() +
                                          "\n  worker_id: " + worker + "\n  lease_ttl: 2s\n");
    return file.string();
  };
  std::string config_a = fleet_config("worker-a");
  std::string config_b = fleet_config("worker-b");
  start_mock("first", agent_.shell("echo one > one.txt") + ",{\"hang\":true}");
  std::vector<std::string> run = run_args("crash", "first prompt");
  run.insert(run.begin(), {"--config", config_a});
  pid_t pid = start_in_own_group(run, /*quiet=*/true);
  // Until the agent hangs after its call, and the call's post-tool checkpoint (the run's
  // newest) and the session data are on the remote — pushed within a second of the
  // boundary; a kill before that would leave the recovery the checkpoint before.
  auto tip = [](const fs::path& git_dir) {
    return run_command({"git", "--git-dir", git_dir.string(), "rev-parse", "-q", "--verify",
                        "refs/shadowbox/runs/crash"})
        .out;
  };
  bool pushed = false;
  for (int i = 0; i < 480 && !pushed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    if (e2e::main_requests(server_->requests()).size() < 2) continue;
    std::vector<Object::Ptr> done = checkpoints("crash");
    bool post = std::any_of(done.begin(), done.end(), [](const Object::Ptr& c) {
      return c->getValue<std::string>("phase") == "post_tool";
    });
    pushed = post && tip(store_ / "repo.git") == tip(remote) &&
             run_command({"git", "--git-dir", remote.string(), "grep", "-q", "-F",
                          "echo one > one.txt", "refs/shadowbox/home/crash"})
                     .exit_code == 0;
  }
  ASSERT_TRUE(pushed) << "the session's call never reached the remote";
  Object::Ptr info = run_info("crash");
  ASSERT_FALSE(info.isNull());
  std::string session = info->getValue<std::string>("session_id");
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));  // the lease expires

  fs::path ws_b = temp_ / "elsewhere";  // another path, another directory name
  fs::create_directories(ws_b);
  ws_b = fs::canonical(ws_b);
  start_mock("second", "{\"text\":\"again\"}");
  std::vector<std::string> recover = {
      SHADOWBOX_BIN, "--workspace", ws_b.string(), "--store", (temp_ / "store-b").string(),
      "--config",    config_b,      "recover",     "crash",   "--"};
  for (std::string& a : agent_.new_prompt("second prompt")) recover.push_back(std::move(a));
  CommandResult recovered = run_command(recover, ws_b, env(), "", std::chrono::seconds(180));
  ASSERT_EQ(recovered.exit_code, 0) << recovered.out << recovered.err;
  EXPECT_EQ(testing_support::read_file(ws_b / "one.txt"), "one\n");
  std::string forked = agent_.session_id(recovered.out);
  EXPECT_FALSE(forked.empty()) << recovered.out;
  EXPECT_NE(forked, session) << "recovered as a fork of the session: " << recovered.out;
  std::vector<Object::Ptr> main = e2e::main_requests(server_->requests());
  ASSERT_FALSE(main.empty());
  std::string history = e2e::to_json(main[0]->getArray("user_texts"));
  EXPECT_NE(history.find("first prompt"), std::string::npos) << history;
  EXPECT_NE(history.find("second prompt"), std::string::npos) << history;
}

// The processes whose command line mentions text, but for this test's own.
std::vector<std::string> processes_mentioning(const std::string& text) {
  std::vector<std::string> out;
  for (fs::directory_iterator it("/proc"), end; it != end; ++it) {
    std::string pid = it->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline;
    try {
      cmdline = testing_support::read_file(it->path() / "cmdline");
    } catch (const std::exception&) {
      continue;  // gone meanwhile
    }
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(text) != std::string::npos && cmdline.find("tmux") == std::string::npos) {
      out.push_back(pid + " " + cmdline);
    }
  }
  return out;
}

// Codex's interactive CLI under `shadowbox run`, in a terminal: its calls are recorded,
// and nothing of it outlives the run — left to itself it starts a shared background
// server, in the run's HOME, that goes on after the CLI exits.
TEST(CodexInteractiveRunTest, RecordsItsCallsAndLeavesNoBackgroundServerBehind) {
  ASSERT_TRUE(fs::exists(e2e::codex_binary())) << "run scripts/setup.sh";
  testing_support::TempDir temp("shadowbox-codex-tui");
  fs::path ws = temp / "ws";
  fs::create_directories(ws);
  ws = fs::canonical(ws);
  fs::path store = temp / "store";
  testing_support::write_file(
      temp / "scenario.json",
      "{\"steps\":[" + codex().shell("echo hi > made.txt") + ",{\"text\":\"all done here\"}]}");
  e2e::MockServer server(temp / "scenario.json", temp / "mock.log", e2e::MockApi::kOpenAi);
  testing_support::write_file(temp / "user-home/.codex/config.toml",
                              codex().config(server.base_url()));
  std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
  std::vector<std::string> env = {
      "HOME=" + (temp / "user-home").string(), "OPENAI_API_KEY=sk-test-tui",
      "SHADOWBOX_CONFIG=", "TERM=xterm-256color", "PATH=" + tools + ":/usr/bin:/bin"};
  e2e::Terminal terminal(
      temp.path(), ws, env,
      {SHADOWBOX_BIN, "--workspace", ws.string(), "--store", store.string(), "run", "--run-id",
       "tui", "--", "codex", "--dangerously-bypass-approvals-and-sandbox", "make the file"});
  ASSERT_TRUE(terminal.started()) << terminal.start_error();
  ASSERT_TRUE(terminal.wait_for("all done here", std::chrono::seconds(90))) << terminal.screen();
  EXPECT_EQ(testing_support::read_file(ws / "made.txt"), "hi\n");
  // The TUI offers the slash command as it is typed ("/quit  exit Codex"): Enter once
  // it has.
  terminal.type("/quit");
  ASSERT_TRUE(terminal.wait_for("exit Codex", std::chrono::seconds(10))) << terminal.screen();
  terminal.press("Enter");
  ASSERT_EQ(terminal.wait_exit(std::chrono::seconds(60)), 0) << terminal.screen();
  EXPECT_NE(terminal.screen().find("codex resume"), std::string::npos) << terminal.screen();
  EXPECT_EQ(processes_mentioning((store / "runs/tui/home").string()), std::vector<std::string>{});
  CommandResult log = run_command({SHADOWBOX_BIN, "--workspace", ws.string(), "--store",
                                   store.string(), "log", "--run", "tui", "--checkpoints"},
                                  ws, env);
  EXPECT_NE(log.out.find("pre_tool Bash"), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("post_tool Bash"), std::string::npos) << log.out;
}

INSTANTIATE_TEST_SUITE_P(Agents, OtherAgentRunTest, ::testing::Values("codex", "gemini"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
