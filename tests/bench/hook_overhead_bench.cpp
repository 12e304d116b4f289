// hook_overhead_bench — what shadowbox's hooks add to each tool call of the real
// Claude Code CLI. Runs the same scripted scenario (N Bash calls against the mock
// Messages API) on a workspace of F files: without hooks; under
// `shadowbox run` (hooks.transport http: events posted to the run's loopback server,
// workspace watched); and with `shadowbox hooks install` (one hook process per event:
// the thin client `shadowbox-hook`), once with the watch daemon recording the events
// and once with watch.daemon off (the thin client then runs `shadowbox hook`, which
// scans the workspace). The time between consecutive model requests is one tool call's
// round trip; the bench prints the median and 90th percentile of each run and the median overhead
// per call. A run under `shadowbox run` with every limit set (cost ceiling, steps, retries,
// timeout, circuit breaker, budget window) shows what containment's decision adds; one with HTTP
// hooks answered at once by a server that does nothing shows what Claude Code itself spends on two
// HTTP hooks per call, and one with hook processes that read the event and do nothing what it
// spends on starting two processes per call: the floor under shadowbox's hook processes.
// Codex CLI and Gemini CLI get a row each too: the same N shell calls against their mocks,
// without hooks and under `shadowbox run` (one `shadowbox hook` process per event).
//
//   hook_overhead_bench [--calls N] [--files F] [--modes KEY,...]
//   (defaults: 50 calls, 10,000 files, every mode; --help lists the modes)
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Poco/JSON/Object.h>

#include "../e2e/agent_harness.hpp"
#include "hooks/claude_code_settings.hpp"
#include "hooks/hook_server.hpp"

namespace fs = boost::filesystem;

namespace {

struct Figures {
  double median = 0;
  double p90 = 0;
};

Figures percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {};
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 9 / 10)]};
}

// Gaps between consecutive requests of the agent's main loop, in ms.
std::vector<double> round_trips(const e2e::MockServer& server) {
  std::vector<double> times;
  for (const Poco::JSON::Object::Ptr& r : server.requests()) {
    if (r->getValue<bool>("main")) times.push_back(r->getValue<double>("t_ms"));
  }
  std::vector<double> gaps;
  for (std::size_t i = 1; i < times.size(); ++i) gaps.push_back(times[i] - times[i - 1]);
  return gaps;
}

enum class Mode {
  kPlain,
  kRun,
  kRunLimited,
  kHookProcesses,
  kHookProcessesScanning,
  kEmptyHttpHooks,
  kEmptyCommandHooks
};

// Installs the project's hooks, as `shadowbox hooks install` writes them: the thin client
// (`shadowbox-hook`) naming this store (scanning: with the watch daemon off); takes the
// workspace's first capture, which is not per call.
void install_hook_processes(const fs::path& base, const fs::path& ws, const fs::path& store,
                            Mode mode, std::vector<std::string>& env) {
  env.push_back("SHADOWBOX_STORE=" + store.string());
  if (mode == Mode::kHookProcessesScanning) {
    testing_support::write_file(base / "no-daemon.yaml", "watch: {daemon: off}\n");
    env.push_back("SHADOWBOX_CONFIG=" + (base / "no-daemon.yaml").string());
  }
  // The first capture of the workspace is not per call; with the daemon, the second
  // snapshot is its first capture (a walk with the stat cache).
  for (std::vector<std::string> args : {std::vector<std::string>{"hooks", "install"},
                                        std::vector<std::string>{"snapshot", "--tag", "baseline"},
                                        std::vector<std::string>{"daemon", "status"},
                                        std::vector<std::string>{"snapshot", "--tag", "warm"}}) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    testing_support::CommandResult r = testing_support::run_command(argv, ws, env);
    if (r.exit_code != 0) throw std::runtime_error("shadowbox failed: " + r.err);
  }
}

// `shadowbox ... run --run-id bench --` before the agent's command (limited: with every
// limit set far away).
std::vector<std::string> run_prefix(const fs::path& base, const std::vector<std::string>& sb,
                                    Mode mode) {
  std::vector<std::string> argv = sb;
  if (mode == Mode::kRunLimited) {
    // Limits far away: every call is checked against all of them, none trips.
    testing_support::write_file(
        base / "limits.yaml",
        "policy:\n"
        "  circuit_breaker: {failure_threshold: 5, recovery_timeout: 30s}\n"
        "  budget_window: {window: 5m, max_calls: 100000, max_cost_usd: 1000}\n");
    argv.push_back("--config");
    argv.push_back((base / "limits.yaml").string());
  }
  for (const char* a : {"run", "--run-id", "bench"}) argv.push_back(a);
  if (mode == Mode::kRunLimited) {
    for (const char* a : {"--max-cost-usd", "1000", "--max-steps", "100000", "--max-retries",
                          "1000", "--timeout", "2h"}) {
      argv.push_back(a);
    }
  }
  argv.push_back("--");
  return argv;
}

