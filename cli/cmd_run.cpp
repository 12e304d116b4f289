// `shadowbox run`, `shadowbox runs` and `shadowbox resume`: arguments and output. The
// supervision of the agent is hooks::run_agent; resume's checks are hooks::prepare_resume.
#include <cstdio>
#include <iostream>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/agent_run.hpp"
#include "hooks/resume.hpp"
#include "hooks/run_list.hpp"
#include "output.hpp"
#include "sandbox/run_meta.hpp"
#include "shell.hpp"

namespace cli {

namespace fs = boost::filesystem;

namespace {

std::string now_text() {
  return fsnap::format_timestamp(std::chrono::system_clock::now());
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

hooks::AgentRunSpec spec_for(const Context& context, const fsnap::Store& store,
                             std::shared_ptr<fsnap::ShadowRepo> repo, const std::string& run) {
  hooks::AgentRunSpec spec{store, std::move(repo)};
  spec.config = context.config;
  spec.run = run;
  spec.workspace = context.workspace;
  spec.hook_command = hook_command(context, run);
  spec.warn = [](const std::string& text) { std::cerr << "shadowbox: warning: " << text << '\n'; };
  return spec;
}

}  // namespace

int cmd_run(const Context& context, const Args& args) {
  CommandArgs parsed("run", args, {"--run-id"}, {});
  if (parsed.operands().empty()) throw UsageError("usage: shadowbox " + synopsis_of("run"));
  std::string run = parsed.value_or("--run-id", sandbox::new_run_id());
  try {
    sandbox::check_run_id(run);
  } catch (const fsnap::Error& e) {
    throw UsageError(e.what());
  }
  fsnap::Store store = context.open_store(true);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  fs::path home = fsnap::layout::run_home_dir(store.dir(), run);
  if (fs::exists(fsnap::layout::run_dir(store.dir(), run)) || repo->has_run(run)) {
    throw fsnap::Error(fsnap::ErrorCode::kConflict,
                       "run " + fsnap::quote_input(run) +
                           " exists already (resume it with: shadowbox resume " + run + ")");
  }
  fs::create_directories(home);
  std::string command;
  for (const std::string& a : parsed.operands()) command += (command.empty() ? "" : " ") + a;
  std::cerr << "shadowbox: run " << run << " (store " << store.dir().string() << ")\n";
  hooks::AgentRunSpec spec = spec_for(context, store, repo, run);
  spec.home = home;
  spec.argv = parsed.operands();
  spec.start_summary = "run started: " + command.substr(0, 200);
  spec.meta.run = run;
  spec.meta.workspace = context.workspace.string();
  spec.meta.command = parsed.operands();
  spec.meta.started_at = now_text();
  return hooks::run_agent(std::move(spec)).code();
}

int cmd_runs(const Context& context, const Args& args) {
  CommandArgs parsed("runs", args, {}, {});
  parsed.expect_operands(0, 0);
  fsnap::Store store = context.open_store(false);
  std::vector<hooks::RunInfo> runs = hooks::list_runs(store, context.open_repo(store));
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
  if (parsed.operands().empty()) throw UsageError("usage: shadowbox " + synopsis_of("resume"));
  std::string run = parsed.operands()[0];
  std::vector<std::string> extra(parsed.operands().begin() + 1, parsed.operands().end());
  std::string mode = parsed.value_or("--validation", "strict");
  std::optional<hooks::ResumeValidation> validation = hooks::parse_resume_validation(mode);
  if (!validation) {
    throw parsed.usage_error("--validation must be strict, relaxed or none, not " +
                             fsnap::quote_input(mode));
  }
  try {
    sandbox::check_run_id(run);
  } catch (const fsnap::Error& e) {
    throw UsageError(e.what());
  }
  fsnap::Store store = context.open_store(false);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  bool fork = !parsed.has("--continue");
  hooks::ResumeRequest request{
      run,  *validation, context.workspace.string(),      context.config.run.resume_max_age,
      fork, extra,       std::chrono::system_clock::now()};
  hooks::ResumePlan plan = hooks::prepare_resume(store, repo, request);
  std::cerr << "shadowbox: resuming run " << run << " from agent session "
            << plan.session.session_id << (fork ? " (forked)" : "") << '\n';
  hooks::AgentRunSpec spec = spec_for(context, store, repo, run);
  spec.home = plan.home;
  spec.argv = plan.argv;
  spec.start_summary = "run resumed from agent session " + plan.session.session_id;
  spec.meta = plan.meta;
  spec.meta.started_at = now_text();
  int code = hooks::run_agent(std::move(spec)).code();
  if (code != 0) {
    std::cerr << "shadowbox: error: the agent exited with status " << code
              << " while resuming session " << plan.session.session_id << '\n';
  }
  return code;
}

}  // namespace cli
