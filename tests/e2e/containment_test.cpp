// Containment of a real Claude Code agent under `shadowbox run`, against the mock
// Messages API scripted into an endless loop of tool calls, once per hook transport
// (config hooks.transport: http, command): halted after exactly N tool calls with
// --max-steps N (N steps; the call refused is no step and no failure); about ten $1
// requests with --max-cost-usd 10; a model request that never returns ended by --timeout
// with no process left behind; a tool failing on every call run exactly
// failure_threshold times. `run` exits with 3 and says why; `runs` shows the status, the
// reason, the spend and the figures. A halted run resumes with its limits and its count
// (resume's --max-steps N: N steps in all); `shadowbox abort` stops a run from another
// terminal. The same call asked again and again (the repeat guard as shipped) is denied
// the third time and halts the run as a loop the fourth.
#include <signal.h>

#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/run_halt.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/ledger.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

class ContainmentTest : public ::testing::TestWithParam<std::string> {
 protected:
  ContainmentTest() {
    fs::create_directories(ws_);
    fs::create_directories(outside_);
    ws_ = fs::canonical(ws_);
    hooks::register_agent_run_slice_types();
  }

  // Runs claude -p under `shadowbox run --run-id r1` with the extra run options, the
  // mock answering with scenario, and policy (lines of policy.*, indented by two).
  CommandResult run(const std::string& scenario, const std::vector<std::string>& options,
                    const std::string& policy = "") {
    start_mock(scenario);
    write_config(policy);
    return shadowbox(run_args(options));
  }
  // The config: the transport and policy. The scenarios repeat one call on purpose, so
  // the repeat guard (policy.repeat) is off unless repeat_guard_ is set: the limit a test
  // is about is then the one that trips.
  void write_config(const std::string& policy) {
    std::string lines =
        (repeat_guard_ ? "" : "  repeat: {deny_threshold: 0, halt_threshold: 0}\n") + policy;
    testing_support::write_file(config_, "hooks:\n  transport: " + transport() + "\n" +
                                             (lines.empty() ? "" : "policy:\n" + lines));
  }
  static std::vector<std::string> run_args(const std::vector<std::string>& options) {
    std::vector<std::string> args = {"run", "--run-id", "r1"};
    args.insert(args.end(), options.begin(), options.end());
    for (const char* a : {"--", "claude", "-p", "keep going", "--dangerously-skip-permissions"}) {
      args.push_back(a);
    }
    return args;
  }
  // (Re)starts the mock with scenario, its log empty.
  void start_mock(const std::string& scenario) {
    server_.reset();
    testing_support::write_file(temp_ / "scenario.json", scenario);
    fs::remove(temp_ / "requests.log");
    server_ = std::make_unique<e2e::MockServer>(temp_ / "scenario.json", temp_ / "requests.log");
  }
  CommandResult shadowbox(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN,   "--workspace", ws_.string(),    "--store",
                                     store_.string(), "--config",    config_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, env(), "", std::chrono::seconds(120));
  }
  virtual std::string transport() const { return GetParam(); }
  std::vector<std::string> env() const {
    std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
    const char* path = std::getenv("PATH");
    return {"HOME=" + (temp_ / "user-home").string(),
            "ANTHROPIC_BASE_URL=" + server_->base_url(),
            "ANTHROPIC_API_KEY=sk-ant-test-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "IS_SANDBOX=1",
            "PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin")};
  }
  // A scenario of one tool call repeated forever (each reply reporting usage).
  static std::string endless(const std::string& command, const std::string& usage = "{}") {
    return R"({"usage":)" + usage + R"(,"steps":[{"loop":{"tool":"Bash","input":{"command":")" +
           command + R"(","description":"again"}}}]})";
  }
  Poco::JSON::Object::Ptr run_info() {
    CommandResult r = run_command({SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                   store_.string(), "--config", config_.string(), "--json", "runs"},
                                  ws_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Poco::JSON::Parser parser;
    auto runs = parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
    EXPECT_EQ(runs->size(), 1u) << r.out;
    return runs->getObject(0);
  }
  // Lines of a file (0 if it does not exist).
  static std::size_t lines(const fs::path& file) {
    if (!fs::exists(file)) return 0;
    std::string text = testing_support::read_file(file);
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  // Waits up to 20 s for the agent's nth main-loop request; false if it never came.
  bool wait_for_requests(std::size_t n) const {
    for (int i = 0; i < 400; ++i) {
      if (main_requests() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  std::size_t main_requests() const {
    std::size_t n = 0;
    for (const auto& r : server_->requests()) n += r->getValue<bool>("main") ? 1 : 0;
    return n;
  }
  std::vector<sandbox::LedgerRecord> records() const {
    return sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false)).records("r1");
  }
  // Every transcript of the run's agent, as preserved.
  std::string transcripts() const {
    std::string all;
    fs::path projects = store_ / "runs/r1/home/.claude/projects";
    if (!fs::exists(projects)) return all;
    for (fs::recursive_directory_iterator it(projects), end; it != end; ++it) {
      if (it->path().extension() == ".jsonl") all += testing_support::read_file(it->path());
    }
    return all;
  }
  // Every text the model was sent (tool results and hook context).
  std::string model_saw() const {
    std::string all;
    for (const auto& r : server_->requests()) {
      auto results = r->getArray("tool_results");
      for (std::size_t i = 0; results && i < results->size(); ++i) {
        all += results->getObject(static_cast<unsigned>(i))->getValue<std::string>("text") + "\n";
      }
    }
    return all;
  }
  void expect_halted(const CommandResult& r, const std::string& halt_reason) {
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("run r1 halted (" + halt_reason + ")"), std::string::npos) << r.err;
    Poco::JSON::Object::Ptr info = run_info();
    EXPECT_EQ(info->getValue<std::string>("status"), "halted");
    EXPECT_EQ(info->optValue<std::string>("halt_reason", ""), halt_reason);
    EXPECT_TRUE(info->getValue<bool>("resumable")) << "a halted run can be resumed";
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  fs::path outside_ = temp_ / "outside";
  fs::path config_ = temp_ / "shadowbox.yaml";
  bool repeat_guard_ = false;
  std::unique_ptr<e2e::MockServer> server_;
};

TEST_P(ContainmentTest, MaxStepsHaltsAfterExactlyNToolCalls) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  fs::path ran = outside_ / "ran.txt";
  CommandResult r = run(endless("echo call >> " + ran.string()), {"--max-steps", "4"});
  expect_halted(r, "max_steps");
  EXPECT_EQ(lines(ran), 4u) << "exactly four calls ran";
  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_EQ(info->getValue<std::size_t>("steps"), 4u);
  EXPECT_EQ(info->getValue<std::size_t>("refused_calls"), 1u) << "and a fifth was refused";
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 0u) << "which is no failure";
  EXPECT_EQ(info->getValue<std::size_t>("calls"), 5u);
  EXPECT_NE(r.err.find("5 calls: 4 steps (0 failed, 0 rolled back), 1 refused"), std::string::npos)
      << r.err;
  EXPECT_EQ(main_requests(), 5u) << "the agent stopped at once (continue: false)";
  // The denial is the fifth call's result in the conversation (a resumed session's
  // model reads it), and the stop reason is shown.
  std::string transcript = transcripts();
  EXPECT_NE(transcript.find("shadowbox denied this Bash call: the step limit is reached"),
            std::string::npos);
  EXPECT_NE(transcript.find("shadowbox stopped the run"), std::string::npos);
  std::vector<sandbox::LedgerRecord> all = records();
  ASSERT_FALSE(all.empty());
  std::size_t denied = 0;
  for (const sandbox::LedgerRecord& rec : all) {
    if (rec.phase != fsnap::Phase::kDenied) continue;
    ++denied;
    ASSERT_TRUE(rec.safety_event);
    EXPECT_EQ(rec.safety_event->type, policy::StopReason::kStepLimitExceeded);
  }
  EXPECT_GE(denied, 1u);
}

