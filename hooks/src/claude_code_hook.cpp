#include "hooks/claude_code_hook.hpp"

#include <sstream>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "hooks/agent_home.hpp"
#include "hooks/agent_runs.hpp"
#include "hooks/claude_code_state.hpp"
#include "sandbox/tool_boundaries.hpp"

namespace hooks {

namespace {

using Poco::JSON::Object;

constexpr std::size_t kInputSummaryLimit = 4000;
constexpr std::size_t kResultSummaryLimit = 1000;

// A hook event that does not follow the protocol.
class BadEvent : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string field(const Object::Ptr& event, const std::string& key, bool required) {
  if (!event->has(key) || event->isNull(key)) {
    if (required) throw BadEvent("the event has no \"" + key + "\"");
    return "";
  }
  Poco::Dynamic::Var v = event->get(key);
  if (!v.isString()) throw BadEvent("\"" + key + "\" is not a string");
  return v.extract<std::string>();
}

std::string summary_of(const Poco::Dynamic::Var& value, std::size_t limit) {
  std::string text;
  if (value.isEmpty()) return text;
  if (value.isString()) {
    text = value.extract<std::string>();
  } else {
    std::ostringstream out;
    Poco::JSON::Stringifier::stringify(value, out);
    text = out.str();
  }
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return text;
}

std::string hook_output(const std::string& event_name, const std::string& context) {
  Object::Ptr specific = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  specific->set("hookEventName", event_name);
  specific->set("additionalContext", context);
  Object::Ptr out = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  out->set("hookSpecificOutput", specific);
  std::ostringstream text;
  out->stringify(text);
  return text.str();
}

// Checkpoints of other tool calls that changed files after `pre` in the run.
std::vector<fsnap::Checkpoint> later_changes_by_others(fsnap::ShadowRepo& repo,
                                                       const std::string& run,
                                                       const fsnap::Checkpoint& pre) {
  std::vector<fsnap::Checkpoint> out;
  std::vector<fsnap::Checkpoint> chain = repo.log(run, 0);
  for (std::size_t i = 0; i < chain.size() && chain[i].commit != pre.commit; ++i) {
    const fsnap::Checkpoint& c = chain[i];
    bool other_tool =
        c.meta.phase == fsnap::Phase::kPostTool && c.meta.tool_call_id != pre.meta.tool_call_id;
    bool changed = i + 1 < chain.size() && chain[i + 1].tree != c.tree;
    if (other_tool && changed) out.push_back(c);
  }
  return out;
}

std::string describe_changes(const std::vector<fsnap::TreeChange>& changes) {
  std::string text;
  std::size_t shown = 0;
  for (const fsnap::TreeChange& c : changes) {
    if (c.after && c.after->type == fsnap::EntryType::kDirectory && c.before) continue;
    if (shown++ == 10) {
      text += ", ...";
      break;
    }
    const char* verb = c.kind == fsnap::TreeChange::Kind::kAdded     ? "restored "
                       : c.kind == fsnap::TreeChange::Kind::kDeleted ? "removed "
                                                                     : "reverted ";
    text += (text.empty() ? "" : ", ") + std::string(verb) + fsnap::quote_path(c.path);
  }
  return text;
}

HookAnswer on_failure(const Object::Ptr& event, sandbox::ToolBoundaries& boundaries,
                      fsnap::HostFilesystem& workspace, const ClaudeCodeHookOptions& options) {
  std::string call_id = field(event, "tool_use_id", true);
  std::string tool = field(event, "tool_name", true);
  std::string error = redact(summary_of(event->get("error"), kResultSummaryLimit), options.secrets);
  HookAnswer answer;
  fsnap::Checkpoint pre = workspace.repo().resolve("pre:" + call_id);
  if (!options.rollback_on_failure || options.keep_failed_tools.count(tool) != 0) {
    boundaries.post_tool(call_id, "failed (not rolled back by configuration): " + error, "",
                         /*success=*/false);
    return answer;
  }
  std::vector<fsnap::Checkpoint> others =
      later_changes_by_others(workspace.repo(), options.run, pre);
  if (!others.empty()) {
    std::string names;
    for (const fsnap::Checkpoint& c : others) {
      names += (names.empty() ? "" : ", ") + c.meta.tool_name + " " + c.meta.tool_call_id;
    }
    std::string warning = "rollback refused: " + names +
                          " changed files after this call started, and restoring its "
                          "pre-tool checkpoint would undo them";
    boundaries.post_tool(call_id, "failed; " + warning + ": " + error, "", /*success=*/false);
    answer.stdout_json =
        hook_output("PostToolUseFailure", "shadowbox did NOT roll back this failed " + tool +
                                              " call (" + call_id + "): " + warning +
                                              ". Its changes are still in the "
                                              "workspace.");
    answer.stderr_text = "shadowbox: warning: " + warning;
    return answer;
  }
  sandbox::BoundaryResult result = boundaries.rollback_tool(call_id, error);
  const std::vector<fsnap::TreeChange>& changes = result.restore->changes;
  std::string context = changes.empty()
                            ? "shadowbox checked the workspace after this failed " + tool +
                                  " call (" + call_id + "): it had changed nothing."
                            : "shadowbox rolled back the workspace to before this failed " + tool +
                                  " call (" + call_id + "): " + describe_changes(changes) +
                                  ". The failed state is kept as " + "checkpoint " +
                                  result.restore->safety->id + " (shadowbox restore " +
                                  result.restore->safety->id + " brings it back).";
  answer.stdout_json = hook_output("PostToolUseFailure", context);
  return answer;
}

}  // namespace

std::optional<std::string> event_problem(const std::string& event_json) {
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(event_json);
    if (parsed.type() != typeid(Object::Ptr)) return "the event is not a JSON object";
    Object::Ptr event = parsed.extract<Object::Ptr>();
    std::string name = field(event, "hook_event_name", true);
    if (name == "PreToolUse" || name == "PostToolUse" || name == "PostToolUseFailure") {
      field(event, "tool_name", true);
      field(event, "tool_use_id", true);
    }
    if (name == "SessionStart") field(event, "session_id", true);
    return std::nullopt;
  } catch (const BadEvent& e) {
    return std::string(e.what());
  } catch (const Poco::Exception& e) {
    return "not JSON: " + e.displayText();
  }
}

