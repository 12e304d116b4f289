// The Codex CLI adapter (codex_adapter.hpp says what it stands on).
#include "hooks/codex_adapter.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "adapter_support.hpp"
#include "agent_answers.hpp"
#include "fsnap/atomic_file.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/codex_answers.hpp"
#include "runs/json_string.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/sha256.hpp"
#include "session_file.hpp"
#include "session_lines.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

using adapter_support::environment_set;
using adapter_support::to_json;
using Poco::JSON::Array;
using Poco::JSON::Object;

// A hook event shadowbox installs: its name in hooks.json and in trust keys.
struct CodexHookEvent {
  const char* name;
  const char* snake;
  bool tool;  // a tool event (matcher "*")
};

// Stop (a turn's end) is there to end a call whose outcome Codex wrote after its
// PostToolUse (late_outcomes) before the person can type again.
constexpr CodexHookEvent kEvents[] = {{"PreToolUse", "pre_tool_use", true},
                                      {"PostToolUse", "post_tool_use", true},
                                      {"SessionStart", "session_start", false},
                                      {"Stop", "stop", false},
                                      {"SessionEnd", "session_end", false}};

int timeout_of(const CodexHookEvent& e) {
  return std::string(e.snake) == "session_end" ? kCodexSessionEndTimeout : kCodexToolHookTimeout;
}

// text as a JSON string, escaped as serde_json escapes it (what Codex hashes).
std::string serde_json_string(const std::string& text) {
  return "\"" + runs::json_string_body(text) + "\"";
}

// text as a TOML basic string.
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// The options of `codex` and `codex exec` that take a value (the next argument, unless
// written --name=value).
bool takes_value(const std::string& option) {
  static const std::set<std::string> kValued = {"-c",
                                                "--config",
                                                "--enable",
                                                "--disable",
                                                "-i",
                                                "--image",
                                                "-m",
                                                "--model",
                                                "--local-provider",
                                                "-p",
                                                "--profile",
                                                "-s",
                                                "--sandbox",
                                                "-a",
                                                "--ask-for-approval",
                                                "-C",
                                                "--cd",
                                                "--add-dir",
                                                "--output-schema",
                                                "--color",
                                                "-o",
                                                "--output-last-message"};
  return kValued.count(option) != 0;
}

// `codex` and `codex exec` arguments: the options (with their values) and the prompt.
struct CodexArgs {
  std::vector<std::string> top_options;   // before the subcommand
  bool exec = false;                      // `codex exec` (or `codex e`)
  std::vector<std::string> exec_options;  // after `exec`
  std::vector<std::string> prompt;        // the prompt (and anything after it)
};

CodexArgs split_codex_args(const std::vector<std::string>& command) {
  CodexArgs out;
  for (std::size_t i = 1; i < command.size(); ++i) {
    const std::string& a = command[i];
    std::vector<std::string>& options = out.exec ? out.exec_options : out.top_options;
    if (a == "--") {
      out.prompt.assign(command.begin() + static_cast<long>(i), command.end());
      break;
    }
    if (a.size() > 1 && a[0] == '-') {
      options.push_back(a);
      if (a.find('=') == std::string::npos && takes_value(a) && i + 1 < command.size()) {
        options.push_back(command[++i]);
      }
      continue;
    }
    if (!out.exec && out.prompt.empty() && (a == "exec" || a == "e")) {
      out.exec = true;
      continue;
    }
    out.prompt.assign(command.begin() + static_cast<long>(i), command.end());
    break;
  }
  return out;
}

// The exit status a function_call_output's text states ("Process exited with code N"),
// and the output after its "Output:" line.
std::optional<int> stated_exit_code(const std::string& text, std::string& output) {
  constexpr std::string_view kExited = "Process exited with code ";
  std::size_t at = text.find(kExited);
  if (at == std::string::npos) return std::nullopt;
  std::size_t digits = at + kExited.size();
  std::size_t end = digits;
  while (end < text.size() && end - digits < 4 && text[end] >= '0' && text[end] <= '9') ++end;
  if (end == digits) return std::nullopt;
  constexpr std::string_view kOutput = "\nOutput:\n";
  std::size_t body = text.find(kOutput, end);
  output = body == std::string::npos ? "" : text.substr(body + kOutput.size());
  return std::stoi(text.substr(digits, end - digits));
}

