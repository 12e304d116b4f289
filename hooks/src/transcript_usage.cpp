#include "hooks/transcript_usage.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

namespace hooks {

namespace fs = boost::filesystem;
using Poco::JSON::Object;

namespace {

std::uint64_t tokens(const Object::Ptr& o, const char* key) {
  if (!o || !o->has(key) || o->isNull(key)) return 0;
  try {
    double n = o->getValue<double>(key);
    return n > 0 ? static_cast<std::uint64_t>(n) : 0;
  } catch (const Poco::Exception&) {
    return 0;
  }
}

std::string text(const Object::Ptr& o, const char* key) {
  if (!o || !o->has(key) || o->isNull(key)) return "";
  try {
    return o->getValue<std::string>(key);
  } catch (const Poco::Exception&) {
    return "";
  }
}

runs::TokenUsage usage_of(const Object::Ptr& usage) {
  runs::TokenUsage u;
  u.input = tokens(usage, "input_tokens");
  u.output = tokens(usage, "output_tokens");
  u.cache_read = tokens(usage, "cache_read_input_tokens");
  Object::Ptr split = usage->getObject("cache_creation");
  u.cache_write_5m = tokens(split, "ephemeral_5m_input_tokens");
  u.cache_write_1h = tokens(split, "ephemeral_1h_input_tokens");
  std::uint64_t written = tokens(usage, "cache_creation_input_tokens");
  // Without a split (or one that misses some), the rest is priced as 5-minute writes.
  if (written > u.cache_write_5m + u.cache_write_1h) {
    u.cache_write_5m = written - u.cache_write_1h;
  }
  return u;
}

// Reads the bytes of file from offset (at most what is there now).
std::string read_from(const fs::path& file, std::uint64_t offset, std::uint64_t& size) {
  std::string out;
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return out;
  }
  size = static_cast<std::uint64_t>(st.st_size);
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

}  // namespace

namespace {

Object::Ptr parse_entry(const std::string& line) {
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(line);
    if (parsed.type() == typeid(Object::Ptr)) return parsed.extract<Object::Ptr>();
  } catch (const std::exception&) {
  }
  return nullptr;  // not JSON: not an entry of ours to count
}

// Tokens counted twice by an agent (cached input inside input), as the table prices them.
std::uint64_t less(std::uint64_t total, std::uint64_t part) {
  return total > part ? total - part : 0;
}

}  // namespace

void TranscriptUsage::read_codex_line(const std::string& file, const std::string& line) {
  Object::Ptr entry = parse_entry(line);
  Object::Ptr payload = entry ? entry->getObject("payload") : nullptr;
  if (!payload) return;
  std::string type = text(entry, "type");
  if (type == "turn_context") {
    std::string model = text(payload, "model");
    if (!model.empty()) codex_models_[file] = model;
  } else if (type == "response_item" && text(payload, "type") == "function_call") {
    tool_calls_.insert(text(payload, "call_id"));
  } else if (type == "token_usage_record") {
    Object::Ptr usage = payload->getObject("usage");
    std::string id = text(payload, "response_id");
    if (!usage || id.empty()) return;
    runs::TokenUsage u;
    u.cache_read = tokens(usage, "cached_input_tokens");
    u.input = less(tokens(usage, "input_tokens"), u.cache_read);
    u.cache_write_5m = tokens(usage, "cache_write_input_tokens");
    u.output = tokens(usage, "output_tokens");  // reasoning included, as OpenAI counts it
    count("codex " + id, Request{codex_models_[file], u});
  }
}

void TranscriptUsage::read_gemini_line(const std::string& line) {
  Object::Ptr entry = parse_entry(line);
  Object::Ptr usage = entry ? entry->getObject("tokens") : nullptr;
  if (!usage || text(entry, "type") != "gemini") return;
  runs::TokenUsage u;
  u.cache_read = tokens(usage, "cached");
  u.input = less(tokens(usage, "input"), u.cache_read);
  u.output = tokens(usage, "output") + tokens(usage, "thoughts");
  count("gemini " + text(entry, "id"), Request{text(entry, "model"), u});
}

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
  // The agents' files are told apart by their lines (each file is one agent's).
  if (line.find("\"type\":\"token_usage_record\"") != std::string::npos ||
      line.find("\"type\":\"turn_context\"") != std::string::npos ||
      line.find("\"type\":\"function_call\"") != std::string::npos) {
    read_codex_line(file, line);
    return;
  }
  if (line.find("\"type\":\"gemini\"") != std::string::npos &&
      line.find("\"tokens\"") != std::string::npos) {
    read_gemini_line(line);
    return;
  }
  // Only messages matter (and of them, assistant entries with usage for the cost); the
  // other lines are skipped unparsed.
  bool message_line = line.find("\"type\":\"user\"") != std::string::npos ||
                      line.find("\"type\":\"assistant\"") != std::string::npos;
  bool usage_line = line.find("\"usage\"") != std::string::npos &&
                    line.find("\"assistant\"") != std::string::npos;
  if (!message_line && !usage_line) return;
  Object::Ptr entry;
  try {
    Poco::JSON::Parser parser;
    entry = parser.parse(line).extract<Object::Ptr>();
  } catch (const std::exception&) {
    return;  // not JSON: not an entry of ours to count
  }
  std::string type = text(entry, "type");
  Object::Ptr message = entry->getObject("message");
  if (type == "user" || type == "assistant") {
    // A streamed reply is written several times: its message id counts it once.
    std::string key = type == "assistant" ? text(message, "id") : "";
    if (key.empty()) key = text(entry, "uuid");
    if (!key.empty()) messages_[file].insert(type + " " + key);
  }
  if (type != "assistant" || !message) return;
  Object::Ptr usage = message->getObject("usage");
  if (!usage) return;
  std::string id = text(message, "id");
  if (id.empty()) id = text(entry, "uuid");
  if (Poco::JSON::Array::Ptr content = message->getArray("content")) {
    for (std::size_t i = 0; i < content->size(); ++i) {
      Object::Ptr block = content->getObject(static_cast<unsigned>(i));
      if (block && text(block, "type") == "tool_use") tool_calls_.insert(text(block, "id"));
    }
  }
  count(id + " " + text(entry, "requestId"), Request{text(message, "model"), usage_of(usage)});
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
    std::uint64_t& offset = offsets_[file.string()];
    std::uint64_t size = 0;
    std::string data = read_from(file, offset, size);
    if (size < offset) {
      // Replaced by a shorter file: read it again (requests seen count once).
      offset = 0;
      data = read_from(file, 0, size);
    }
    std::size_t start = 0;
    for (std::size_t nl; (nl = data.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (nl > start) read_line(file.string(), data.substr(start, nl - start));
    }
    offset += start;  // an unfinished last line is read again next time
  }
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
