// The file of the store where the answers a person gave an agent's own questions in a run
// are kept for the next runs (fsnap::layout::agent_answers_file): read as a stranger's
// (a regular file of bounded size, else nothing), written private.
#pragma once

#include <string>

#include <boost/filesystem/path.hpp>

namespace hooks {

// The kept answers, or "" (none, or not a file shadowbox would have written).
std::string read_kept_answers(const boost::filesystem::path& file);

// Replaces the kept answers with text (mode 0600, its folder 0700). Throws fsnap::Error
// when it cannot, or when text is over the bound read_kept_answers reads.
void write_kept_answers(const boost::filesystem::path& file, const std::string& text);

}  // namespace hooks