// What a rollout line says of the end of command call_id, or nullopt if it is not its
// end: the command's completion (item_completed, exec_command_end: written before
// PostToolUse fires), or what the model was given with its exit status
// (function_call_output: written after the hook has answered, and the only end a
// command the sandbox stopped has).
std::optional<ReportedOutcome> completion_of(std::string_view line, const std::string& call_id) {
  if (line.find(call_id) == std::string_view::npos) return std::nullopt;
  Object::Ptr entry;
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(std::string(line));
    if (parsed.type() != typeid(Object::Ptr)) return std::nullopt;
    entry = parsed.extract<Object::Ptr>();
  } catch (const Poco::Exception&) {
    return std::nullopt;  // a line being written
  }
  Object::Ptr payload = entry->getObject("payload");
  if (!payload) payload = entry;
  std::string type = payload->optValue<std::string>("type", "");
  ReportedOutcome out;
  if (type == "function_call_output") {
    if (payload->optValue<std::string>("call_id", "") != call_id) return std::nullopt;
    std::string text = payload->optValue<std::string>("output", "");
    std::string output;
    out.exit_code = stated_exit_code(text, output);
    // No exit status: not a command's end ("Process running with session ID 3": it goes
    // on, and its PostToolUse comes when it exits).
    if (!out.exit_code) return std::nullopt;
    out.success = *out.exit_code == 0;
    out.summary = out.success ? output
                              : "exit code " + std::to_string(*out.exit_code) +
                                    (output.empty() ? "" : ": " + output);
    return out;
  }
  Object::Ptr done;
  if (type == "item_completed") {
    done = payload->getObject("item");
    if (!done || done->optValue<std::string>("id", "") != call_id) return std::nullopt;
  } else if (type == "exec_command_end") {
    if (payload->optValue<std::string>("call_id", "") != call_id) return std::nullopt;
    done = payload;
  } else {
    return std::nullopt;
  }
  int exit_code = 0;
  try {
    exit_code = done->optValue<int>("exit_code", 0);
  } catch (const Poco::Exception&) {
  }
  std::string status = done->optValue<std::string>("status", "");
  std::string output = done->optValue<std::string>("aggregated_output", "");
  out.exit_code = exit_code;
  out.success = exit_code == 0 && status != "failed";
  out.summary = out.success ? output
                            : "exit code " + std::to_string(exit_code) +
                                  (output.empty() ? "" : ": " + output);
  return out;
}

