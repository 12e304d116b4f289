// TranscriptUsage — the tokens of every model request recorded in an agent's session
// files, JSON lines all (Claude Code's transcripts, Codex CLI's rollouts, Gemini CLI's
// chat files), each line read by its agent's adapter (AgentAdapter::read_session_line).
// Streaming writes one request several times as it grows, and a resumed or forked
// session copies earlier entries: each request counts once, with its largest token
// total. Files are read
// incrementally — update() parses only what was appended since the last call, and a
// line still being written waits for its newline — and priced as they come, so what a
// tool call costs to check does not grow with the length of the session.
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "runs/pricing.hpp"

namespace hooks {

// The token usage of an agent's model requests.
class TranscriptUsage {
 public:
  // One request.
  struct Request {
    std::string model;
    runs::TokenUsage usage;
  };

  // What the requests cost.
  struct Cost {
    double usd = 0;
    std::size_t requests = 0;
    std::set<std::string> unknown_models;  // priced at the table's highest rates
  };

  // Requests are priced with prices.
  explicit TranscriptUsage(runs::PriceTable prices);

  // Reads what is new in files (a missing file is skipped; one that shrank, or was
  // replaced by another file, is read again from its start).
  void update(const std::vector<boost::filesystem::path>& files);
  // Forgets everything read: the next update reads every file from its start.
  void reset();
  // Every request seen, by "<message id> <request id>".
  const std::map<std::string, Request>& requests() const { return requests_; }
  // What they cost.
  const Cost& cost() const { return cost_; }
  // What the costliest single request cost (0 if none was seen).
  double largest_request_usd() const { return largest_usd_; }
  // Whether a request seen asked for the tool call id (a tool_use block of its reply):
  // Claude Code writes the transcript in batches, so a hook can learn of a call before
  // the request that made it is written.
  bool has_tool_call(const std::string& id) const { return tool_calls_.count(id) != 0; }
  // The user and assistant messages seen in file (a streamed reply once).
  std::size_t messages(const boost::filesystem::path& file) const;

 private:
  // Counts what line of file says, as the adapter whose agent wrote it reads it.
  void read_line(const std::string& file, const std::string& line);
  // Counts request under key once, with its largest usage.
  void count(const std::string& key, const Request& request);
  // Counts request in cost_, replacing replaced (a smaller usage of it) if not null.
  void price(const Request& request, const Request* replaced);

  runs::PriceTable prices_;
  // How far a file was read, and which file it was (device, inode).
  struct Position {
    std::uint64_t offset = 0;
    std::pair<std::uint64_t, std::uint64_t> id{0, 0};
  };
  std::map<std::string, Position> offsets_;  // file -> bytes consumed
  std::map<std::string, Request> requests_;
  Cost cost_;
  double largest_usd_ = 0;
  std::set<std::string> tool_calls_;  // ids of the tool_use blocks of replies seen
  std::map<std::string, std::set<std::string>> messages_;  // file -> "<type> <id>"
  std::map<std::string, std::string> file_models_;         // file -> the model it last named
};

// The transcripts of one Claude Code session, given its transcript file: that file and
// its subagents' (<dir>/<session>/subagents/**/*.jsonl), those that exist.
std::vector<boost::filesystem::path> session_transcripts(const boost::filesystem::path& transcript);

}  // namespace hooks
