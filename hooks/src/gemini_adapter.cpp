// The Gemini CLI adapter (gemini_adapter.hpp says what it stands on).
#include "hooks/gemini_adapter.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
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
#include "hooks/gemini_answers.hpp"
#include "json_object.hpp"
#include "sandbox/errors.hpp"
#include "session_file.hpp"
#include "session_lines.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

using adapter_support::environment_set;
using Poco::JSON::Array;
using Poco::JSON::Object;
using sandbox::Error;
using sandbox::ErrorCode;

// The name shadowbox's hook handlers carry in settings.json.
constexpr const char* kHookName = "shadowbox";

using json_object::parse;

// o's object key, made one if it is not.
Object::Ptr child(Object::Ptr o, const std::string& key) {
  Object::Ptr found = o->getObject(key);
  if (found) return found;
  Object::Ptr made = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set(key, made);
  return made;
}

// The number after prefix at the start of line, if there is one.
std::optional<long> number_after(const std::string& line, const std::string& prefix) {
  if (line.rfind(prefix, 0) != 0) return std::nullopt;
  try {
    return std::stol(line.substr(prefix.size()));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// What a shell command's llmContent says of its end: the lines after its output, which
// come last in this order (read from the end): Process Group PGID, Background PIDs,
// Signal, Exit Code, Error.
std::optional<std::string> shell_failure(std::string text) {
  const std::string close = "</untrusted_context>";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.ends_with(close)) text.resize(text.size() - close.size());
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::vector<std::string> trailer = {
      "Process Group PGID: ", "Background PIDs: ", "Signal: ", "Exit Code: "};
  std::size_t next = 0;
  std::optional<long> exit_code;
  std::optional<long> signal;
  for (std::size_t i = lines.size(); i-- > 0 && next < trailer.size();) {
    while (next < trailer.size() && lines[i].rfind(trailer[next], 0) != 0) ++next;
    if (next == trailer.size()) break;
    if (trailer[next] == "Signal: ") signal = number_after(lines[i], trailer[next]);
    if (trailer[next] == "Exit Code: ") exit_code = number_after(lines[i], trailer[next]);
    ++next;
  }
  if (signal) return "killed by signal " + std::to_string(*signal);
  if (exit_code && *exit_code != 0) return "exit code " + std::to_string(*exit_code);
  return std::nullopt;
}

// security.auth.selectedType of settings_json (a valid object).
std::string selected_auth(const std::string& settings_json) {
  Object::Ptr settings = parse(settings_json, "settings.json");
  Object::Ptr security = settings->getObject("security");
  Object::Ptr auth = security ? security->getObject("auth") : nullptr;
  return auth ? auth->optValue<std::string>("selectedType", "") : "";
}

// The content of the user's file, or "" (said with warn) if it cannot be read.
std::string read_user_file(const fs::path& file,
                           const std::function<void(const std::string&)>& warn) {
  try {
    return fsnap::read_small_file(file).value_or("");
  } catch (const fsnap::Error& e) {
    if (warn) warn(std::string(e.what()) + "; the run goes on without it");
    return "";
  }
}

// The run's HOME: the user's Gemini settings (with what a run needs) and trusted folders
// carried in — never their credentials.
class GeminiHome : public PreparedHome {
 public:
  explicit GeminiHome(const HomeRequest& r)
      : dir_(r.home / ".gemini"),
        workspace_(r.workspace.string()),
        answers_(r.settings.isolate ? fs::path() : r.answers),
        warn_(r.warn) {
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0700);
    std::string user_settings;
    boost::system::error_code ec;
    if (!r.settings.isolate) {
      fs::path file = r.user.gemini_dir / "settings.json";
      if (fs::is_regular_file(file, ec)) user_settings = read_user_file(file, r.warn);
      fs::path trusted = r.user.gemini_dir / "trustedFolders.json";
      if (fs::is_regular_file(trusted, ec)) user_trusted_ = read_user_file(trusted, r.warn);
      // The folder's trust the person gave in an earlier run: asked once, not at every run.
      std::string run_trusted =
          with_gemini_answers(user_trusted_, read_kept_answers(answers_), workspace_);
      if (!run_trusted.empty()) {
        fsnap::write_file_atomically(dir_ / "trustedFolders.json", run_trusted, 0600);
      }
    }
    std::string settings;
    try {
      settings = gemini_run_settings(user_settings);
    } catch (const Error& e) {
      if (r.warn) {
        r.warn("your Gemini settings.json is not carried into the run (" + std::string(e.what()) +
               ")");
      }
      settings = gemini_run_settings("");
    }
    fsnap::write_file_atomically(dir_ / "settings.json", settings, 0600);
    // A Google login is not carried (credentials never enter a run's HOME): said now.
    std::string auth = selected_auth(settings);
    if (r.warn && auth != "gemini-api-key" && auth != "vertex-ai" &&
        !environment_set("GEMINI_API_KEY") && !environment_set("GOOGLE_API_KEY")) {
      r.warn("your Gemini CLI signs in with " + auth +
             ", whose credentials are not carried into the run; give it a key in "
             "GEMINI_API_KEY (its value never enters the store) and choose "
             "security.auth.selectedType gemini-api-key");
    }
  }
  ~GeminiHome() override { finish(); }
  void finish() override {
    keep_answers();
    boost::system::error_code ec;
    fs::remove(dir_ / "settings.json", ec);
    fs::remove(dir_ / "trustedFolders.json", ec);
  }
  std::vector<std::string> carried() const override {
    return {".gemini/settings.json", ".gemini/trustedFolders.json"};
  }

 private:
  // The trust Gemini saved in the run's trustedFolders.json, kept before the file goes
  // (the newest first, then the earlier answers it does not replace). Never throws.
  void keep_answers() {
    if (answers_.empty()) return;
    try {
      std::optional<std::string> trusted = fsnap::read_small_file(dir_ / "trustedFolders.json");
      if (!trusted) return;
      std::string answered = gemini_answers(*trusted, user_trusted_, workspace_);
      if (answered.empty()) return;
      write_kept_answers(answers_,
                         with_gemini_answers(answered, read_kept_answers(answers_), workspace_));
    } catch (const std::exception& e) {
      if (warn_) warn_(std::string("Gemini's folder trust in this run is not kept: ") + e.what());
    }
  }

  fs::path dir_;
  std::string workspace_;
  fs::path answers_;
  std::function<void(const std::string&)> warn_;
  std::string user_trusted_;
};