// The run's HOME: Codex's configuration carried in (config.toml only — never auth.json).
class CodexHome : public PreparedHome {
 public:
  explicit CodexHome(const HomeRequest& r)
      : dir_(r.home / ".codex"),
        workspace_(r.workspace.string()),
        answers_(r.settings.isolate ? fs::path() : r.answers),
        warn_(r.warn) {
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0700);
    fs::path user_config = r.user.codex_home / "config.toml";
    boost::system::error_code ec;
    if (!r.settings.isolate && fs::is_regular_file(user_config, ec)) {
      try {
        user_config_ = fsnap::read_small_file(user_config).value_or("");
      } catch (const fsnap::Error& e) {
        if (r.warn) r.warn(std::string(e.what()) + "; Codex starts without it");
      }
    }
    // What the person answered Codex's own questions in earlier runs (this folder's
    // trust, a notice seen): asked once, not at every run.
    std::string config = with_codex_answers(user_config_, read_kept_answers(answers_), workspace_);
    fsnap::write_file_atomically(dir_ / "config.toml", config, 0600);
    // A `codex login` is not carried (credentials never enter a run's HOME): said now,
    // not as an authentication error at the first request.
    if (r.warn && fs::exists(r.user.codex_home / "auth.json", ec) &&
        !environment_set("OPENAI_API_KEY") && !environment_set("CODEX_API_KEY")) {
      r.warn("your Codex login (" + (r.user.codex_home / "auth.json").string() +
             ") is not carried into the run; give Codex a key in OPENAI_API_KEY or "
             "CODEX_API_KEY (its value never enters the store)");
    }
  }
  ~CodexHome() override { finish(); }
  void finish() override {
    keep_answers();
    boost::system::error_code ec;
    fs::remove(dir_ / "config.toml", ec);
  }
  std::vector<std::string> carried() const override { return {".codex/config.toml"}; }

 private:
  // The answers Codex saved in the run's config.toml, kept before the file goes (the
  // newest first, then the earlier ones it does not replace). Never throws.
  void keep_answers() {
    if (answers_.empty()) return;
    try {
      std::optional<std::string> config = fsnap::read_small_file(dir_ / "config.toml");
      if (!config) return;
      std::string answered = codex_answers(*config, user_config_, workspace_);
      if (answered.empty()) return;
      write_kept_answers(answers_,
                         with_codex_answers(answered, read_kept_answers(answers_), workspace_));
    } catch (const std::exception& e) {
      if (warn_) warn_(std::string("Codex's answers in this run are not kept: ") + e.what());
    }
  }

  fs::path dir_;
  std::string workspace_;
  fs::path answers_;
  std::function<void(const std::string&)> warn_;
  std::string user_config_;
};

class CodexAdapter : public AgentAdapter {
 public:
  AgentKind kind() const override { return AgentKind::kCodex; }

  AgentEvent parse_event(const std::string& event_json) const override {
    AgentEvent event = parse_agent_event(event_json);
    if (event.name == "PostToolUse" && !event.transcript_path.empty()) {
      std::optional<ReportedOutcome> done =
          codex_call_completion(event.transcript_path, event.tool_use_id);
      if (!done && event.tool_name == "Bash") {
        // A command the sandbox stopped: its end is written only after this event is
        // answered, so a later event ends the call (late_outcomes).
        event.outcome_pending = true;
      } else if (done && !done->success) {
        event.name = "PostToolUseFailure";
        event.error = done->summary;  // whole: the record redacts it, then cuts it
      }
    }
    return event;
  }

  bool late_outcomes() const override { return true; }
  std::optional<ReportedOutcome> reported_outcome(const fs::path& transcript,
                                                  const std::string& call_id) const override {
    return codex_call_completion(transcript, call_id);
  }

  HookAnswer answer(const AgentEvent& event, const HookVerdict& verdict) const override {
    HookAnswer answer{verdict.exit_code, "", verdict.message, event.name};
    if (verdict.exit_code != 0) return answer;
    Object::Ptr specific = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    if (!verdict.deny.empty()) {
      // No `continue: false`: before a tool Codex ignores it, and the call would run.
      // The supervisor stops the agent.
      specific->set("hookEventName", "PreToolUse");
      specific->set("permissionDecision", "deny");
      specific->set("permissionDecisionReason", verdict.deny);
    } else if (!verdict.context.empty()) {
      specific->set("hookEventName", event.native_name);
      specific->set("additionalContext", verdict.context);
    }
    Object::Ptr out = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    if (specific->size() != 0) out->set("hookSpecificOutput", specific);
    // Codex keeps it as a warning of the hook's run, which its TUI shows the person; the
    // model never reads it.
    if (!verdict.notice.empty()) out->set("systemMessage", verdict.notice);
    if (out->size() == 0) return answer;
    answer.stdout_json = to_json(out);
    return answer;
  }

  std::unique_ptr<PreparedHome> prepare_home(const HomeRequest& request) const override {
    return std::make_unique<CodexHome>(request);
  }

