// The adapters of Claude Code and of applications embedding it (Claude Agent SDK): the
// hook protocol is Claude Code's own (docs/agents/claude-code.md), the HOME is
// AgentHome's, the hooks go into .claude/settings.json, and a session is resumed with
// --resume (the CLI) or through the application's environment (kResumeSessionVariable).
#include <Poco/JSON/Object.h>

#include "adapter_support.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/agent_home.hpp"
#include "hooks/agent_hook.hpp"
#include "hooks/claude_code_command.hpp"
#include "hooks/claude_code_home.hpp"
#include "hooks/claude_code_session_cut.hpp"
#include "hooks/claude_code_settings.hpp"
#include "sandbox/errors.hpp"
#include "session_lines.hpp"

namespace hooks {

namespace {

using adapter_support::to_json;
using Poco::JSON::Object;

// AgentHome as a PreparedHome.
class ClaudeCodeHome : public PreparedHome {
 public:
  explicit ClaudeCodeHome(const HomeRequest& r)
      : home_(r.home, r.user.claude, r.settings, r.workspace, r.warn) {}
  void tick() override { home_.tick(); }
  void finish() override { home_.finish(); }
  std::vector<std::string> carried() const override {
    std::vector<std::string> paths = home_.carried();
    // Claude Code's backups of .claude.json hold what it holds (remove_carried_setup).
    for (const std::string& path : home_.carried()) {
      if (path == ".claude.json") paths.emplace_back(".claude/backups");
    }
    return paths;
  }

 private:
  AgentHome home_;
};

class ClaudeCodeAdapter : public AgentAdapter {
 public:
  explicit ClaudeCodeAdapter(AgentKind kind) : kind_(kind) {}

  AgentKind kind() const override { return kind_; }

  AgentEvent parse_event(const std::string& event_json) const override {
    return parse_agent_event(event_json);
  }

  HookAnswer answer(const AgentEvent& event, const HookVerdict& verdict) const override {
    HookAnswer answer{verdict.exit_code, "", verdict.message, event.name};
    if (verdict.exit_code != 0) return answer;
    Object::Ptr out = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    if (!verdict.deny.empty()) {
      Object::Ptr specific = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
      specific->set("hookEventName", "PreToolUse");
      specific->set("permissionDecision", "deny");
      specific->set("permissionDecisionReason", verdict.deny);
      if (!verdict.stop.empty()) {
        out->set("continue", false);
        out->set("stopReason", verdict.stop);
      }
      out->set("hookSpecificOutput", specific);
    } else if (!verdict.context.empty()) {
      Object::Ptr specific = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
      specific->set("hookEventName", event.name);
      specific->set("additionalContext", verdict.context);
      out->set("hookSpecificOutput", specific);
    }
    // Shown to the person in the TUI (and as a `system` message of subtype
    // `informational` in stream-json); the model never reads it.
    if (!verdict.notice.empty()) out->set("systemMessage", verdict.notice);
    if (out->size() != 0) answer.stdout_json = to_json(out);
    return answer;
  }

  bool reports_cost() const override { return true; }
  bool http_hooks() const override { return true; }
  bool context_before_tool() const override { return true; }

  std::unique_ptr<PreparedHome> prepare_home(const HomeRequest& request) const override {
    return std::make_unique<ClaudeCodeHome>(request);
  }

  void install_hooks(const boost::filesystem::path& home,
                     const HookEndpoints& endpoints) const override {
    boost::filesystem::path settings = claude_code_settings_file(home);
    if (endpoints.http_url.empty()) {
      install_hooks_in_file(settings, endpoints.command);
    } else {
      install_http_hooks_in_file(settings, endpoints.http_url, endpoints.command);
    }
  }

  void uninstall_hooks(const boost::filesystem::path& home) const override {
    try {
      uninstall_hooks_in_file(claude_code_settings_file(home));
    } catch (const std::exception&) {
      // The run's HOME is the run's own: what is left there harms no one.
    }
  }

  std::vector<std::string> environment(const boost::filesystem::path&) const override { return {}; }
  // Its configuration is the run's HOME, never the user's own.
  std::vector<std::string> withheld_variables() const override {
    return {"CLAUDE_CONFIG_DIR", "CLAUDE_SECURESTORAGE_CONFIG_DIR"};
  }