namespace {

// Answers one event; name receives its hook_event_name as soon as it is known.
HookAnswer answer_event(const std::string& event_json, fsnap::HostFilesystem& workspace,
                        sandbox::Ledger& ledger, const ClaudeCodeHookOptions& options,
                        std::string& name) {
  register_claude_code_slice_types();
  Object::Ptr event;
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(event_json);
    if (parsed.type() != typeid(Object::Ptr)) throw BadEvent("the event is not a JSON object");
    event = parsed.extract<Object::Ptr>();
    name = field(event, "hook_event_name", true);
  } catch (const BadEvent& e) {
    return HookAnswer{1, "",
                      std::string("shadowbox: ignoring a malformed hook event: ") + e.what()};
  } catch (const Poco::Exception& e) {
    return HookAnswer{1, "",
                      "shadowbox: ignoring a hook event that is not JSON: " + e.displayText()};
  }

  sandbox::ToolBoundaries boundaries(workspace, ledger, options.run);
  try {
    if (name == "PreToolUse") {
      std::string call_id = field(event, "tool_use_id", true);
      std::string tool = field(event, "tool_name", true);
      std::string input =
          redact(summary_of(event->get("tool_input"), kInputSummaryLimit), options.secrets);
      boundaries.pre_tool(call_id, tool, input, "", /*separate_outside_changes=*/true);
      return HookAnswer{};
    }
    if (name == "PostToolUse") {
      std::string call_id = field(event, "tool_use_id", true);
      field(event, "tool_name", true);
      boundaries.post_tool(
          call_id,
          redact(summary_of(event->get("tool_response"), kResultSummaryLimit), options.secrets));
      return HookAnswer{};
    }
    if (name == "PostToolUseFailure") return on_failure(event, boundaries, workspace, options);
    if (name == "SessionStart") {
      ClaudeCodeSession session{field(event, "session_id", true),
                                field(event, "transcript_path", false),
                                field(event, "source", false), field(event, "cwd", false),
                                fsnap::format_timestamp(std::chrono::system_clock::now())};
      boundaries.checkpoint(
          {"", fsnap::Phase::kCheckpoint, "", "", options.run},
          [&](sandbox::Session& s) {
            if (!s.has_reducer<ClaudeCodeSession, ClaudeCodeSession>()) {
              s.register_reducer<ClaudeCodeSession, ClaudeCodeSession>(
                  sandbox::reducers::append_all<ClaudeCodeSession>);
            }
            s.dispatch(session);
            s.seed<RunStatus>({RunStatus{"running", ""}});
          },
          "agent session " + session.session_id + " (" + session.source + ")");
      return HookAnswer{};
    }
    if (name == "Stop" || name == "SessionEnd") {
      std::string reason = name == "Stop" ? "stop" : field(event, "reason", false);
      boundaries.checkpoint(
          {"", fsnap::Phase::kCheckpoint, "", "", options.run},
          [&](sandbox::Session& s) {
            s.seed<RunStatus>({RunStatus{"complete", reason}});
          },
          "run complete (" + name + ")");
      return HookAnswer{};
    }
    // Events shadowbox does not act on pass through untouched.
    return HookAnswer{};
  } catch (const BadEvent& e) {
    return HookAnswer{1, "", "shadowbox: ignoring a malformed " + name + " event: " + e.what()};
  } catch (const std::exception& e) {
    std::string message = "shadowbox: checkpointing failed on " + name + ": " + e.what();
    append_run_log(workspace.store(), options.run, message);
    if (name == "PreToolUse") {
      message +=
          " (the tool call is blocked so that it cannot make a change shadowbox could not "
          "undo)";
    }
    return HookAnswer{2, "", message};
  }
}

}  // namespace

HookAnswer handle_claude_code_event(const std::string& event_json, fsnap::HostFilesystem& workspace,
                                    sandbox::Ledger& ledger, const ClaudeCodeHookOptions& options) {
  std::string name;
  HookAnswer answer = answer_event(event_json, workspace, ledger, options, name);
  answer.event = name;
  return answer;
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
  std::ostringstream text;
  out->stringify(text);
  return HttpHookReply{200, "application/json", text.str()};
}

}  // namespace hooks