// Options of `gemini` that take a value (the next argument, unless --name=value).
bool takes_value(const std::string& option) {
  static const std::set<std::string> kValued = {"-m",
                                                "--model",
                                                "-p",
                                                "--prompt",
                                                "-i",
                                                "--prompt-interactive",
                                                "--approval-mode",
                                                "-o",
                                                "--output-format",
                                                "-e",
                                                "--extensions",
                                                "--include-directories",
                                                "--allowed-tools",
                                                "--allowed-mcp-server-names",
                                                "-r",
                                                "--resume",
                                                "--session-id",
                                                "--telemetry-target",
                                                "--telemetry-otlp-endpoint",
                                                "--telemetry-otlp-protocol",
                                                "--telemetry-outfile",
                                                "--proxy"};
  return kValued.count(option) != 0;
}

bool is_prompt_option(const std::string& name) {
  return name == "-p" || name == "--prompt" || name == "-i" || name == "--prompt-interactive";
}

bool is_session_option(const std::string& name) {
  return name == "-r" || name == "--resume" || name == "--session-id";
}

class GeminiAdapter : public AgentAdapter {
 public:
  AgentKind kind() const override { return AgentKind::kGemini; }

  AgentEvent parse_event(const std::string& event_json) const override {
    AgentEvent event = parse_agent_event(event_json, /*call_ids=*/false);
    bool before = event.native_name == "BeforeTool";
    bool after = event.native_name == "AfterTool";
    if (!before && !after) return event;
    if (event.tool_name.empty()) {
      throw Error(ErrorCode::kInvalidArgument, "the event has no \"tool_name\"");
    }
    event.unidentified_calls = true;
    if (before) {
      event.name = "PreToolUse";
      event.tool_use_id = gemini_call_id();
      return event;
    }
    event.name = "PostToolUse";
    event.tool_use_id.clear();
    std::string response_json;
    if (!event.tool_response.isEmpty()) {
      std::ostringstream text;
      Poco::JSON::Stringifier::stringify(event.tool_response, text);
      response_json = text.str();
    }
    if (std::optional<std::string> failure = gemini_call_failure(event.tool_name, response_json)) {
      event.name = "PostToolUseFailure";
      event.error = *failure;  // whole: the record redacts it, then cuts it
    }
    return event;
  }

