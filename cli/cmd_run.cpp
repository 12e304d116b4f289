// `shadowbox run`, `shadowbox runs` and `shadowbox resume`: an agent under shadowbox,
// with an ephemeral HOME whose session data is preserved so a crashed run resumes.
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/error.hpp"
#include "fsnap/shadow_repo.hpp"
#include "hooks/agent_home.hpp"
#include "hooks/agent_process.hpp"
#include "hooks/agent_runs.hpp"
#include "hooks/claude_code_hook.hpp"
#include "hooks/hook_server.hpp"
#include "output.hpp"
#include "sandbox/tool_boundaries.hpp"
#include "shell.hpp"

namespace cli {

namespace fs = boost::filesystem;

namespace {

std::string now_text() {
  return fsnap::format_timestamp(std::chrono::system_clock::now());
}

void check_run_id(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 100 && id.front() != '.' && id.front() != '-' &&
            id.find("..") == std::string::npos;
  for (char c : id) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  }
  if (!ok) {
    throw UsageError("run id '" + id + "' must be letters, digits, '-', '_' and '.' (not first)");
  }
}

// The hook command the agent's settings run: this binary, bound to this workspace,
// store, config and run.
std::string hook_command(const Context& context, const std::string& run) {
  std::string command = shell_quote(self_path()) + " --workspace " +
                        shell_quote(context.workspace.string()) + " --store " +
                        shell_quote(context.store_dir.string());
  if (!context.config.source.empty()) {
    command += " --config " + shell_quote(fs::absolute(context.config.source).string());
  }
  return command + " hook claude-code --run " + shell_quote(run);
}

// The environment variables that must let a loopback hook request bypass a proxy.
std::vector<std::string> loopback_without_proxy() {
  std::vector<std::string> out;
  bool proxied = false;
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) {
    const char* value = std::getenv(name);
    proxied = proxied || (value != nullptr && *value != '\0');
  }
  if (!proxied) return out;
  for (const char* name : {"NO_PROXY", "no_proxy"}) {
    const char* value = std::getenv(name);
    std::string list = value != nullptr ? value : "";
    out.push_back(std::string(name) + "=" + list + (list.empty() ? "" : ",") + "127.0.0.1");
  }
  return out;
}

// The workspace and ledger `run` records into while it supervises the agent.
struct RunWorkspace {
  RunWorkspace(const Context& context, const fsnap::Store& store)
      : files(store, context.config.capture), ledger(store) {}
  fsnap::HostFilesystem files;
  sandbox::Ledger ledger;
};

// Answers hook events inside this process (hooks.transport: http): the workspace stays
// open and watched between events, and each event costs one loopback request.
class InProcessHooks {
 public:
  InProcessHooks(const Context& context, const fsnap::Store& store, const std::string& run,
                 const fs::path& home, RunWorkspace& workspace)
      : store_(store),
        run_(run),
        options_(context.hook_options(run)),
        home_preserver_(store, run, home, options_.secrets),
        workspace_(workspace),
        server_([this](const std::string& event) { return answer(event); },
                [this](const hooks::HttpHookReply&) { preserve(); }) {
    try {
      workspace_.files.watch();
    } catch (const fsnap::Error& e) {
      std::cerr << "shadowbox: warning: " << e.what()
                << "; every tool boundary will look at the whole workspace\n";
    }
  }

  const std::string& url() const { return server_.url(); }
  // Answers no more events (the agent is gone); waits for one being answered.
  void stop() { server_.stop(); }

 private:
  hooks::HttpHookReply answer(const std::string& event) {
    if (std::optional<std::string> problem = hooks::event_problem(event)) {
      std::string message = "shadowbox: ignoring a malformed hook event: " + *problem;
      hooks::append_run_log(store_, run_, message);
      return hooks::HttpHookReply{400, "text/plain; charset=utf-8", message};
    }
    return hooks::to_http_reply(
        hooks::handle_claude_code_event(event, workspace_.files, workspace_.ledger, options_));
  }

  // The agent's session data, preserved at every boundary (after the reply: the agent
  // need not wait for it, and the next event waits until it is done).
  void preserve() {
    try {
      home_preserver_.preserve();
    } catch (const std::exception& e) {
      hooks::append_run_log(
          store_, run_,
          std::string("warning: could not preserve the agent's session data: ") + e.what());
    }
  }

