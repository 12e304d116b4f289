// `shadowbox hook <agent>` (one hook event on stdin) and
// `shadowbox hooks install|uninstall [--scope project|user]`.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>

#include <boost/filesystem/operations.hpp>

#include "background_maintenance.hpp"
#include "commands.hpp"
#include "fsnap/store.hpp"
#include "fsnap/store_layout.hpp"
#include "fsnap/workspace_discovery.hpp"
#include "hook_event.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/agent_event.hpp"
#include "hooks/agent_hook.hpp"
#include "hooks/agent_kind.hpp"
#include "hooks/claude_code_home.hpp"
#include "hooks/claude_code_project_hooks.hpp"
#include "hooks/claude_code_settings.hpp"
#include "hooks/event_json.hpp"
#include "hooks/installed_settings.hpp"
#include "hooks/run_policy.hpp"
#include "output.hpp"
#include "runs/home_preservation.hpp"
#include "runs/redaction.hpp"
#include "runs/run_meta.hpp"
#include "shell.hpp"
#include "termination.hpp"
#include "watch_daemon.hpp"

extern char** environ;

namespace cli {

namespace fs = boost::filesystem;

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// Makes a relative path of the hook's command line absolute against its cwd.
void absolute_against(std::optional<std::string>& path, const std::string& cwd) {
  if (path && !path->empty() && (*path)[0] != '/') *path = (fs::path(cwd) / *path).string();
}

// Where the workspace of a hook event is looked for (see locate): --workspace names it;
// else it is found from the project Claude Code names, else from the event's own cwd. So
// hooks installed for every project (--scope user) record each project into its own
// store, and a session started in a subdirectory of a project records the project.
GlobalOptions hook_options(GlobalOptions options, const hooks::AgentEvent& event,
                           const HookEnvironment& env) {
  if (options.workspace) return options;
  std::string project = env.get("CLAUDE_PROJECT_DIR");
  if (!project.empty()) {
    options.search_from = project;
  } else if (!event.cwd.empty()) {
    options.search_from = event.cwd;
  }
  return options;
}

// Whether this is a hook that names no store — installed for every project (--scope
// user), or in a project's shared settings (--shared) — in a project whose own shadowbox
// hooks record the event: it stands aside, so that the event is not recorded twice. A
// shared hook stands aside for the project's local hooks only; a hook for every project
// for those and the shared ones. Hooks in the project's settings that only look like
// shadowbox's do not count (lookalike says why, for the run's log).
bool defers_to_project_hooks(const GlobalOptions& given, const Args& parsed,
                             const GlobalOptions& resolved, const std::string& event,
                             const HookEnvironment& env, std::string& lookalike) {
  if (given.store || given.workspace || parsed.has("--run") || !resolved.search_from) {
    return false;
  }
  hooks::ProjectHooksQuery query;
  try {
    query.workspace = locate(resolved).workspace;
    query.project = fs::canonical(fs::path(*resolved.search_from));
  } catch (const std::exception&) {
    return false;  // no workspace: nothing to stand aside for (recording says why)
  }
  try {
    fs::path self = self_path();
    query.programs = {self, self.parent_path() / "shadowbox-hook"};
  } catch (const std::exception&) {
    // No program to compare with: none of the project's hooks counts.
  }
  query.path = env.get("PATH");
  query.count_shared = !parsed.has("--shared");
  hooks::ProjectHooksFinding found = hooks::find_project_hooks(query, event);
  lookalike = found.lookalike;
  return found.records_event;
}

// The run the events of agent session session_id are recorded in when nothing names one:
// "session-<id>" (characters a run name cannot hold made '_'), or "default" for an event
// of no session.
std::string session_run_name(const std::string& session_id) {
  if (session_id.empty()) return "default";
  std::string name = "session-" + session_id.substr(0, 64);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return fsnap::layout::is_valid_run_name(name) ? name : "default";
}

// Appends "warning: text" to the run's log unless it holds it already.
void warn_once_in_log(const fsnap::Store& store, const std::string& run, const std::string& text) {
  std::ifstream in(fsnap::layout::run_log_file(store.dir(), run).string());
  const std::string line_end = " warning: " + text;
  for (std::string line; std::getline(in, line);) {
    if (line.size() >= line_end.size() &&
        line.compare(line.size() - line_end.size(), line_end.size(), line_end) == 0) {
      return;
    }
  }
  runs::append_run_log(store, run, "warning: " + text);
}

// Records the event into the run; the answer for the agent.
hooks::HookAnswer record_event(const hooks::AgentAdapter& adapter, const Context& context,
                               const std::string& run_name, const hooks::AgentEvent& event,
                               bool session_ends, const HookEnvironment& env,
                               const std::shared_ptr<fsnap::CaptureService>& captures,
                               WarmHookState* warm, const std::string& lookalike) {
  std::string run_home = env.get("SHADOWBOX_RUN_HOME");
  std::shared_ptr<fsnap::CaptureService> capture_service = captures;
  if (!capture_service && context.config.watch.daemon && !run_home.empty() &&
      adapter.http_hooks() && context.config.hooks.transport == "http") {
    // Under `shadowbox run`, whose process answers this agent's tool events with the
    // workspace watched, the few events that come as processes (Claude Code's
    // SessionStart) start no watch daemon: it would watch the workspace beside the run
    // for nothing, and be ended with the agent's processes. One already running helps.
    capture_service = watch_client(context.open_store(true), std::nullopt);
  }
  std::shared_ptr<fsnap::ShadowRepo> repo;
  if (warm != nullptr)
    repo = warm->repo([&] { return context.open_repo(context.open_store(true)); });
  std::unique_ptr<runs::LedgerRun> run =
      context.open_run(run_name, true, std::move(repo), capture_service);
  if (!lookalike.empty()) warn_once_in_log(run->store(), run_name, lookalike);
  hooks::contain_run(*run, context.config,
                     hooks::run_limits(run->store(), run_name, context.config));
  std::vector<std::string> secrets = context.secret_values();
  fs::path reported = fsnap::layout::agent_cost_file(run->store().dir(), run_name);
  std::optional<hooks::SpendMeter> own_meter;
  hooks::SpendMeter& meter = warm != nullptr
                                 ? warm->meter(run_name, context.config.policy.prices, reported)
                                 : own_meter.emplace(context.config.policy.prices, reported);
  auto warn = [](const std::string& text) { std::cerr << "shadowbox: warning: " << text << '\n'; };
  // A run that `shadowbox run` started has run.json; hooks installed by hand do not.
  bool supervised = runs::RunMeta::load(run->store(), run_name).has_value();
  // Under `shadowbox run`, the agent's session data is preserved at every boundary (with
  // run.preserve on_tool_use, the default), so a crash loses at most the step in flight;
  // before the boundary is recorded, so that its record names the conversation as it is
  // now (a pre-tool boundary: with the model's turn that made the call).
  if (!run_home.empty() && context.config.run.capture_state &&
      context.config.run.preserve == runs::PreserveStrategy::kOnToolUse) {
    try {
      std::optional<runs::HomePreserver> own;
      runs::HomePreserver& preserver =
          warm != nullptr ? warm->preserver(run->store(), run->repo(), run_name, run_home,
                                            adapter.preserved_parts(), secrets)
                          : own.emplace(run->store(), run->repo(), run_name, run_home,
                                        adapter.preserved_parts(), secrets);
      preserver.preserve_now();
    } catch (const std::exception& e) {
      std::cerr << "shadowbox: warning: could not preserve the agent's session data: " << e.what()
                << '\n';
    }
  }
  hooks::HookAnswer answer = hooks::handle_hook_event(
      adapter, event, *run,
      {secrets, &meter, supervised, warn, env.get(hooks::kResumeSessionVariable)});
  // Under `shadowbox run` the run maintains the store; hooks installed by hand do here.
  if (run_home.empty()) maintain_in_background(context, session_ends);
  return answer;
}

// The answer when nothing could be recorded (no workspace, a broken config...), which
// is also a gap in the run's log that `shadowbox runs` counts.
HookReply unrecorded(const GlobalOptions& options, const std::string& run_name,
                     const hooks::AgentEvent& event, const std::string& error) {
  HookReply reply = unrecorded_reply(event.name, error);
  try {
    runs::record_gap(locate(options).store_dir, run_name,
                     "shadowbox: cannot record " + event.name + ": " + error);
  } catch (const std::exception&) {
    // No store to write to: the answer is all there is.
  }
  return reply;
}

// The adapter of the agent the hook is for. A usage error for an unknown one.
const hooks::AgentAdapter& hook_adapter(const Args& parsed) {
  std::optional<hooks::AgentKind> kind = hooks::parse_agent_kind(parsed.operands()[0]);
  if (!kind) {
    throw parsed.usage_error("unknown agent " + fsnap::quote_input(parsed.operands()[0]) +
                             " (supported: " + hooks::agent_kind_names() + ")");
  }
  return hooks::adapter_for(*kind);
}

}  // namespace