TEST_P(ContainmentTest, MaxCostHaltsAfterAboutTenDollarRequests) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  fs::path ran = outside_ / "ran.txt";
  // 50,000 output tokens of claude-opus-5-5 ($20 per million): $1 a request.
  CommandResult r =
      run(endless("echo call >> " + ran.string(), R"({"input_tokens":100,"output_tokens":50000})"),
          {"--max-cost-usd", "10"});
  expect_halted(r, "max_cost");
  // The request that crossed the ceiling is paid for; its tool call is not run.
  EXPECT_GE(main_requests(), 10u);
  EXPECT_LE(main_requests(), 11u);
  EXPECT_EQ(lines(ran), main_requests() - 1);
  double cost = run_info()->getValue<double>("cost_usd");
  EXPECT_GE(cost, 10.0);
  EXPECT_LE(cost, 11.1);
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(; cost \$1[01]\.\d{4})"))) << r.err;
}

TEST_P(ContainmentTest, TimeoutEndsAModelRequestThatNeverReturnsAndEveryProcess) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  // The agent starts a background process, then its next model request hangs.
  std::string marker = "4242" + std::to_string(::getpid());
  std::string scenario = R"({"steps":[
      {"tool":"Bash","input":{"command":"nohup sleep )" +
                         marker + R"( >/dev/null 2>&1 & echo $! > )" +
                         (outside_ / "bg.pid").string() +
                         R"(","description":"bg"}},
      {"hang":true}]})";
  auto start = std::chrono::steady_clock::now();
  // The time must let the agent start and run its first call first: under load (two
  // builds beside the suite) that took more than 3 s.
  CommandResult r = run(scenario, {"--timeout", "8s"}, "  kill_grace: 1s\n");
  auto took = std::chrono::steady_clock::now() - start;
  expect_halted(r, "timeout");
  EXPECT_NE(r.err.find("the run's time is up (timeout 8 s)"), std::string::npos) << r.err;
  EXPECT_LT(took, std::chrono::seconds(25));
  // Nothing of the agent is left: not the agent, not what it started.
  std::optional<runs::RunMeta> meta =
      runs::RunMeta::load(fsnap::Store::open(store_, ws_, false), "r1");
  ASSERT_TRUE(meta);
  EXPECT_FALSE(runs::process_alive(meta->agent_pid));
  ASSERT_TRUE(fs::exists(outside_ / "bg.pid")) << "the background process was started";
  long background = std::stol(testing_support::read_file(outside_ / "bg.pid"));
  EXPECT_FALSE(runs::process_alive(background));
  CommandResult ps = run_command({"pgrep", "-f", "sleep " + marker});
  EXPECT_NE(ps.exit_code, 0) << "still running: " << ps.out;
}

