// One Claude Code hook event, recorded: what `shadowbox hook claude-code` does with the
// event on its stdin, and what the watch daemon does with one the thin hook client
// (`shadowbox-hook`) hands it.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "arguments.hpp"
#include "fsnap/capture_service.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hook_message.hpp"
#include "warm_hook_state.hpp"

namespace cli {

// The environment of the hook process: this one's, or the one a thin client sent. Its
// variables name the run and the workspace, and its run.secrets are the ones redacted.
struct HookEnvironment {
  std::map<std::string, std::string> vars;
  // The value of name, or "" when it is not set.
  std::string get(const char* name) const;
  static HookEnvironment of_process();
};

// Records event (the hook command's own arguments in parsed) and says what the hook
// process answers Claude Code. captures, if given, is asked for every capture (the
// watch daemon's own). warm, if given, is what the daemon keeps from one event to the
// next (warm_hook_state.hpp): the store's repository, each run's HOME preserver and spend
// meter. Never throws for the event: a failure to record it is an answer.
HookReply answer_hook_event(const GlobalOptions& global, const CommandArgs& parsed,
                            const std::string& event, const HookEnvironment& env,
                            const std::shared_ptr<fsnap::CaptureService>& captures,
                            WarmHookState* warm = nullptr);

// The same for an event a thin client relayed to the watch daemon of store, whose
// captures it uses. A command line that is not a plain `hook claude-code` for this
// store, or an environment naming another configuration, is answered with fall_back
// (nothing recorded; the client runs the full command). warm: as answer_hook_event's.
HookReply answer_relayed_hook_event(const HookMessage& message, const fsnap::Store& store,
                                    const std::shared_ptr<fsnap::CaptureService>& captures,
                                    WarmHookState* warm);

}  // namespace cli