  HookAnswer answer(const AgentEvent& event, const HookVerdict& verdict) const override {
    HookAnswer answer{verdict.exit_code, "", verdict.message, event.name};
    if (verdict.exit_code != 0) return answer;
    Object::Ptr out = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    if (!verdict.deny.empty()) {
      out->set("decision", "deny");
      out->set("reason", verdict.deny);
    }
    if (!verdict.stop.empty()) {
      out->set("continue", false);
      out->set("stopReason", verdict.stop);
    }
    if (!verdict.context.empty()) {
      Object::Ptr specific = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
      specific->set("hookEventName", event.native_name);
      specific->set("additionalContext", verdict.context);
      out->set("hookSpecificOutput", specific);
    }
    // Gemini CLI shows it to the person in the terminal; the model never reads it.
    if (!verdict.notice.empty()) out->set("systemMessage", verdict.notice);
    if (out->size() == 0) return answer;
    answer.stdout_json = adapter_support::to_json(out);
    return answer;
  }

  // Gemini's launcher starts the CLI again while it exits with 199 (RELAUNCH_EXIT_CODE),
  // which it does after the person changed the folder's trust. Run as one process
  // (GEMINI_CLI_NO_RELAUNCH), the CLI leaves that to `run`.
  bool asks_to_start_again(int exit_status) const override { return exit_status == 199; }

  std::unique_ptr<PreparedHome> prepare_home(const HomeRequest& request) const override {
    return std::make_unique<GeminiHome>(request);
  }

  void install_hooks(const fs::path& home, const HookEndpoints& endpoints) const override {
    fs::path file = home / ".gemini" / "settings.json";
    fsnap::write_file_atomically(file,
                                 with_shadowbox_hooks(fsnap::read_small_file(file).value_or(""),
                                                      endpoints.command, fs::absolute(home)),
                                 0600);
  }

  void uninstall_hooks(const fs::path& home) const override {
    fs::path file = home / ".gemini" / "settings.json";
    try {
      if (fs::exists(file)) {
        fsnap::write_file_atomically(
            file, without_shadowbox_hooks(fsnap::read_small_file(file).value_or("")), 0600);
      }
    } catch (const std::exception&) {
      // The run's HOME is the run's own: what is left there harms no one.
    }
  }

  std::vector<std::string> environment(const fs::path& home) const override {
    // One process (no relaunched child that ignores SIGTERM), its .gemini in the HOME.
    return {"GEMINI_CLI_HOME=" + fs::absolute(home).string(), "GEMINI_CLI_NO_RELAUNCH=true"};
  }
  std::vector<std::string> withheld_variables() const override {
    return {"GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH"};
  }

  std::vector<std::string> preserved_parts() const override {
    return {".gemini/tmp", ".gemini/projects.json"};
  }