  void install_hooks(const fs::path& home, const HookEndpoints& endpoints) const override {
    fs::path dir = fs::absolute(home / ".codex");
    fs::path hooks = dir / "hooks.json";
    fsnap::write_file_atomically(hooks, codex_hooks_json(endpoints.command), 0600);
    std::string config = fsnap::read_small_file(dir / "config.toml").value_or("");
    if (!config.empty() && config.back() != '\n') config += '\n';
    config += "\n# shadowbox's hooks (hooks.json), trusted\n" +
              codex_hook_trust_toml(hooks, endpoints.command);
    fsnap::write_file_atomically(dir / "config.toml", config, 0600);
  }

  void uninstall_hooks(const fs::path& home) const override {
    boost::system::error_code ec;
    fs::remove(home / ".codex" / "hooks.json", ec);
  }

  std::vector<std::string> environment(const fs::path& home) const override {
    return {"CODEX_HOME=" + fs::absolute(home / ".codex").string()};
  }
  std::vector<std::string> withheld_variables() const override { return {"CODEX_HOME"}; }

  std::vector<std::string> preserved_parts() const override { return {".codex/sessions"}; }

  bool is_session_path(const std::string& path, const std::string& session_id) const override {
    return !session_id.empty() && path.starts_with(".codex/sessions/") &&
           path.ends_with("-" + session_id + ".jsonl");
  }

  std::vector<std::string> run_argv(const std::vector<std::string>& argv) const override {
    return codex_run_argv(argv);
  }

  std::vector<std::string> resume_argv(const ResumeCommand& request) const override {
    return codex_resume_argv(request.command, request.session_id, request.extra_args,
                             request.only_extra_args);
  }

  // A fork: a new thread (a UUIDv7, as Codex makes them) holding the turns before the call.
  SessionCut cut_session(const fs::path& home, const SessionCutPoint& point) const override {
    return codex_cut_session(home, point, session_file::random_uuid(7));
  }

  // A resume's fork: all of the session under a new id.
  std::optional<SessionCut> fork_session(const fs::path& home,
                                         const std::string& session_id) const override {
    return codex_fork_session(home, session_id, session_file::random_uuid(7));
  }

  std::optional<SessionLine> read_session_line(const std::string& line) const override {
    return codex_session_line(line);
  }
  std::string silent_hooks_hint() const override {
    return "shadowbox's hooks are in .codex/hooks.json of the agent's HOME, trusted in its "
           "config.toml; Codex skips hooks that are not trusted (or whose trust does not match) "
           "without a word, and runs none when hooks are disabled in the configuration";
  }
};

}  // namespace

std::string codex_trusted_hash(const std::string& event, const std::string& matcher,
                               const std::string& command, int timeout_seconds) {
  // Keys in sorted order, compact, as serde_json writes them.
  std::string identity = "{\"event_name\":" + serde_json_string(event) +
                         ",\"hooks\":[{\"async\":false,\"command\":" + serde_json_string(command) +
                         ",\"timeout\":" + std::to_string(timeout_seconds) +
                         ",\"type\":\"command\"}]";
  if (!matcher.empty()) identity += ",\"matcher\":" + serde_json_string(matcher);
  identity += "}";
  return "sha256:" + sandbox::sha256_hex(identity);
}

std::string codex_hooks_json(const std::string& command) {
  Object::Ptr events = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  for (const CodexHookEvent& e : kEvents) {
    Object::Ptr handler = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    handler->set("type", "command");
    handler->set("command", command);
    handler->set("timeout", timeout_of(e));
    Array::Ptr handlers = new Array;
    handlers->add(handler);
    Object::Ptr group = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    if (e.tool) group->set("matcher", "*");
    group->set("hooks", handlers);
    Array::Ptr groups = new Array;
    groups->add(group);
    events->set(e.name, groups);
  }
  Object::Ptr out = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  out->set("hooks", events);
  return to_json(out) + "\n";
}

