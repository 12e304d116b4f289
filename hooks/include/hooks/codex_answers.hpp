// The answers a person gives Codex CLI's own questions — "Trust this folder?", a new
// model's announcement — which Codex saves in its config.toml. In a run that file is the
// ephemeral HOME's copy of the user's, removed when the run ends, so every run would ask
// again: the tables holding them are kept in the store (fsnap::layout::agent_answers_file)
// and added to the next runs' copies. Only those tables are kept — the trust of this
// workspace (`[projects."<workspace>"]`), `[notice…]` and `[tui…]` — and only where the
// user's own file has none of its own: the user's configuration wins.
//
//   std::string kept = codex_answers(run_config_after, user_config, workspace);
//   std::string next_run_config = with_codex_answers(user_config, kept, workspace);
#pragma once

#include <string>

namespace hooks {

// The answer tables of config (a run's config.toml as Codex left it) that user_config
// (the user's own, which the run started from) does not hold, as TOML text ("" if none).
std::string codex_answers(const std::string& config, const std::string& user_config,
                          const std::string& workspace);

// config with the tables of answers (codex_answers' text) it does not hold appended.
std::string with_codex_answers(const std::string& config, const std::string& answers,
                               const std::string& workspace);

}  // namespace hooks
