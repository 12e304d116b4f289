// The answer a person gives Gemini CLI's "Do you trust the files in this folder?", which
// Gemini saves in its trustedFolders.json. In a run that file is the ephemeral HOME's
// copy of the user's, removed when the run ends, so every run would ask again: the
// entries for this workspace and the folders above it are kept in the store
// (fsnap::layout::agent_answers_file) and added to the next runs' copies wherever the
// user's own file has no entry of that folder: the user's file wins.
//
//   std::string kept = gemini_answers(run_trusted_after, user_trusted, workspace);
//   std::string next_run_trusted = with_gemini_answers(user_trusted, kept, workspace);
#pragma once

#include <string>

namespace hooks {

// The entries of trusted (a run's trustedFolders.json as Gemini left it) for workspace
// or a folder above it, with a trust level Gemini writes, that user_trusted (the user's
// own file) lacks: as a JSON object, or "" if none (or trusted is not a JSON object).
std::string gemini_answers(const std::string& trusted, const std::string& user_trusted,
                           const std::string& workspace);

// trusted ("" for none) with the entries of answers it lacks added, as JSON; trusted as
// it is when it is not a JSON object (the user's file, which Gemini will complain of).
std::string with_gemini_answers(const std::string& trusted, const std::string& answers,
                                const std::string& workspace);

}  // namespace hooks