  const fsnap::Store& store_;
  std::string run_;
  hooks::ClaudeCodeHookOptions options_;
  hooks::HomePreserver home_preserver_;
  RunWorkspace& workspace_;
  hooks::HookServer server_;  // last: stops before what it uses goes
};

// Runs the agent with home as HOME, supervising it; records the outcome. A non-empty
// baseline is recorded first as the run's opening checkpoint.
int supervise(const Context& context, const fsnap::Store& store, const std::string& run,
              const fs::path& home, hooks::RunMeta meta, const std::vector<std::string>& argv,
              const std::string& baseline) {
  fs::path dir = hooks::run_dir(store, run);
  RunWorkspace workspace(context, store);
  std::unique_ptr<InProcessHooks> in_process;
  if (context.config.hooks.transport == "http") {
    in_process = std::make_unique<InProcessHooks>(context, store, run, home, workspace);
    hooks::write_home_http_settings(home, in_process->url(), hook_command(context, run));
  } else {
    hooks::write_home_settings(home, hook_command(context, run));
  }
  if (!baseline.empty()) {
    // When watched, this first capture walks the tree; the ones at tool boundaries don't.
    sandbox::ToolBoundaries(workspace.files, workspace.ledger, run)
        .checkpoint({"", fsnap::Phase::kCheckpoint, "", "", run}, nullptr, baseline);
  }
  std::vector<std::string> extra = {"HOME=" + home.string(), "SHADOWBOX_RUN=" + run,
                                    "SHADOWBOX_RUN_HOME=" + home.string(),
                                    "SHADOWBOX_NO_PROGRESS=1"};
  if (in_process) {
    for (std::string& v : loopback_without_proxy()) extra.push_back(std::move(v));
  }
  std::vector<std::string> env = hooks::agent_environment(context.config.run.env, extra);
  meta.pid = ::getpid();
  meta.home = home.string();
  meta.exit_code.reset();
  meta.ended_at.clear();
  meta.save(dir);
  int code = hooks::run_agent_process(argv, context.workspace, env, [&](pid_t pid) {
    meta.agent_pid = pid;
    try {
      meta.save(dir);
    } catch (const std::exception& e) {
      std::cerr << "shadowbox: warning: " << e.what() << '\n';
    }
  });
  // Whatever happened: keep the agent's session data, and the files as they are now.
  std::vector<std::string> secrets = hooks::secret_values(context.config.run.secrets);
  hooks::preserve_home(store, run, home, secrets);
  if (in_process) in_process->stop();
  sandbox::ToolBoundaries(workspace.files, workspace.ledger, run).record_outside_changes();
  meta.exit_code = code;
  meta.ended_at = now_text();
  meta.save(dir);
  return code;
}

}  // namespace

int cmd_run(const Context& context, const Args& args) {
  CommandArgs parsed("run", args, {"--run-id"}, {});
  if (parsed.operands().empty())
    throw UsageError("usage: shadowbox run [--run-id ID] -- CMD [ARGS...]");
  std::string run = parsed.value_or("--run-id", hooks::new_run_id());
  check_run_id(run);
  fsnap::Store store = context.open_store(true);
  fs::path dir = hooks::run_dir(store, run);
  bool exists = fs::exists(dir);
  try {
    exists = exists || !fsnap::ShadowRepo::open(store.repo_dir(), false).log(run, 1).empty();
  } catch (const fsnap::Error& e) {
    if (e.code() != fsnap::ErrorCode::kNotFound) throw;
  }
  if (exists) {
    throw std::runtime_error("run '" + run + "' exists already (resume it with: shadowbox resume " +
                             run + ")");
  }
  fs::create_directories(dir / "home");
  std::string command;
  for (const std::string& a : parsed.operands()) command += (command.empty() ? "" : " ") + a;
  std::cerr << "shadowbox: run " << run << " (store " << store.dir().string() << ")\n";
  hooks::RunMeta meta;
  meta.run = run;
  meta.workspace = context.workspace.string();
  meta.command = parsed.operands();
  meta.started_at = now_text();
  // The run's baseline: the workspace as the agent found it.
  return supervise(context, store, run, dir / "home", meta, parsed.operands(),
                   "run started: " + command.substr(0, 200));
}

