#include "completion_words.hpp"

#include <set>

#include <boost/filesystem/operations.hpp>

#include "context.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store_layout.hpp"

namespace cli {

namespace fs = boost::filesystem;

namespace {

// Whether a shell's completion takes word as it is: no expansion, quoting or option.
bool shell_safe(const std::string& word) {
  if (word.empty() || word.front() == '-') return false;
  for (char c : word) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!plain && std::string("._:+@%,/-").find(c) == std::string::npos) return false;
  }
  return true;
}

// Every run of the store: those with checkpoints and those with a folder only (started,
// nothing recorded yet), sorted.
std::vector<std::string> runs(const fsnap::ShadowRepo& repo, const fs::path& store_dir) {
  std::set<std::string> names;
  for (const std::string& run : repo.runs()) names.insert(run);
  boost::system::error_code ec;
  for (fs::directory_iterator it(fsnap::layout::runs_dir(store_dir), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (fsnap::layout::is_valid_run_name(name)) names.insert(name);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> words_of(const fsnap::ShadowRepo& repo, const fs::path& store_dir,
                                  const std::string& kind) {
  if (kind == "runs") return runs(repo, store_dir);
  std::vector<std::string> words;
  for (const fsnap::Checkpoint& c : repo.log({}, kCompletionCheckpoints)) {
    const std::string& call = c.meta.tool_call_id;
    if (kind == "calls") {
      if (!call.empty()) words.push_back(call);
      continue;
    }
    if (!call.empty() && c.meta.phase == fsnap::Phase::kPreTool) words.push_back("pre:" + call);
    if (!call.empty() && c.meta.phase == fsnap::Phase::kPostTool) words.push_back("post:" + call);
    if (!c.meta.tag.empty()) words.push_back(c.meta.tag);
  }
  if (kind == "refs") {
    for (const std::string& run : repo.runs()) words.push_back("run:" + run);
  }
  return words;
}

}  // namespace

std::vector<std::string> completion_words(const GlobalOptions& options, const std::string& kind) {
  std::vector<std::string> found;
  try {
    Location location = locate(options);
    fs::path repo_dir = fsnap::layout::repo_dir(location.store_dir);
    boost::system::error_code ec;
    if (!fs::is_directory(repo_dir, ec)) return {};
    fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(repo_dir, false);
    found = words_of(repo, location.store_dir, kind);
  } catch (const std::exception&) {
    return {};  // no store here, or none to read: nothing to offer
  }
  std::vector<std::string> words;
  std::set<std::string> seen;
  for (std::string& word : found) {
    if (shell_safe(word) && seen.insert(word).second) words.push_back(std::move(word));
  }
  return words;
}

}  // namespace cli
