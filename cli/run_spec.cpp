#include "run_spec.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <boost/filesystem/operations.hpp>

#include "background_maintenance.hpp"
#include "fsnap/atomic_file.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/claude_code_project_hooks.hpp"
#include "hooks/run_list.hpp"
#include "run_summary.hpp"
#include "shell.hpp"

namespace cli {

namespace fs = boost::filesystem;

namespace {

// The hook command the agent's settings run: this binary, bound to this workspace,
// store, config, agent and run. An agent whose every event is a hook process (Codex,
// Gemini) runs the thin client beside it when there is one: it hands each event to the
// store's watch daemon, and runs this binary when none can take it.
std::string hook_command(const Context& context, const fs::path& config, const std::string& run,
                         hooks::AgentKind agent) {
  std::string program = shell_quote(self_path());
  if (!hooks::adapter_for(agent).http_hooks()) {
    fs::path thin = fs::path(self_path()).parent_path() / "shadowbox-hook";
    if (::access(thin.c_str(), X_OK) == 0) program = shell_quote(thin.string());
  }
  return program + " --workspace " + shell_quote(context.workspace.string()) + " --store " +
         shell_quote(context.store_dir.string()) + " --config " + shell_quote(config.string()) +
         " hook " + std::string(hooks::agent_kind_name(agent)) + " --run " + shell_quote(run);
}

// The run's configuration as this start of its agent has it, written where its hooks
// read it: an agent that changes the workspace's .shadowbox.yaml changes the next run.
fs::path pin_config(const Context& context, const fsnap::Store& store, const std::string& run) {
  fs::path file = fsnap::layout::run_config_file(store.dir(), run);
  boost::system::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  std::string origin;
  switch (context.config.origin) {
    case hooks::Config::Origin::kDefaults:
      origin = "the defaults";
      break;
    case hooks::Config::Origin::kFile:
      origin = context.config.source.string();
      break;
    case hooks::Config::Origin::kTrustedWorkspace:
      origin = context.config.source.string() + " (trusted)";
      break;
    case hooks::Config::Origin::kUntrustedWorkspace:
      origin = context.config.source.string() + " (not trusted: what it tightens)";
      break;
  }
  // (quote_input: a workspace path may hold a newline, which would end the comment.)
  fsnap::write_file_atomically(file,
                               "# The configuration run " + run + " started its agent with, from " +
                                   fsnap::quote_input(origin, 300) +
                                   ". Written by shadowbox; read by the run's hooks.\n" +
                                   context.config.to_yaml(),
                               0600);
  return file;
}

}  // namespace

void refuse_hooks_switched_off(const Context& context, hooks::AgentKind agent) {
  if (agent != hooks::AgentKind::kClaudeCode) return;
  if (std::optional<fs::path> file = hooks::project_settings_disabling_hooks(context.workspace)) {
    throw fsnap::Error(fsnap::ErrorCode::kConflict,
                       file->string() +
                           " sets disableAllHooks: Claude Code would run no hook, shadowbox's "
                           "included, and no call of the run could be recorded or rolled back; "
                           "remove it to run under shadowbox");
  }
}

hooks::AgentRunSpec spec_for(const Context& context, const fsnap::Store& store,
                             std::shared_ptr<fsnap::ShadowRepo> repo, const std::string& run,
                             hooks::AgentKind agent) {
  hooks::AgentRunSpec spec{store, std::move(repo)};
  spec.config = context.config;
  spec.run = run;
  spec.workspace = context.workspace;
  spec.user = hooks::UserAgentSetup::from_environment();
  spec.hook_command = hook_command(context, pin_config(context, store, run), run, agent);
  spec.warn = [](const std::string& text) { std::cerr << "shadowbox: warning: " << text << '\n'; };
  spec.inform = [](const std::string& text) { std::cerr << "shadowbox: " << text << '\n'; };
  // The store's upkeep in processes of their own: `run` ends with its agent.
  spec.maintain_detached = [&context](bool run_ended) {
    return maintain_in_background(context, run_ended);
  };
  return spec;
}

// The limits given as options (each overrides its policy.* key).
runs::PolicyLimits limit_options(const CommandArgs& parsed) {
  runs::PolicyLimits limits;
  auto checked = [&](const char* option, auto parse) {
    try {
      return parse(*parsed.value(option));
    } catch (const fsnap::Error& e) {
      throw parsed.usage_error(std::string(option) + ": " + e.what());
    }
  };
  if (parsed.has("--max-cost-usd")) {
    limits.max_cost_usd = checked("--max-cost-usd", hooks::parse_usd);
  }
  for (const char* option : {"--max-steps", "--max-retries"}) {
    if (!parsed.has(option)) continue;
    std::optional<std::size_t> n = parsed.count(option);
    if (!n || *n == 0) throw parsed.usage_error(std::string(option) + " must be at least 1");
    (std::string(option) == "--max-steps" ? limits.max_steps : limits.max_retries_total) = n;
  }
  if (parsed.has("--timeout")) {
    limits.timeout = checked("--timeout", hooks::parse_duration);
    if (limits.timeout->count() == 0) throw parsed.usage_error("--timeout must be longer than 0 s");
  }
  return limits;
}

int report(const Context& context, const fsnap::Store& store,
           const std::shared_ptr<fsnap::ShadowRepo>& repo, const std::string& run,
           const hooks::AgentRunResult& result) {
  try {
    hooks::RunInfo info = hooks::describe_run(store, repo, run, context.config.run.resume_max_age,
                                              std::chrono::system_clock::now());
    print_run_summary(std::cerr, info, result);
  } catch (const std::exception& e) {
    // The run is over and recorded; only its summary could not be read back.
    std::cerr << "shadowbox: run " << run << " ended (status " << result.code()
              << "); its summary could not be read: " << e.what() << '\n';
  }
  return result.code();
}

hooks::ResumeRequest resume_request(const Context& context, const CommandArgs& parsed,
                                    const std::string& run, hooks::ResumeValidation at_most) {
  hooks::ResumeRequest request;
  request.run = run;
  request.checks = resume_checks(context);
  // kStrict < kRelaxed < kNone: the greater, the looser.
  if (static_cast<int>(request.checks.validation) < static_cast<int>(at_most)) {
    request.checks.validation = at_most;
  }
  if (std::optional<std::string> mode = parsed.value("--validation")) {
    std::optional<hooks::ResumeValidation> validation = hooks::parse_resume_validation(*mode);
    if (!validation) {
      throw parsed.usage_error("--validation must be strict, relaxed or none, not " +
                               fsnap::quote_input(*mode));
    }
    request.checks.validation = *validation;
  }
  request.checks.reopen = parsed.has("--reopen");
  request.session_id = parsed.value_or("--session", "");
  request.fork = !parsed.has("--continue");
  request.extra_args.assign(parsed.operands().begin() + 1, parsed.operands().end());
  request.only_extra_args = parsed.has("--only-args");
  return request;
}

hooks::ResumeChecks resume_checks(const Context& context) {
  hooks::ResumeChecks checks;
  checks.validation = context.config.run.resume_validation;
  checks.workspace = context.workspace.string();
  checks.max_age = context.config.run.resume_max_age;
  checks.now = std::chrono::system_clock::now();
  return checks;
}

hooks::AgentRunSpec resume_spec(const Context& context, const fsnap::Store& store,
                                std::shared_ptr<fsnap::ShadowRepo> repo, const std::string& run,
                                const hooks::ResumePlan& plan, const runs::PolicyLimits& limits,
                                const std::string& start_summary) {
  hooks::AgentRunSpec spec = spec_for(context, store, std::move(repo), run, plan.agent);
  spec.home = plan.home;
  spec.argv = plan.argv;
  spec.env = plan.env;
  spec.resumed_session = plan.session.session_id;
  spec.start_summary = start_summary;
  spec.meta = plan.meta;
  spec.meta.resumes.push_back({now_text(), plan.argv});
  spec.meta.limits = plan.meta.limits.overridden_by(limits);
  return spec;
}

std::string now_text() {
  return fsnap::format_timestamp(std::chrono::system_clock::now());
}

}  // namespace cli