// The project's hooks and the store's daemon would otherwise stay for the modes after
// this one (the hooks firing in each of them).
void remove_hook_processes(const fs::path& ws, const std::vector<std::string>& sb,
                           const std::vector<std::string>& env) {
  for (std::vector<std::string> args : {std::vector<std::string>{"hooks", "uninstall"},
                                        std::vector<std::string>{"daemon", "stop"}}) {
    std::vector<std::string> argv = sb;
    argv.insert(argv.end(), args.begin(), args.end());
    testing_support::CommandResult done = testing_support::run_command(argv, ws, env);
    if (done.exit_code != 0) throw std::runtime_error("shadowbox failed: " + done.err);
  }
}

std::vector<double> run_scenario(const fs::path& base, const std::string& name, const fs::path& ws,
                                 int calls, Mode mode) {
  std::string steps;
  for (int i = 0; i < calls; ++i) {
    steps += "{\"tool\":\"Bash\",\"id\":\"toolu_" + name + std::to_string(i) +
             "\",\"input\":{\"command\":\"echo " + std::to_string(i) +
             " > step.txt\",\"description\":\"step\"}},";
  }
  steps += "{\"text\":\"done\"}";
  testing_support::write_file(base / (name + ".json"), "{\"steps\":[" + steps + "]}");
  e2e::MockServer server(base / (name + ".json"), base / (name + ".log"));
  fs::path home = base / (name + "-home");
  fs::create_directories(home);
  std::vector<std::string> env = e2e::claude_env(server, home);
  fs::path store = base / (name + "-store");
  std::vector<std::string> sb = {SHADOWBOX_BIN, "--workspace", ws.string(), "--store",
                                 store.string()};
  std::vector<std::string> agent = {e2e::claude_binary(), "-p", "go",
                                    "--dangerously-skip-permissions"};
  std::unique_ptr<hooks::HookServer> empty;
  if (mode == Mode::kEmptyHttpHooks) {
    empty = std::make_unique<hooks::HookServer>([](const std::string&) {
      return hooks::HttpHookReply{200, "application/json", "{}"};
    });
    hooks::install_http_hooks_in_file(home / ".claude" / "settings.json", empty->url(), "true");
  } else if (mode == Mode::kEmptyCommandHooks) {
    // A hook process that reads the event and answers nothing: what Claude Code spends
    // on starting two processes per call, the floor under any hook process.
    hooks::install_hooks_in_file(home / ".claude" / "settings.json", "cat > /dev/null");
  } else if (mode == Mode::kHookProcesses || mode == Mode::kHookProcessesScanning) {
    install_hook_processes(base, ws, store, mode, env);
  } else if (mode == Mode::kRun || mode == Mode::kRunLimited) {
    std::vector<std::string> argv = run_prefix(base, sb, mode);
    agent.insert(agent.begin(), argv.begin(), argv.end());
  }
  // What an earlier mode wrote to the disk is not written back during this one.
  ::sync();
  testing_support::CommandResult r =
      testing_support::run_command(agent, ws, env, "", std::chrono::seconds(1800));
  if (r.exit_code != 0) throw std::runtime_error("claude failed: " + r.out + r.err);
  if (mode == Mode::kHookProcesses || mode == Mode::kHookProcessesScanning) {
    remove_hook_processes(ws, sb, env);
  }
  return round_trips(server);
}

// The agents besides Claude Code: how to run one headless against its mock.
struct OtherAgent {
  const char* key;  // for --modes, and the program
  e2e::MockApi api;
  std::string (*binary)();
  const char* tool;  // the scenario's shell tool
};

constexpr OtherAgent kOtherAgents[] = {
    {"codex", e2e::MockApi::kOpenAi, e2e::codex_binary, "shell"},
    {"gemini", e2e::MockApi::kGemini, e2e::gemini_binary, "run_shell_command"},
};

