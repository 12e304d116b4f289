// What `run`, `resume` and `recover` share: the AgentRunSpec of a run started from the
// command line, the limits given as options, and how a run's end is reported.
#pragma once

#include <memory>
#include <string>

#include "arguments.hpp"
#include "context.hpp"
#include "hooks/agent_kind.hpp"
#include "hooks/agent_run.hpp"
#include "hooks/resume.hpp"
#include "runs/run_settings.hpp"

namespace cli {

// The spec of an agent run of this workspace and store: the config, the user's agent
// setup, the hook command bound to run and agent, warnings and news to stderr.
hooks::AgentRunSpec spec_for(const Context& context, const fsnap::Store& store,
                             std::shared_ptr<fsnap::ShadowRepo> repo, const std::string& run,
                             hooks::AgentKind agent);

// A run of Claude Code in a project whose settings switch every hook off would record
// nothing: refused (kConflict) before anything is written (the project's files are
// anyone's to write; a cloned repository ships them).
void refuse_hooks_switched_off(const Context& context, hooks::AgentKind agent);

// The limits given as options (each overrides its policy.* key). UsageError for bad ones.
runs::PolicyLimits limit_options(const CommandArgs& parsed);

// The resume of run that `resume` and `recover` ask for: the agent session (--session),
// --continue, --reopen, --only-args and ARGS (the operands after RUN), in this
// workspace, with validation --validation, else run.resume_validation, no stricter than
// at_most. UsageError for a bad one.
hooks::ResumeRequest resume_request(
    const Context& context, const CommandArgs& parsed, const std::string& run,
    hooks::ResumeValidation at_most = hooks::ResumeValidation::kStrict);

// What a resume here and now is checked against, as the configuration says
// (run.resume_validation, run.resume_max_age).
hooks::ResumeChecks resume_checks(const Context& context);

// The spec of an agent run that resumes plan (prepare_resume's): the run's own limits
// go on, but for those given again (limits).
hooks::AgentRunSpec resume_spec(const Context& context, const fsnap::Store& store,
                                std::shared_ptr<fsnap::ShadowRepo> repo, const std::string& run,
                                const hooks::ResumePlan& plan, const runs::PolicyLimits& limits,
                                const std::string& start_summary);

// Says on stderr how the run ended (print_run_summary); its exit status: 3 when a limit
// or an abort stopped it, else the agent's.
int report(const Context& context, const fsnap::Store& store,
           const std::shared_ptr<fsnap::ShadowRepo>& repo, const std::string& run,
           const hooks::AgentRunResult& result);

// Now, as run.json writes times.
std::string now_text();

}  // namespace cli