TEST_P(ContainmentTest, AToolFailingEveryTimeRunsExactlyFailureThresholdTimes) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  fs::path ran = outside_ / "ran.txt";
  CommandResult r = run(endless("echo call >> " + ran.string() + "; exit 1"), {"--max-steps", "6"},
                        "  circuit_breaker: {failure_threshold: 3, recovery_timeout: 1h}\n");
  // The circuit refuses Bash after three failures; the run goes on until as many calls in
  // a row were refused as the step limit allows steps.
  expect_halted(r, "max_steps");
  EXPECT_EQ(lines(ran), 3u);
  EXPECT_NE(model_saw().find("Bash failed 3 times in a row"), std::string::npos) << model_saw();
  std::size_t circuit_open = 0;
  for (const sandbox::LedgerRecord& rec : records()) {
    if (rec.safety_event && rec.safety_event->type == policy::StopReason::kCircuitOpen) {
      ++circuit_open;
    }
  }
  EXPECT_EQ(circuit_open, 6u) << "calls 4 to 9 were refused by the open circuit";
  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_EQ(info->getValue<std::size_t>("steps"), 3u);
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 3u);
  EXPECT_EQ(info->getValue<std::size_t>("refused_calls"), 7u) << "and the tenth stopped the run";
  if (transport() == "http") {
    // Answered in shadowbox's own process, each decision was told as it was made (the
    // run's safety channel).
    EXPECT_NE(r.err.find("shadowbox: containment (circuit_open): "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("; the run goes on\n"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("shadowbox: containment (max_steps): "), std::string::npos) << r.err;
  }
}

TEST_P(ContainmentTest, AToolInputWithALoneSurrogateIsRecordedContainedAndRolledBack) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  // Node writes a lone surrogate in a string as "\ud800": valid JSON that switched the
  // checkpoints off (the hook "ignored a malformed event" and the call ran unrecorded).
  testing_support::write_file(ws_ / "a.txt", "a\n");
  fs::path ran = outside_ / "ran.txt";
  std::string scenario = R"({"steps":[
      {"tool":"Bash","input":{"command":"rm a.txt; exit 1 # \ud800","description":"x"}},
      {"loop":{"tool":"Bash","input":{"command":"echo call >> )" +
                         ran.string() + R"( # \udfff","description":"again"}}}]})";
  CommandResult r = run(scenario, {"--max-steps", "3"});
  expect_halted(r, "max_steps");
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n") << "the failed call rolled back";
  EXPECT_EQ(lines(ran), 2u) << "the step limit counted every call";
  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_EQ(info->getValue<std::size_t>("gaps"), 0u);
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 1u) << "the refused call is no failure";
  EXPECT_EQ(info->getValue<std::size_t>("rolled_back_calls"), 1u);
  EXPECT_EQ(info->getValue<std::size_t>("refused_calls"), 1u);
  std::size_t pre_tool = 0;
  for (const sandbox::LedgerRecord& rec : records()) {
    if (rec.phase == fsnap::Phase::kPreTool) ++pre_tool;
  }
  EXPECT_EQ(pre_tool, 3u) << "every call that ran has its checkpoint";
}