std::string HookEnvironment::get(const char* name) const {
  auto found = vars.find(name);
  return found != vars.end() ? found->second : "";
}

HookEnvironment HookEnvironment::of_process() {
  HookEnvironment env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::size_t eq = entry.find('=');
    if (eq != std::string_view::npos) {
      env.vars.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  return env;
}

HookReply answer_hook_event(const GlobalOptions& global, const Args& parsed,
                            const std::string& event, const HookEnvironment& env,
                            const std::shared_ptr<fsnap::CaptureService>& captures,
                            WarmHookState* warm) {
  HookReply reply;
  const hooks::AgentAdapter& adapter = hook_adapter(parsed);
  // Under `shadowbox run`, the run's own hooks (they name their run) record every event;
  // shadowbox's hooks from the project's or the user's settings stand aside, so that
  // nothing is recorded twice.
  if (!parsed.has("--run") && !env.get("SHADOWBOX_RUN_HOME").empty()) return reply;
  std::string env_run = env.get("SHADOWBOX_RUN");
  std::optional<std::string> named = parsed.value("--run");
  if (!named && !env_run.empty()) named = env_run;
  if (named && !fsnap::layout::is_valid_run_name(*named)) {
    // No folder or ref is made for it, and no call goes unrecorded: fails closed.
    return unrecorded_reply(hooks::scan_event_name(event),
                            "invalid run name " + fsnap::quote_input(*named) +
                                " (from --run or $SHADOWBOX_RUN): use letters, digits, '-', '_' "
                                "and '.'");
  }
  std::string run_name = named.value_or("default");
  hooks::AgentEvent parsed_event;
  try {
    parsed_event = adapter.parse_event(event);
  } catch (const std::exception& e) {
    // Unreadable: fails closed (a call about to run is blocked), and is a gap.
    hooks::HookAnswer answer = hooks::unreadable_event_answer(event, e.what());
    reply.exit_code = answer.exit_code;
    reply.err = answer.stderr_text + "\n";
    try {
      runs::record_gap(locate(hook_options(global, parsed_event, env)).store_dir, run_name,
                       answer.stderr_text);
    } catch (const std::exception&) {
      // No store to write to: the answer is all there is.
    }
    return reply;
  }
  // Hooks that name no run (installed by `hooks install`, or by hand) record each agent
  // session as a run of its own, so that its figures and limits are the session's.
  if (!named) run_name = session_run_name(parsed_event.session_id);
  GlobalOptions options = hook_options(global, parsed_event, env);
  // (Only Claude Code's hooks are installed in a project's settings by `hooks install`.)
  bool claude = adapter.kind() == hooks::AgentKind::kClaudeCode ||
                adapter.kind() == hooks::AgentKind::kClaudeSdk;
  std::string lookalike;
  if (claude &&
      defers_to_project_hooks(global, parsed, options, parsed_event.name, env, lookalike)) {
    return reply;
  }
  try {
    Context context = make_context(options);
    context.environment = env.vars;
    hooks::HookAnswer answer =
        record_event(adapter, context, run_name, parsed_event,
                     parsed_event.name == "SessionEnd" && parsed_event.reason != "clear", env,
                     captures, warm, lookalike);
    if (!answer.stdout_json.empty()) reply.out = answer.stdout_json + "\n";
    if (!answer.stderr_text.empty()) reply.err = answer.stderr_text + "\n";
    reply.exit_code = answer.exit_code;
    return reply;
  } catch (const std::exception& e) {
    return unrecorded(options, run_name, parsed_event, e.what());
  }
}

HookReply answer_relayed_hook_event(const HookMessage& message, const fsnap::Store& store,
                                    const std::shared_ptr<fsnap::CaptureService>& captures,
                                    WarmHookState* warm) {
  HookReply fall_back;
  fall_back.fall_back = true;
  HookEnvironment env;
  env.vars.insert(message.env.begin(), message.env.end());
  // The daemon reads its configuration from its own environment: an event whose hook
  // names another one is recorded by the full command.
  if (env.get("SHADOWBOX_CONFIG") != environment("SHADOWBOX_CONFIG") ||
      env.get("SHADOWBOX_STORE") != environment("SHADOWBOX_STORE")) {
    fall_back.why = "the hook's environment names another configuration or store";
    return fall_back;
  }
  const CommandLine* kept = warm != nullptr ? warm->command_line(message.args) : nullptr;
  CommandLine line;
  if (kept != nullptr) {
    line = *kept;
  } else {
    std::vector<const CommandSyntax*> syntaxes;
    const Command* hook = nullptr;
    for (const Command& c : all_commands()) {
      syntaxes.push_back(&c.syntax);
      if (c.run_unresolved == cmd_hook) hook = &c;
    }
    try {
      line = parse_command_line(message.args, syntaxes);
    } catch (const UsageError& e) {
      fall_back.why = e.what();
      return fall_back;
    }
    if (hook == nullptr || line.command != &hook->syntax || line.help || !line.args ||
        !hooks::parse_agent_kind(line.args->operands()[0])) {
      fall_back.why = "not a hook event's command line";
      return fall_back;
    }
    if (warm != nullptr) warm->keep_command_line(message.args, line);
  }
  GlobalOptions global = line.options;
  absolute_against(global.store, message.cwd);
  absolute_against(global.workspace, message.cwd);
  absolute_against(global.config, message.cwd);
  boost::system::error_code ec;
  if (!global.store || !fs::equivalent(*global.store, store.dir(), ec) || ec) {
    fall_back.why = "the event is for another store";
    return fall_back;
  }
  return answer_hook_event(global, *line.args, message.event, env, captures, warm);
}

int cmd_hook(const GlobalOptions& global, const Args& parsed) {
  hook_adapter(parsed);
  // An agent being stopped gets SIGTERM with its hook processes: this one finishes the
  // step it records (it is short; SIGKILL after the kill grace still ends it).
  defer_termination();
  std::string event((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  HookReply reply =
      answer_hook_event(global, parsed, event, HookEnvironment::of_process(), nullptr);
  std::cout << reply.out;
  std::cerr << reply.err;
  return reply.exit_code;
}

namespace {

// The project's shared settings file, if it holds shadowbox's hooks in a form other
// than the shared one (this machine's paths, as versions before --scope shared wrote):
// fired with the local ones, they would record every event twice.
std::optional<fs::path> machine_hooks_in_shared_file(const fs::path& workspace) {
  fs::path shared = workspace / ".claude" / "settings.json";
  std::optional<std::string> text = hooks::read_project_settings(shared);
  if (!text || !hooks::has_shadowbox_hooks(*text) ||
      text->find(hooks::kSharedHookCommand) != std::string::npos) {
    return std::nullopt;
  }
  return shared;
}

// A warning when the `shadowbox` a shared hook runs is not this program.
void check_shared_program(const Context& context) {
  std::optional<fs::path> found =
      hooks::program_on_path("shadowbox", environment("PATH"), context.workspace);
  boost::system::error_code ec;
  if (!found) {
    std::cerr << "shadowbox: warning: no shadowbox on your PATH: the shared hooks run "
                 "`shadowbox`, and fail where it is not found\n";
  } else if (!fs::equivalent(*found, self_path(), ec) || ec) {
    std::cerr << "shadowbox: warning: the shadowbox on your PATH is " << found->string() << ", not "
              << self_path() << ": the shared hooks run that one\n";
  }
}

}  // namespace

namespace {

// The settings file a scope's hooks go in: this machine's own file of the project
// (project), the project's shared one (shared), or the user's for every project (user).
fs::path hooks_settings_file(const Context& context, const Args& parsed, const std::string& scope) {
  if (scope == "project") {
    // This machine's own: the file Claude Code keeps out of git (its paths are ours).
    return context.workspace / ".claude" / "settings.local.json";
  }
  if (scope != "shared" && scope != "user") {
    throw parsed.usage_error("--scope must be project, shared or user, not " +
                             fsnap::quote_input(scope));
  }
  if (context.options.store) {
    throw parsed.usage_error("--store names one store of this machine; hooks for " +
                             std::string(scope == "user" ? "every project (--scope user)"
                                                         : "every clone (--scope shared)") +
                             " use each project's own store (leave --store out, or use "
                             "--scope project)");
  }
  if (scope == "shared") {
    // Its settings.json would be the user's own settings.
    context.refuse_unprotectable_workspace();
    return context.workspace / ".claude" / "settings.json";
  }
  std::string home = environment("HOME");
  if (home.empty()) throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument, "HOME is not set");
  return hooks::claude_code_settings_file(home);
}

// The command a scope's hooks run. The hook finds the workspace from
// $CLAUDE_PROJECT_DIR (or the event's cwd). A project's hooks record into this
// workspace's store, named now; shared ones and hooks for every project find each
// project's store from its workspace.
std::string hooks_command(const Context& context, const std::string& scope) {
  if (scope == "shared") {
    check_shared_program(context);
    return hooks::kSharedHookCommand;
  }
  if (scope != "project") return shell_quote(self_path()) + " hook claude-code";
  // The thin client beside this program, when there is one: it hands each event to the
  // store's watch daemon (or runs this program when none can take it).
  std::string program = self_path();
  fs::path thin = fs::path(program).parent_path() / "shadowbox-hook";
  if (::access(thin.c_str(), X_OK) == 0) program = thin.string();
  context.open_store(true);
  return shell_quote(program) + " --store " + shell_quote(context.store_dir.string()) +
         " hook claude-code";
}

// What a project's install tells: a settings file git would commit, and hooks an
// earlier version left in the shared file.
void project_install_notes(const Context& context, const fs::path& file) {
  if (fsnap::git_leaves_out(file) == false) {
    std::cerr << "shadowbox: note: git does not ignore " << file.string()
              << ", which names this machine's paths: add .claude/settings.local.json to "
                 "the project's .gitignore (or your global git ignore file), so that it "
                 "is not committed\n";
  }
  if (std::optional<fs::path> shared = machine_hooks_in_shared_file(context.workspace)) {
    std::cerr << "shadowbox: warning: " << shared->string()
              << " holds shadowbox's hooks with a machine's paths (an earlier version "
                 "wrote them there): with these they would record every event twice; "
                 "take them out with: shadowbox hooks uninstall --scope shared\n";
  }
}

// What install or uninstall did, for a person or (--json) for a program.
void print_hooks_outcome(const Context& context, const std::string& action,
                         const std::string& scope, const std::string& outcome, const fs::path& file,
                         bool file_removed) {
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("action", action);
    out->set("scope", scope);
    out->set("outcome", outcome);
    set_path(*out, "settings", file.string());
    out->set("file_removed", file_removed);
    out->set("store", scope == "project" && action == "install"
                          ? Poco::Dynamic::Var(context.store_dir.string())
                          : Poco::Dynamic::Var());
    print_json(std::cout, out);
  } else if (outcome == "installed") {
    std::cout << "installed shadowbox's hooks in " << file.string() << '\n';
  } else if (file_removed) {
    std::cout << "removed shadowbox's hooks, and " << file.string()
              << " with them (shadowbox had made it, and nothing else was in it)\n";
  } else if (outcome == "removed") {
    std::cout << "removed shadowbox's hooks from " << file.string() << '\n';
  } else {
    std::cout << "no settings file at " << file.string() << "; nothing to remove\n";
  }
}

}  // namespace

int cmd_hooks(const Context& context, const Args& parsed) {
  const std::string& action = parsed.operands()[0];
  if (action != "install" && action != "uninstall") {
    throw parsed.usage_error("expected install or uninstall, not " + fsnap::quote_input(action));
  }
  std::string scope = parsed.value_or("--scope", "project");
  fs::path file = hooks_settings_file(context, parsed, scope);
  std::optional<fs::path> created_list = hooks::created_settings_list();
  std::string outcome;
  bool file_removed = false;
  if (action == "install") {
    hooks::install_settings_hooks(file, hooks_command(context, scope), created_list);
    outcome = "installed";
    if (scope == "project") project_install_notes(context, file);
  } else {
    hooks::SettingsRemoval removal = hooks::uninstall_settings_hooks(file, created_list);
    outcome = removal == hooks::SettingsRemoval::kNoFile ? "absent" : "removed";
    file_removed = removal == hooks::SettingsRemoval::kFileRemoved;
  }
  print_hooks_outcome(context, action, scope, outcome, file, file_removed);
  if (action == "uninstall" && scope == "project") {
    if (std::optional<fs::path> shared = machine_hooks_in_shared_file(context.workspace)) {
      std::cerr << "shadowbox: note: " << shared->string()
                << " still holds shadowbox's hooks (an earlier version wrote them there): "
                   "shadowbox hooks uninstall --scope shared takes them out\n";
    }
  }
  return 0;
}

}  // namespace cli
