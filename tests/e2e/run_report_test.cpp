// `shadowbox report` of real runs of Claude Code, Codex CLI and Gemini CLI (each the
// pinned CLI against its loopback mock), loaded in headless Chromium (Debian's
// `chromium`): each run makes a call that succeeds (its command and the file it writes
// hold markup), one that fails and is rolled back, and one --max-steps denies, which
// halts the run. The rendered DOM holds every call with its outcome, no element the
// store's text could have injected, the summary's status and halt reason, and chart
// points whose steps and cost are those of the ledger's records; a screenshot of one page
// is kept in the build tree (its path printed).
#include <signal.h>

#include <regex>

#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/run_stats.hpp"
#include "sandbox/ledger.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

// The shell command of the first call: its text and the file it writes are markup.
const std::string kHostileCommand =
    "echo '<script>alert(1)</script>' > '<img src=x onerror=alert(1)>.txt'";

// One agent: the step of its mock that runs a shell command, its command line and its
// environment (key, the mock's URL), and its configuration in the user's HOME.
struct Agent {
  std::string name;
  e2e::MockApi api;
  std::string binary;
  std::string step_tool;
  std::vector<std::string> command;
  std::string config_file;
  std::function<std::string(const std::string& url)> config;
  std::function<std::vector<std::string>(const std::string& url)> env;
};

std::vector<Agent> agents() {
  return {
      {"claude-code",
       e2e::MockApi::kAnthropic,
       e2e::claude_binary(),
       "Bash",
       {"claude", "-p", "go", "--dangerously-skip-permissions"},
       "",
       nullptr,
       [](const std::string& url) {
         return std::vector<std::string>{
             "ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=sk-ant-test-dummy",
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "IS_SANDBOX=1"};
       }},
      {"codex",
       e2e::MockApi::kOpenAi,
       e2e::codex_binary(),
       "shell",
       {"codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
        "--json", "go"},
       ".codex/config.toml",
       [](const std::string& url) {
         return "model = \"gpt-5.1-codex\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\n"
                "name = \"mock\"\nbase_url = \"" +
                url +
                "/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
                "request_max_retries = 0\nstream_max_retries = 0\n";
       },
       [](const std::string&) { return std::vector<std::string>{"OPENAI_API_KEY=sk-test-dummy"}; }},
      {"gemini",
       e2e::MockApi::kGemini,
       e2e::gemini_binary(),
       "run_shell_command",
       {"gemini", "-y", "-o", "stream-json", "-m", "gemini-2.5-flash", "-p", "go"},
       ".gemini/settings.json",
       [](const std::string&) {
         return std::string("{\n  \"ui\": {\"hideTips\": true},\n  \"hooks\": {}\n}\n");
       },
       [](const std::string& url) {
         return std::vector<std::string>{"GEMINI_API_KEY=sk-test-dummy",
                                         "GOOGLE_GEMINI_BASE_URL=" + url,
                                         "GEMINI_CLI_TRUST_WORKSPACE=true"};
       }},
  };
}

// A scenario step running command in the agent's shell tool.
std::string shell_step(const Agent& agent, const std::string& command) {
  Poco::JSON::Object::Ptr input = new Poco::JSON::Object;
  input->set("command", command);
  input->set("description", "step");
  Poco::JSON::Object::Ptr step = new Poco::JSON::Object;
  step->set("tool", agent.step_tool);
  step->set("input", input);
  return e2e::to_json(step);
}