TEST_P(ContainmentTest, TheSameCallAgainAndAgainIsDeniedThenHaltsTheRunAsALoop) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  fs::path ran = outside_ / "ran.txt";
  repeat_guard_ = true;  // as shipped: the third identical call denied, the fourth halts
  CommandResult r = run(endless("echo same >> " + ran.string()), {});
  expect_halted(r, "loop");
  EXPECT_EQ(lines(ran), 2u) << "two calls ran";
  EXPECT_EQ(main_requests(), 4u) << "the agent asked twice more and was stopped at once";
  // The third call's denial reached the model as that call's result; the fourth stopped
  // the run, and the agent was told so.
  EXPECT_NE(model_saw().find("shadowbox denied this Bash call: the same Bash call with the same "
                             "input was asked 3 times in a row"),
            std::string::npos)
      << model_saw();
  std::string transcript = transcripts();
  EXPECT_NE(transcript.find("was asked 4 times in a row: the agent is looping"), std::string::npos);
  EXPECT_NE(transcript.find("shadowbox stopped the run"), std::string::npos);
  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_EQ(info->getValue<std::size_t>("steps"), 2u);
  EXPECT_EQ(info->getValue<std::size_t>("refused_calls"), 2u);
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 0u);
  std::vector<policy::StopReason> refused;
  for (const sandbox::LedgerRecord& rec : records()) {
    if (rec.phase == fsnap::Phase::kDenied && rec.safety_event) {
      refused.push_back(rec.safety_event->type);
    }
  }
  EXPECT_EQ(refused, (std::vector<policy::StopReason>{policy::StopReason::kRepeatedCall,
                                                      policy::StopReason::kLoop}));
}

// What does not depend on the transport, checked once.
class RunControlTest : public ContainmentTest {
 protected:
  std::string transport() const override { return "http"; }
};