  // Gemini CLI names a project's directories (.gemini/tmp/<slug>, .gemini/history/<slug>)
  // in projects.json, by the project's path, and marks each with its path
  // (.project_root): both are moved to the new path, the slug kept.
  void rekey_session_data(const fs::path& home, const std::string& from,
                          const std::string& to) const override {
    fs::path registry = home / ".gemini" / "projects.json";
    std::optional<std::string> text = fsnap::read_small_file(registry);
    if (!text || from == to) return;
    Poco::JSON::Object::Ptr root = parse(*text, registry.string());
    Poco::JSON::Object::Ptr projects = root->getObject("projects");
    if (!projects || !projects->has(from) || projects->has(to)) return;
    std::string slug = projects->getValue<std::string>(from);
    projects->remove(from);
    projects->set(to, slug);
    for (const char* base : {"tmp", "history"}) {
      fs::path marker = home / ".gemini" / base / slug / ".project_root";
      if (fs::exists(marker)) fsnap::write_file_atomically(marker, to);
    }
    fsnap::write_file_atomically(registry, json_object::file_text(root), 0600);
  }

  bool is_session_path(const std::string& path, const std::string& session_id) const override {
    if (session_id.size() < 8 || !path.starts_with(".gemini/tmp/")) return false;
    if (path.find("/chats/session-") == std::string::npos) return false;
    return path.ends_with("-" + session_id.substr(0, 8) + ".jsonl");
  }

  std::vector<std::string> resume_argv(const ResumeCommand& request) const override {
    return gemini_resume_argv(request.command, request.session_id, request.extra_args,
                              request.only_extra_args);
  }

  // A fork: a new session (a random UUID, as Gemini CLI makes them) holding the turns
  // before the call.
  SessionCut cut_session(const fs::path& home, const SessionCutPoint& point) const override {
    return gemini_cut_session(home, point, session_file::random_uuid(4));
  }

  // A resume's fork: all of the session under a new id.
  std::optional<SessionCut> fork_session(const fs::path& home,
                                         const std::string& session_id) const override {
    return gemini_fork_session(home, session_id, session_file::random_uuid(4));
  }

  std::optional<SessionLine> read_session_line(const std::string& line) const override {
    return gemini_session_line(line);
  }
  std::string silent_hooks_hint() const override {
    return "shadowbox's hooks are in .gemini/settings.json of the agent's HOME (merged into your "
           "own settings); Gemini CLI runs no hooks when hooks are disabled in the settings, and "
           "none in a folder it does not trust";
  }
};

}  // namespace

std::optional<std::string> gemini_call_failure(const std::string& tool_name,
                                               const std::string& response_json) {
  if (response_json.empty()) return std::nullopt;
  Object::Ptr response;
  try {
    response = parse(response_json, "tool_response");
  } catch (const Error&) {
    return std::nullopt;
  }
  if (response->has("error") && !response->isNull("error")) {
    Object::Ptr error = response->getObject("error");
    std::string message = error ? error->optValue<std::string>("message", "") : "";
    if (message.empty()) message = response->get("error").toString();
    return message;
  }
  if (tool_name != "run_shell_command") return std::nullopt;
  Poco::Dynamic::Var content = response->get("llmContent");
  if (!content.isString()) return std::nullopt;
  std::optional<std::string> failure = shell_failure(content.extract<std::string>());
  if (!failure) return std::nullopt;
  Poco::Dynamic::Var display = response->get("returnDisplay");
  if (display.isString() && !display.extract<std::string>().empty()) {
    *failure += ": " + display.extract<std::string>();
  }
  return failure;
}

std::string gemini_call_id() {
  static std::atomic<unsigned> count{0};
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return "sbx_" + std::to_string(ms) + "_" + std::to_string(::getpid()) + "_" +
         std::to_string(++count);
}

std::string gemini_run_settings(const std::string& settings_json) {
  Object::Ptr settings = settings_json.find_first_not_of(" \t\r\n") == std::string::npos
                             ? Object::Ptr(new Object(Poco::JSON_PRESERVE_KEY_ORDER))
                             : parse(settings_json, "settings.json");
  // On, a later run in the project deletes a resumed session's files (0.61.0).
  child(child(settings, "general"), "sessionRetention")->set("enabled", false);
  Object::Ptr auth = child(child(settings, "security"), "auth");
  if (!auth->has("selectedType")) auth->set("selectedType", "gemini-api-key");
  return json_object::file_text(settings);
}