  std::vector<std::string> preserved_parts() const override {
    return claude_code_preserved_parts();
  }
  bool is_session_path(const std::string& path, const std::string& session_id) const override {
    return is_transcript_path(path, session_id);
  }
  void rekey_session_data(const boost::filesystem::path& home, const std::string& from,
                          const std::string& to) const override {
    rekey_claude_code_sessions(home, from, to);
  }

  std::vector<std::string> resume_argv(const ResumeCommand& request) const override {
    if (kind_ == AgentKind::kClaudeSdk) {
      // An application is started again as it is; the session to resume is in its
      // environment.
      if (request.only_extra_args) {
        throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                             "--only-args is for Claude Code; the agent of this run is an "
                             "application (claude-sdk), which is started as given: resume RUN "
                             "-- CMD ARGS");
      }
      return request.extra_args.empty() ? request.command : request.extra_args;
    }
    std::vector<std::string> argv = {request.command.front()};
    if (!request.only_extra_args) {
      // The options the run was started with go on (tools allowed, permission mode,
      // model...); its prompt is replaced by the one given now, if any.
      std::vector<std::string> original(request.command.begin() + 1, request.command.end());
      bool new_prompt = !split_claude_code_args(request.extra_args).prompt.empty();
      for (std::string& option : options_to_resume_with(original, new_prompt)) {
        argv.push_back(std::move(option));
      }
    }
    argv.push_back("--resume");
    argv.push_back(request.session_id);
    if (request.fork) argv.push_back("--fork-session");
    argv.insert(argv.end(), request.cut_args.begin(), request.cut_args.end());
    argv.insert(argv.end(), request.extra_args.begin(), request.extra_args.end());
    return argv;
  }

  SessionCut cut_session(const boost::filesystem::path& home,
                         const SessionCutPoint& point) const override {
    TranscriptCut cut = cut_claude_code_transcript(home, point);
    SessionCut out{point.session_id, {}};
    // The truncated transcript ends there whatever the mode; in print mode Claude Code's
    // own cut checks it too (and refuses a message it does not have). An application is
    // given the session in its environment, and its command as it is.
    if (kind_ == AgentKind::kClaudeCode) {
      out.resume_args = {"--resume-session-at", cut.last_kept_uuid};
    }
    return out;
  }

  std::optional<SessionLine> read_session_line(const std::string& line) const override {
    return claude_code_session_line(line);
  }
  std::string silent_hooks_hint() const override {
    if (kind_ == AgentKind::kClaudeSdk) {
      return "shadowbox's hooks are in the user settings of the agent's HOME: an application "
             "using the Claude Agent SDK must load them, with settingSources including 'user' "
             "(settingSources: [] is the SDK's isolation mode, which loads no hooks)";
    }
    return "shadowbox's hooks are in the user settings of the agent's HOME "
           "(.claude/settings.json); a managed setting such as allowManagedHooksOnly or "
           "disableAllHooks keeps Claude Code from running them";
  }

 private:
  AgentKind kind_;
};

}  // namespace

const AgentAdapter& claude_code_adapter() {
  static const ClaudeCodeAdapter adapter(AgentKind::kClaudeCode);
  return adapter;
}

const AgentAdapter& claude_sdk_adapter() {
  static const ClaudeCodeAdapter adapter(AgentKind::kClaudeSdk);
  return adapter;
}

HttpHookReply to_http_reply(const HookAnswer& answer) {
  if (answer.exit_code == 0) {
    return HttpHookReply{200, "application/json",
                         answer.stdout_json.empty() ? "{}" : answer.stdout_json};
  }
  if (answer.exit_code != 2) {
    // Not blocking: Claude Code reports a non-2xx answer and goes on.
    return HttpHookReply{400, "text/plain; charset=utf-8", answer.stderr_text};
  }
  // Blocking: said in the JSON Claude Code reads from a 2xx answer.
  Object::Ptr out = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  if (answer.event == "PreToolUse") {
    Object::Ptr specific = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    specific->set("hookEventName", "PreToolUse");
    specific->set("permissionDecision", "deny");
    specific->set("permissionDecisionReason", answer.stderr_text);
    out->set("hookSpecificOutput", specific);
  } else if (answer.event == "PostToolUse" || answer.event == "PostToolUseFailure") {
    out->set("decision", "block");
    out->set("reason", answer.stderr_text);
  } else {
    out->set("systemMessage", answer.stderr_text);
  }
  return HttpHookReply{200, "application/json", to_json(out)};
}

}  // namespace hooks