TEST_F(RunControlTest, AHaltedRunResumesWithItsLimitsAndItsCount) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  fs::path ran = outside_ / "ran.txt";
  std::string scenario = endless("echo call >> " + ran.string());
  CommandResult first = run(scenario, {"--max-steps", "3"});
  expect_halted(first, "max_steps");
  ASSERT_EQ(lines(ran), 3u);
  // Resumed as it was, the run is still at its limit: the first call is refused.
  start_mock(scenario);
  CommandResult again = shadowbox({"resume", "r1", "--validation", "relaxed", "--reopen", "--",
                                   "-p", "go on", "--dangerously-skip-permissions"});
  expect_halted(again, "max_steps");
  EXPECT_EQ(lines(ran), 3u);
  // --max-steps 6: six steps in all, so three more calls run; the refused calls were no
  // steps.
  start_mock(scenario);
  CommandResult more =
      shadowbox({"resume", "r1", "--validation", "relaxed", "--reopen", "--max-steps", "6", "--",
                 "-p", "go on", "--dangerously-skip-permissions"});
  expect_halted(more, "max_steps");
  EXPECT_EQ(lines(ran), 6u);
  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_EQ(info->getValue<std::size_t>("steps"), 6u);
  EXPECT_EQ(info->getValue<std::size_t>("refused_calls"), 3u);
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 0u);
  std::optional<runs::RunMeta> meta =
      runs::RunMeta::load(fsnap::Store::open(store_, ws_, false), "r1");
  EXPECT_EQ(meta->limits.max_steps, 6u) << "the new limit is the run's from now on";
}

TEST_F(RunControlTest, AbortStopsARunningAgentFromAnotherTerminal) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  std::string scenario = R"({"steps":[
      {"tool":"Bash","input":{"command":"echo one","description":"one"}},
      {"hang":true}]})";
  start_mock(scenario);
  write_config("  kill_grace: 1s\n");
  CommandResult result;
  std::thread running([&] { result = shadowbox(run_args({})); });
  // Wait for the agent to hang in its second model request.
  bool hung = wait_for_requests(2);
  EXPECT_TRUE(hung) << "the agent never reached the hanging request";
  CommandResult abort = shadowbox({"abort", "r1", "--reason", "enough for today"});
  running.join();
  if (!hung) return;
  EXPECT_EQ(abort.exit_code, 0) << abort.err;
  EXPECT_NE(abort.err.find("run r1 stopped"), std::string::npos) << abort.err;
  expect_halted(result, "aborted");
  EXPECT_NE(result.err.find("enough for today"), std::string::npos) << result.err;
  // The abort and its reason are in the ledger.
  bool recorded = false;
  sandbox::Ledger ledger = sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false));
  for (const sandbox::LedgerRecord& rec : ledger.records("r1")) {
    std::optional<policy::ContainmentState> counted =
        sandbox::containment_state(ledger.session(rec));
    recorded =
        recorded || (counted && counted->aborted && counted->abort_reason == "enough for today");
  }
  EXPECT_TRUE(recorded);
  // A run that is not running cannot be aborted.
  CommandResult late = shadowbox({"abort", "r1"});
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_NE(late.err.find("not running"), std::string::npos) << late.err;
  CommandResult unknown = shadowbox({"abort", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no agent run"), std::string::npos) << unknown.err;
}

// An agent a hook told to stop gets the kill grace to exit by itself; an abort meanwhile
// does not wait for it.
TEST_F(RunControlTest, AnAbortCutsShortTheGraceOfAnAgentToldToStop) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  start_mock(R"({"steps":[{"hang":true}]})");
  write_config("  kill_grace: 40s\n");
  CommandResult result;
  std::thread running([&] { result = shadowbox(run_args({})); });
  bool hung = wait_for_requests(1);
  EXPECT_TRUE(hung) << "the agent never reached the hanging request";
  // As a hook whose limit stopped the run would: the agent was told, it has the grace.
  fsnap::Store store = fsnap::Store::open(store_, ws_, false);
  runs::request_halt(store, "r1", {"max_steps", "the step limit is reached", true});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the supervisor sees it
  auto start = std::chrono::steady_clock::now();
  CommandResult abort = shadowbox({"abort", "r1"});
  auto took = std::chrono::steady_clock::now() - start;
  running.join();
  EXPECT_EQ(abort.exit_code, 0) << abort.err;
  EXPECT_LT(took, std::chrono::seconds(20)) << "the abort waited for the 40 s grace";
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("the step limit is reached"), std::string::npos)
      << "the first reason stands: " << result.err;
}

INSTANTIATE_TEST_SUITE_P(Transports, ContainmentTest, ::testing::Values("http", "command"),
                         [](const auto& info) { return info.param; });

}  // namespace