std::string with_shadowbox_hooks(const std::string& settings_json, const std::string& command,
                                 const fs::path& run_home) {
  Object::Ptr settings = parse(without_shadowbox_hooks(settings_json), "settings.json");
  Object::Ptr hooks = child(settings, "hooks");
  for (const char* event : {"BeforeTool", "AfterTool", "SessionStart", "SessionEnd"}) {
    Object::Ptr env = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    env->set("SHADOWBOX_RUN_HOME", run_home.string());
    Object::Ptr handler = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    handler->set("name", kHookName);
    handler->set("type", "command");
    handler->set("command", command);
    handler->set("timeout", kGeminiHookTimeoutMs);
    handler->set("env", env);
    Array::Ptr handlers = new Array;
    handlers->add(handler);
    Object::Ptr group = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    if (std::string(event).find("Tool") != std::string::npos) group->set("matcher", ".*");
    group->set("hooks", handlers);
    Array::Ptr groups = hooks->getArray(event);
    if (!groups) {
      groups = new Array;
      hooks->set(event, groups);
    }
    groups->add(group);
  }
  return json_object::file_text(settings);
}

std::string without_shadowbox_hooks(const std::string& settings_json) {
  Object::Ptr settings = parse(settings_json, "settings.json");
  Object::Ptr hooks = settings->getObject("hooks");
  if (!hooks) return json_object::file_text(settings);
  std::vector<std::string> names;
  hooks->getNames(names);
  for (const std::string& name : names) {
    Array::Ptr groups = hooks->getArray(name);
    if (!groups) continue;
    Array::Ptr kept = new Array;
    for (std::size_t i = 0; i < groups->size(); ++i) {
      Object::Ptr group = groups->getObject(static_cast<unsigned>(i));
      bool ours = false;
      if (group) {
        if (Array::Ptr handlers = group->getArray("hooks")) {
          for (std::size_t j = 0; j < handlers->size(); ++j) {
            Object::Ptr h = handlers->getObject(static_cast<unsigned>(j));
            ours = ours || (h && h->optValue<std::string>("name", "") == kHookName);
          }
        }
      }
      if (!ours) kept->add(groups->get(static_cast<unsigned>(i)));
    }
    hooks->set(name, kept);
  }
  return json_object::file_text(settings);
}

std::vector<std::string> gemini_resume_argv(const std::vector<std::string>& command,
                                            const std::string& session_id,
                                            const std::vector<std::string>& extra_args,
                                            bool only_extra_args) {
  std::vector<std::string> argv = {command.empty() ? std::string("gemini") : command.front()};
  std::vector<std::string> options;
  std::vector<std::string> prompt;
  for (std::size_t i = 1; i < command.size(); ++i) {
    const std::string& a = command[i];
    if (a.size() > 1 && a[0] == '-') {
      std::string name = a.substr(0, a.find('='));
      std::vector<std::string> option = {a};
      if (a.find('=') == std::string::npos && takes_value(a) && i + 1 < command.size()) {
        option.push_back(command[++i]);
      }
      if (is_session_option(name)) continue;
      std::vector<std::string>& into = is_prompt_option(name) ? prompt : options;
      into.insert(into.end(), option.begin(), option.end());
      continue;
    }
    prompt.push_back(a);  // the positional prompt
  }
  if (!only_extra_args) {
    argv.insert(argv.end(), options.begin(), options.end());
    if (extra_args.empty()) argv.insert(argv.end(), prompt.begin(), prompt.end());
  }
  argv.emplace_back("--resume");
  argv.push_back(session_id);
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  return argv;
}

const AgentAdapter& gemini_adapter() {
  static const GeminiAdapter adapter;
  return adapter;
}

}  // namespace hooks