// Runs calls shell calls of agent on ws, with no hooks or under `shadowbox run`; the
// round trips.
std::vector<double> run_other_agent(const fs::path& base, const OtherAgent& agent,
                                    const fs::path& ws, int calls, bool under_shadowbox) {
  std::string name = std::string(agent.key) + (under_shadowbox ? "-run" : "-plain");
  std::string steps;
  for (int i = 0; i < calls; ++i) {
    steps += "{\"tool\":\"" + std::string(agent.tool) + "\",\"input\":{\"command\":\"echo " +
             std::to_string(i) + " > step.txt\",\"description\":\"step\"}},";
  }
  steps += "{\"text\":\"done\"}";
  testing_support::write_file(base / (name + ".json"), "{\"steps\":[" + steps + "]}");
  e2e::MockServer server(base / (name + ".json"), base / (name + ".log"), agent.api);
  fs::path home = base / (name + "-home");
  const char* path = std::getenv("PATH");
  std::vector<std::string> env = {"HOME=" + home.string(),
                                  "SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
                                  "PATH=" + fs::path(agent.binary()).parent_path().string() + ":" +
                                      (path != nullptr ? path : "/usr/bin:/bin")};
  std::vector<std::string> command;
  if (agent.api == e2e::MockApi::kOpenAi) {
    testing_support::write_file(home / ".codex" / "config.toml",
                                "model = \"gpt-5.1-codex\"\nmodel_provider = \"mock\"\n"
                                "[model_providers.mock]\nname = \"mock\"\nbase_url = \"" +
                                    server.base_url() +
                                    "/v1\"\nenv_key = \"OPENAI_API_KEY\"\n"
                                    "wire_api = \"responses\"\n");
    env.emplace_back("OPENAI_API_KEY=sk-bench");
    command = {agent.binary(), "exec", "--skip-git-repo-check",
               "--dangerously-bypass-approvals-and-sandbox", "go"};
  } else {
    testing_support::write_file(home / ".gemini" / "settings.json",
                                "{\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}}}");
    env.insert(env.end(), {"GEMINI_API_KEY=bench", "GOOGLE_GEMINI_BASE_URL=" + server.base_url(),
                           "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true"});
    command = {agent.binary(), "-y", "-m", "gemini-2.5-flash", "-p", "go"};
  }
  if (under_shadowbox) {
    std::vector<std::string> argv = {
        SHADOWBOX_BIN, "--workspace", ws.string(), "--store", (base / (name + "-store")).string(),
        "run",         "--"};
    command.insert(command.begin(), argv.begin(), argv.end());
  }
  ::sync();
  testing_support::CommandResult r =
      testing_support::run_command(command, ws, env, "", std::chrono::seconds(1800));
  if (r.exit_code != 0) {
    throw std::runtime_error(std::string(agent.key) + " failed (" + std::to_string(r.exit_code) +
                             "): " + r.out + r.err);
  }
  return round_trips(server);
}

// One row of the table: a way of running the scenario.
struct Row {
  Mode mode;
  const char* key;    // for --modes
  const char* label;  // in the table
};

constexpr Row kRows[] = {
    {Mode::kRun, "run", "shadowbox run (http, watched)"},
    {Mode::kRunLimited, "limited", "shadowbox run, every limit set"},
    {Mode::kHookProcesses, "hooked", "hook processes, watch daemon"},
    {Mode::kHookProcessesScanning, "scanning", "hook processes, daemon off (scan)"},
    {Mode::kEmptyHttpHooks, "empty-http", "HTTP hooks that do nothing"},
    {Mode::kEmptyCommandHooks, "empty-command", "hook processes that do nothing"},
};

bool selected(const std::string& modes, const char* key) {
  if (modes.empty()) return true;
  std::string list = "," + modes + ",";
  return list.find("," + std::string(key) + ",") != std::string::npos;
}

// Whether every key of a --modes list names a mode.
bool known_modes(const std::string& modes) {
  std::size_t start = 0;
  while (start <= modes.size()) {
    std::size_t end = std::min(modes.find(',', start), modes.size());
    std::string key = modes.substr(start, end - start);
    bool found = false;
    for (const Row& row : kRows) found = found || key == row.key;
    for (const OtherAgent& agent : kOtherAgents) found = found || key == agent.key;
    if (!found) return false;
    start = end + 1;
  }
  return true;
}

using ClaudeCodeFigures = std::vector<std::pair<const Row*, Figures>>;
using OtherAgentFigures = std::vector<std::pair<const OtherAgent*, std::pair<Figures, Figures>>>;