// Chromium, headless, on url with extra flags; bounded in time (timeout kills it).
CommandResult chromium(const fs::path& profile, const std::vector<std::string>& flags,
                       const std::string& url) {
  std::vector<std::string> argv = {"timeout",
                                   "-s",
                                   "KILL",
                                   "60",
                                   "chromium",
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + profile.string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back(url);
  return run_command(argv, std::nullopt, {}, "", std::chrono::seconds(90));
}

// The value of attribute name in an element's opening tag.
std::string attribute(const std::string& tag, const std::string& name) {
  std::smatch m;
  std::regex re(" " + name + "=\"([^\"]*)\"");
  return std::regex_search(tag, m, re) ? m[1].str() : "";
}

// The opening tags of the DOM's elements of class cls ("<li class=\"entry ...\" ...>").
std::vector<std::string> tags_of(const std::string& dom, const std::string& element,
                                 const std::string& cls) {
  std::vector<std::string> out;
  std::regex re("<" + element + " class=\"" + cls + "[^\"]*\"[^>]*>");
  for (std::sregex_iterator it(dom.begin(), dom.end(), re), end; it != end; ++it) {
    out.push_back(it->str());
  }
  return out;
}

class RunReportTest : public ::testing::Test {
 protected:
  RunReportTest() { hooks::register_agent_run_slice_types(); }

  // Where one agent's run is made: its workspace, store and HOME under temp_.
  struct Place {
    fs::path dir, ws, store, home;
  };

  // Runs agent under `run --max-steps 2` against its mock, asking for a call that
  // succeeds (its command and file name markup), one that fails and is rolled back, and
  // one the limit denies; then writes the run's report to page.
  void run_and_report(const Agent& agent, const Place& at, const fs::path& page) {
    testing_support::write_file(at.dir / "scenario.json",
                                "{\"steps\":[" + shell_step(agent, kHostileCommand) + "," +
                                    shell_step(agent, "echo half > broken.txt; exit 3") + "," +
                                    shell_step(agent, "echo three > three.txt") +
                                    ",{\"text\":\"done\"}]}");
    e2e::MockServer server(at.dir / "scenario.json", at.dir / "requests.log", agent.api);
    if (!agent.config_file.empty()) {
      testing_support::write_file(at.home / agent.config_file, agent.config(server.base_url()));
    }
    std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
    const char* path = std::getenv("PATH");
    std::vector<std::string> env = {"HOME=" + at.home.string(),
                                    "SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
                                    "PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin")};
    for (std::string& e : agent.env(server.base_url())) env.push_back(std::move(e));
    std::vector<std::string> sb = {SHADOWBOX_BIN, "--workspace", at.ws.string(), "--store",
                                   at.store.string()};
    std::vector<std::string> run = sb;
    for (const char* a : {"run", "--run-id", "r1", "--max-steps", "2", "--"}) run.push_back(a);
    run.insert(run.end(), agent.command.begin(), agent.command.end());
    CommandResult ran = run_command(run, at.ws, env, "", std::chrono::seconds(180));
    ASSERT_EQ(ran.exit_code, 3) << ran.out << ran.err;
    ASSERT_FALSE(fs::exists(at.ws / "broken.txt")) << "the failed call was not rolled back";

    fs::remove(page);
    std::vector<std::string> report = sb;
    for (const char* a : {"report", "r1", "-o"}) report.push_back(a);
    report.push_back(page.string());
    CommandResult written = run_command(report, at.ws, env);
    ASSERT_EQ(written.exit_code, 0) << written.err;
  }

  // The rendered page shows every call with its outcome, in order; markup from the run
  // stays text; the summary, the limit's line and the lifecycle's moves are there.
  static void expect_calls_and_summary(const std::string& html) {
    std::vector<std::string> calls;
    for (const std::string& tag : tags_of(html, "li", "entry kind-call")) {
      calls.push_back(attribute(tag, "data-outcome"));
      EXPECT_FALSE(attribute(tag, "data-ref").empty()) << tag;
      EXPECT_FALSE(attribute(tag, "data-tool").empty()) << tag;
    }
    EXPECT_EQ(calls, (std::vector<std::string>{"ok", "rolled back", "denied by a limit"}))
        << html.substr(0, 4000);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("<img"), std::string::npos);
    EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;.txt"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(html.find("<span id=\"status\">halted</span>"), std::string::npos);
    EXPECT_NE(html.find("<span id=\"halt-reason\">max_steps</span>"), std::string::npos);
    EXPECT_NE(html.find("data-max-steps=\"2\""), std::string::npos) << "the limit's line";
    EXPECT_FALSE(tags_of(html, "g", "move").empty()) << "the lifecycle's moves";
  }

  // The chart's points are the ledger's figures at their checkpoints.
  static void expect_points_are_the_ledgers(const std::string& html, const Place& at) {
    sandbox::Ledger ledger = sandbox::Ledger::of(fsnap::Store::open(at.store, at.ws, false));
    std::vector<std::string> points = tags_of(html, "g", "point");
    ASSERT_FALSE(points.empty());
    std::size_t last_steps = 0;
    for (const std::string& tag : points) {
      std::optional<sandbox::LedgerRecord> record =
          ledger.read(ledger.resolve(attribute(tag, "data-checkpoint")));
      ASSERT_TRUE(record) << tag;
      runs::RunStats stats = runs::run_stats(ledger.session(*record));
      EXPECT_EQ(attribute(tag, "data-steps"), std::to_string(stats.steps)) << tag;
      EXPECT_NEAR(std::stod(attribute(tag, "data-cost-usd")), stats.cost_usd, 1e-6) << tag;
      last_steps = stats.steps;
    }
    EXPECT_EQ(last_steps, 2u) << "two steps ran; the third call was denied";
  }

  testing_support::TempDir temp_;
};

TEST_F(RunReportTest, ThreeAgentsRunsRenderInChromiumWithEveryCallAndTheLedgersFigures) {
  CommandResult which = run_command({"sh", "-c", "command -v chromium"});
  ASSERT_EQ(which.exit_code, 0) << "chromium is not installed: run scripts/setup.sh";
  fs::path artifacts = fs::path(SHADOWBOX_BUILD_DIR) / "test-artifacts";
  fs::create_directories(artifacts);
  for (const Agent& agent : agents()) {
    SCOPED_TRACE(agent.name);
    ASSERT_TRUE(fs::exists(agent.binary)) << "run scripts/setup.sh";
    Place at;
    at.dir = temp_ / agent.name;
    fs::create_directories(at.dir / "ws");
    fs::create_directories(at.dir / "home");
    at.ws = fs::canonical(at.dir / "ws");
    at.store = at.dir / "store";
    at.home = at.dir / "home";
    fs::path page = artifacts / ("report-" + agent.name + ".html");
    ASSERT_NO_FATAL_FAILURE(run_and_report(agent, at, page));

    CommandResult dom = chromium(at.dir / "profile", {"--dump-dom"}, "file://" + page.string());
    ASSERT_EQ(dom.exit_code, 0) << dom.err;
    const std::string& html = dom.out;
    ASSERT_NE(html.find("id=\"timeline\""), std::string::npos) << html.substr(0, 2000);
    expect_calls_and_summary(html);
    ASSERT_NO_FATAL_FAILURE(expect_points_are_the_ledgers(html, at));

    if (agent.name == "claude-code") {
      fs::path shot = artifacts / "report-claude-code.png";
      fs::remove(shot);
      CommandResult shoot = chromium(
          at.dir / "profile",
          {"--hide-scrollbars", "--window-size=1200,1800", "--screenshot=" + shot.string()},
          "file://" + page.string());
      EXPECT_EQ(shoot.exit_code, 0) << shoot.err;
      EXPECT_TRUE(fs::exists(shot) && fs::file_size(shot) > 10000) << shot;
      std::cout << "screenshot of the report: " << shot.string() << "\npage: " << page.string()
                << '\n';
    }
  }
}

}  // namespace
