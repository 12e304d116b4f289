// Rewinding an agent run (`shadowbox rewind RUN --to REF`): a new run forked from a
// pre-tool checkpoint of RUN, whose agent resumes the conversation cut just before that
// call, in a fresh HOME rebuilt from the data preserved at that boundary. RUN itself is
// left as it was. The CLI restores the workspace and the session's slices to REF in the
// fork (a restore, after a safety checkpoint) and starts its agent (run_agent).
//
// Thread-safety: functions of the store; they borrow the process's ShadowRepo.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/checkpoint.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_kind.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/ledger_record.hpp"

namespace hooks {

// What a rewind is asked.
struct RewindRequest {
  std::string run;        // the run rewound
  std::string ref;        // where to: a pre-tool checkpoint of run (pre:CALL, an id...)
  std::string new_run;    // the fork's id (a run that does not exist yet)
  std::string workspace;  // where the fork's agent works
  // As for resume: arguments added to the run's own (Claude Code: a prompt replaces the
  // old one), or an application's command.
  std::vector<std::string> extra_args;
  bool only_extra_args = false;
};

// What a rewind starts.
struct RewindPlan {
  fsnap::Checkpoint target;      // REF
  sandbox::LedgerRecord record;  // its ledger record
  std::string session_id;        // the agent session whose conversation is cut
  std::string home_commit;       // the preserved HOME the cut was made in
  boost::filesystem::path home;  // the fork's HOME, its conversation cut
  AgentKind agent = AgentKind::kClaudeCode;
  std::vector<std::string> argv;  // the agent resuming the cut session, forked
  std::vector<std::string> env;   // kResumeSessionVariable=<id>, kResumeForkVariable=1
  runs::RunMeta meta;             // the fork's run.json as it starts (forked_from set)
};

// Checks the request and prepares the fork: its HOME built and cut. Error
// kInvalidArgument for a REF that is not a pre-tool checkpoint of run, kNotFound when
// the run has no agent session at REF or no preserved data holding the call, kConflict
// when new_run exists. Nothing of the fork is left behind when it throws.
RewindPlan prepare_rewind(const fsnap::Store& store, const std::shared_ptr<fsnap::ShadowRepo>& repo,
                          const RewindRequest& request);

}  // namespace hooks