int cmd_runs(const Context& context, const Args& args) {
  CommandArgs parsed("runs", args, {}, {});
  parsed.expect_operands(0, 0, "runs");
  fsnap::Store store = context.open_store(false);
  std::vector<hooks::RunInfo> runs = hooks::list_runs(store);
  if (context.options.json) {
    Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
    for (const hooks::RunInfo& r : runs) {
      Poco::JSON::Object::Ptr o = make_object();
      o->set("run", r.run);
      o->set("status", r.status);
      o->set("session_id",
             r.session_id.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(r.session_id));
      o->set("resumable", r.resumable);
      o->set("checkpoints", r.checkpoints);
      o->set("last_activity", r.last_activity);
      o->set("exit_code", r.exit_code ? Poco::Dynamic::Var(*r.exit_code) : Poco::Dynamic::Var());
      out->add(o);
    }
    print_json(std::cout, out);
    return 0;
  }
  std::printf("%-32s %-9s %-38s %-9s %11s  %s\n", "RUN", "STATUS", "AGENT SESSION", "RESUMABLE",
              "CHECKPOINTS", "LAST ACTIVITY");
  for (const hooks::RunInfo& r : runs) {
    std::printf("%-32s %-9s %-38s %-9s %11zu  %s\n", r.run.c_str(), r.status.c_str(),
                r.session_id.empty() ? "-" : r.session_id.c_str(), r.resumable ? "yes" : "no",
                r.checkpoints, r.last_activity.c_str());
  }
  return 0;
}

int cmd_resume(const Context& context, const Args& args) {
  CommandArgs parsed("resume", args, {"--validation"}, {"--continue"});
  if (parsed.operands().empty()) {
    throw UsageError(
        "usage: shadowbox resume RUN [--continue] [--validation strict|relaxed|none] [-- ARGS...]");
  }
  std::string run = parsed.operands()[0];
  std::vector<std::string> extra(parsed.operands().begin() + 1, parsed.operands().end());
  std::string mode = parsed.value_or("--validation", "strict");
  hooks::ResumeValidation validation = mode == "strict"    ? hooks::ResumeValidation::kStrict
                                       : mode == "relaxed" ? hooks::ResumeValidation::kRelaxed
                                       : mode == "none"
                                           ? hooks::ResumeValidation::kNone
                                           : throw UsageError(
                                                 "resume: --validation must be strict, "
                                                 "relaxed or none, not '" +
                                                 mode + "'");
  check_run_id(run);
  fsnap::Store store = context.open_store(false);
  std::optional<hooks::ResumableState> state = hooks::find_resumable_state(store, run);
  if (!state) {
    throw std::runtime_error("cannot resume run '" + run + "': it recorded no agent session");
  }
  std::vector<std::string> problems = hooks::resume_problems(
      *state, validation, context.workspace.string(), context.config.run.resume_max_age);
  if (!problems.empty()) {
    std::string text;
    for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
    throw std::runtime_error("cannot resume run '" + run + "' (validation " + mode + "): " + text);
  }
  fs::path dir = hooks::run_dir(store, run);
  fs::path home =
      dir / ("home-resumed-" + std::to_string(::time(nullptr)) + "-" + std::to_string(::getpid()));
  try {
    hooks::rebuild_home(store, run, home);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot resume run '" + run + "': " + e.what());
  }
  if (!hooks::has_transcript(home, state->session.session_id)) {
    throw std::runtime_error("cannot resume run '" + run + "': the transcript of agent session " +
                             state->session.session_id + " is not in its preserved data");
  }
  std::optional<hooks::RunMeta> previous = hooks::RunMeta::load(dir);
  hooks::RunMeta meta = previous.value_or(hooks::RunMeta{});
  meta.run = run;
  meta.workspace = context.workspace.string();
  if (meta.command.empty()) meta.command = {"claude"};
  meta.started_at = now_text();
  std::vector<std::string> argv = {meta.command.front(), "--resume", state->session.session_id};
  if (!parsed.has("--continue")) argv.push_back("--fork-session");
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::cerr << "shadowbox: resuming run " << run << " from agent session "
            << state->session.session_id << (parsed.has("--continue") ? "" : " (forked)") << '\n';
  int code = supervise(context, store, run, home, meta, argv, "");
  if (code != 0) {
    std::cerr << "shadowbox: error: the agent exited with status " << code
              << " while resuming session " << state->session.session_id << '\n';
  }
  return code;
}

}  // namespace cli