std::string codex_hook_trust_toml(const fs::path& hooks_json, const std::string& command) {
  std::string out;
  for (const CodexHookEvent& e : kEvents) {
    out += "[hooks.state." + toml_string(hooks_json.string() + ":" + e.snake + ":0:0") + "]\n";
    out += "trusted_hash = " +
           toml_string(codex_trusted_hash(e.snake, e.tool ? "*" : "", command, timeout_of(e))) +
           "\n";
  }
  return out;
}

std::optional<std::string> codex_call_failure(const fs::path& rollout, const std::string& call_id) {
  std::optional<ReportedOutcome> done = codex_call_completion(rollout, call_id);
  if (!done || done->success) return std::nullopt;
  return done->summary;
}

std::optional<ReportedOutcome> codex_call_completion(const fs::path& rollout,
                                                     const std::string& call_id) {
  if (call_id.empty()) return std::nullopt;
  std::ifstream in(rollout.string(), std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const auto size = static_cast<std::uint64_t>(in.tellg());
  // The completion was written just before PostToolUse fired: it is near the end of a
  // rollout that holds the whole session. Its tail is read, in growing windows, newest
  // line first, and the file from its start only when the tail does not have it.
  for (std::uint64_t window = std::uint64_t{64} * 1024;; window *= 8) {
    std::uint64_t start = size > window ? size - window : 0;
    std::string tail(size - start, '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(start));
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    tail.resize(static_cast<std::size_t>(in.gcount()));
    std::size_t end = tail.size();
    while (end > 0) {
      std::size_t begin = tail.rfind('\n', end - 1);
      begin = begin == std::string::npos ? 0 : begin + 1;
      if (begin == 0 && start > 0) break;  // a line cut by the window
      if (std::optional<ReportedOutcome> found =
              completion_of(std::string_view(tail).substr(begin, end - begin), call_id)) {
        return found;
      }
      end = begin == 0 ? 0 : begin - 1;
    }
    if (start == 0) return std::nullopt;
  }
}

std::vector<std::string> codex_run_argv(const std::vector<std::string>& argv) {
  // The subcommands of `codex` 0.169.0; any other first operand is the prompt.
  static const std::set<std::string> kSubcommands = {
      "agents",         "exec",      "e",       "review",      "login",
      "logout",         "mcp",       "plugin",  "app-server",  "remote-control",
      "completion",     "update",    "doctor",  "sandbox",     "debug",
      "apply",          "a",         "archive", "delete",      "migrate-rollouts",
      "migrate-nfs-db", "unarchive", "cloud",   "exec-server", "features",
      "help",           "mcp-server"};
  if (argv.empty() || std::find(argv.begin(), argv.end(), "--no-daemon") != argv.end()) {
    return argv;
  }
  CodexArgs args = split_codex_args(argv);
  if (args.exec || (!args.prompt.empty() && kSubcommands.count(args.prompt.front()) != 0)) {
    return argv;
  }
  std::vector<std::string> out = argv;
  out.insert(out.begin() + 1, "--no-daemon");
  return out;
}

std::vector<std::string> codex_resume_argv(const std::vector<std::string>& command,
                                           const std::string& session_id,
                                           const std::vector<std::string>& extra_args,
                                           bool only_extra_args) {
  std::vector<std::string> argv = {command.empty() ? std::string("codex") : command.front()};
  CodexArgs args = split_codex_args(command);
  if (!only_extra_args) argv.insert(argv.end(), args.top_options.begin(), args.top_options.end());
  if (args.exec) argv.emplace_back("exec");
  if (!only_extra_args) argv.insert(argv.end(), args.exec_options.begin(), args.exec_options.end());
  argv.emplace_back("resume");
  argv.push_back(session_id);
  if (!only_extra_args && extra_args.empty()) {
    argv.insert(argv.end(), args.prompt.begin(), args.prompt.end());
  }
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  return argv;
}

const AgentAdapter& codex_adapter() {
  static const CodexAdapter adapter;
  return adapter;
}

}  // namespace hooks
