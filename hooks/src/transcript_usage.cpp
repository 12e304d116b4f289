#include "hooks/transcript_usage.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <boost/filesystem/operations.hpp>

#include "hooks/agent_adapter.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// Reads the bytes of file from offset (at most what is there now); size and id are the
// file's size and identity (device and inode; both 0 when it cannot be opened).
std::string read_from(const fs::path& file, std::uint64_t offset, std::uint64_t& size,
                      std::pair<std::uint64_t, std::uint64_t>& id) {
  std::string out;
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return out;
  }
  size = static_cast<std::uint64_t>(st.st_size);
  id = {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
  if (size > offset) {
    out.resize(size - offset);
    std::size_t done = 0;
    while (done < out.size()) {
      ssize_t n =
          ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    out.resize(done);
  }
  ::close(fd);
  return out;
}

// Who reads the lines of the agents' session files. Each adapter takes only lines of its
// own agent's shape (a file is one agent's); Claude Code's, the loosest check, is asked
// last. Claude Agent SDK applications write Claude Code's transcripts.
constexpr AgentKind kLineReaders[] = {AgentKind::kCodex, AgentKind::kGemini,
                                      AgentKind::kClaudeCode};

}  // namespace

void TranscriptUsage::count(const std::string& key, const Request& request) {
  auto [it, added] = requests_.emplace(key, request);
  if (added) {
    price(request, nullptr);
  } else if (request.usage.total() > it->second.usage.total()) {
    price(request, &it->second);
    it->second = request;
  }
}

void TranscriptUsage::read_line(const std::string& file, const std::string& line) {
  std::optional<SessionLine> read;
  for (AgentKind kind : kLineReaders) {
    if ((read = adapter_for(kind).read_session_line(line))) break;
  }
  if (!read) return;
  if (!read->file_model.empty()) file_models_[file] = read->file_model;
  if (!read->message.empty()) messages_[file].insert(read->message);
  tool_calls_.insert(read->tool_calls.begin(), read->tool_calls.end());
  if (read->request) {
    const UsageRecord& r = *read->request;
    auto named = file_models_.find(file);
    std::string model = !r.model.empty() || named == file_models_.end() ? r.model : named->second;
    count(r.key, Request{model, r.usage});
  }
}

TranscriptUsage::TranscriptUsage(runs::PriceTable prices) : prices_(std::move(prices)) {}

void TranscriptUsage::price(const Request& request, const Request* replaced) {
  if (request.usage.total() == 0) return;  // e.g. Claude Code's own <synthetic> entries
  runs::PriceTable::Priced priced = prices_.price(request.model, request.usage);
  if (replaced != nullptr && replaced->usage.total() != 0) {
    cost_.usd -= prices_.price(replaced->model, replaced->usage).usd;
  } else {
    ++cost_.requests;
  }
  cost_.usd += priced.usd;
  largest_usd_ = std::max(largest_usd_, priced.usd);
  if (!priced.known) cost_.unknown_models.insert(request.model);
}

void TranscriptUsage::update(const std::vector<fs::path>& files) {
  for (const fs::path& file : files) {
    Position& at = offsets_[file.string()];
    std::uint64_t& offset = at.offset;
    std::uint64_t size = 0;
    std::pair<std::uint64_t, std::uint64_t> id{0, 0};
    std::string data = read_from(file, offset, size, id);
    if (size < offset || (offset > 0 && id != at.id)) {
      // Replaced by another file, shorter or not: read it again (requests seen count
      // once).
      offset = 0;
      data = read_from(file, 0, size, id);
    }
    at.id = id;
    std::size_t start = 0;
    for (std::size_t nl; (nl = data.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (nl > start) read_line(file.string(), data.substr(start, nl - start));
    }
    offset += start;  // an unfinished last line is read again next time
  }
}

void TranscriptUsage::reset() {
  offsets_.clear();
  requests_.clear();
  cost_ = Cost{};
  largest_usd_ = 0;
  tool_calls_.clear();
  messages_.clear();
  file_models_.clear();
}

std::size_t TranscriptUsage::messages(const fs::path& file) const {
  auto it = messages_.find(file.string());
  return it == messages_.end() ? 0 : it->second.size();
}

std::vector<fs::path> session_transcripts(const fs::path& transcript) {
  std::vector<fs::path> out;
  boost::system::error_code ec;
  if (transcript.empty()) return out;
  if (fs::is_regular_file(transcript, ec)) out.push_back(transcript);
  fs::path subagents = transcript.parent_path() / transcript.stem() / "subagents";
  if (!fs::is_directory(subagents, ec)) return out;
  for (fs::recursive_directory_iterator it(subagents, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() == ".jsonl" && fs::is_regular_file(it->path(), ec)) {
      out.push_back(it->path());
    }
  }
  return out;
}

}  // namespace hooks