// Claude Code's rows: without hooks, each mode with its overhead, and the goals.
void print_claude_code_rows(const Figures& plain, const ClaudeCodeFigures& figures) {
  std::printf("%-34s %8.1fms %8.1fms\n", "without hooks", plain.median, plain.p90);
  auto overhead = [&](Mode mode) -> std::optional<double> {
    for (const auto& [row, f] : figures) {
      if (row->mode == mode) return f.median - plain.median;
    }
    return std::nullopt;
  };
  for (const auto& [row, f] : figures) {
    std::printf("%-34s %8.1fms %8.1fms %10.1fms\n", row->label, f.median, f.p90,
                f.median - plain.median);
  }
  if (auto run = overhead(Mode::kRun)) {
    std::printf("overhead per call under shadowbox run (median): %.1f ms (goal: <= 20 ms)\n", *run);
  }
  if (auto hooked = overhead(Mode::kHookProcesses)) {
    std::printf("overhead per call with hook processes (median): %.1f ms (goal: <= 25 ms)",
                *hooked);
    if (auto scanning = overhead(Mode::kHookProcessesScanning)) {
      std::printf("; scanning: %.1f ms, %.1fx", *scanning, *scanning / *hooked);
    }
    if (auto floor = overhead(Mode::kEmptyCommandHooks)) {
      std::printf("; above hook processes that do nothing: %.1f ms", *hooked - *floor);
    }
    std::printf("\n");
  }
}

// The other agents' rows: without hooks, then under shadowbox run.
void print_other_agent_rows(const OtherAgentFigures& others) {
  for (const auto& [agent, f] : others) {
    std::string label = agent->key;
    std::printf("%-34s %8.1fms %8.1fms\n", (label + " without hooks").c_str(), f.first.median,
                f.first.p90);
    std::printf("%-34s %8.1fms %8.1fms %10.1fms\n", (label + " under shadowbox run").c_str(),
                f.second.median, f.second.p90, f.second.median - f.first.median);
  }
}
}  // namespace

int main(int argc, char** argv) {
  int calls = 50;
  int files = 10000;
  std::string modes;
  for (int i = 1; i < argc; i += 2) {
    std::string arg = argv[i];
    if (i + 1 < argc && arg == "--calls") {
      calls = std::atoi(argv[i + 1]);
    } else if (i + 1 < argc && arg == "--files") {
      files = std::atoi(argv[i + 1]);
    } else if (i + 1 < argc && arg == "--modes" && known_modes(argv[i + 1])) {
      modes = argv[i + 1];
    } else {
      std::fprintf(stderr,
                   "usage: hook_overhead_bench [--calls N] [--files F] [--modes KEY,...]\n"
                   "modes (default all; the run without hooks always):");
      for (const Row& row : kRows) std::fprintf(stderr, " %s", row.key);
      for (const OtherAgent& agent : kOtherAgents) std::fprintf(stderr, " %s", agent.key);
      std::fprintf(stderr, "\n");
      return 2;
    }
  }
  try {
    if (!fs::exists(e2e::claude_binary())) {
      throw std::runtime_error("no Claude Code CLI at " + e2e::claude_binary() +
                               " (run scripts/setup.sh)");
    }
    testing_support::TempDir base("shadowbox-hook-bench");
    fs::path ws = base / "ws";
    for (int i = 0; i < files; ++i) {
      testing_support::write_file(ws / ("d" + std::to_string(i % 100)) / ("f" + std::to_string(i)),
                                  "file " + std::to_string(i) + "\n");
    }
    // Each agent's own rows: without hooks, then under shadowbox run.
    OtherAgentFigures others;
    for (const OtherAgent& agent : kOtherAgents) {
      if (!selected(modes, agent.key)) continue;
      if (!fs::exists(agent.binary())) {
        throw std::runtime_error("no " + std::string(agent.key) + " CLI at " + agent.binary() +
                                 " (run scripts/setup.sh)");
      }
      Figures without = percentiles(run_other_agent(base.path(), agent, ws, calls, false));
      Figures with = percentiles(run_other_agent(base.path(), agent, ws, calls, true));
      others.push_back({&agent, {without, with}});
    }
    Figures plain = percentiles(run_scenario(base.path(), "plain", ws, calls, Mode::kPlain));
    ClaudeCodeFigures figures;
    for (const Row& row : kRows) {
      if (!selected(modes, row.key)) continue;
      figures.emplace_back(&row,
                           percentiles(run_scenario(base.path(), row.key, ws, calls, row.mode)));
    }
    std::printf("workspace: %d files; %d shell calls per run; the real agent CLIs, mock APIs\n",
                files, calls);
    std::printf("%-34s %10s %10s %12s\n", "per tool call", "median", "p90", "overhead");
    print_claude_code_rows(plain, figures);
    print_other_agent_rows(others);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hook_overhead_bench: %s\n", e.what());
    return 1;
  }
}
