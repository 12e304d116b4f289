#include "statekit/saga_journal.hpp"

#include <array>
#include <cctype>
#include <sstream>

#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"

namespace statekit {

namespace {

constexpr std::string_view kMagic = "statekit-saga 1";
constexpr std::array<std::string_view, 5> kStatuses = {"running", "completed", "compensating",
                                                       "compensated", "failed"};
constexpr std::array<std::string_view, 5> kStates = {"pending", "started", "done", "compensated",
                                                     "compensation-failed"};

// A field of a line: ":" then the text with '%', ' ', '\n' and '\r' as %XX.
std::string field(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = ":";
  for (char c : text) {
    if (c == '%' || c == ' ' || c == '\n' || c == '\r') {
      auto b = static_cast<unsigned char>(c);
      out += '%';
      out += hex[b >> 4];
      out += hex[b & 15];
    } else {
      out += c;
    }
  }
  return out;
}

[[noreturn]] void corrupt(const std::string& why) {
  throw fsnap::Error(fsnap::ErrorCode::kCorrupt, "not a saga journal: " + why);
}

std::string unfield(std::string_view f) {
  if (f.empty() || f[0] != ':') corrupt("a field without its ':'");
  std::string out;
  for (std::size_t i = 1; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    if (i + 2 >= f.size() || !std::isxdigit(static_cast<unsigned char>(f[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(f[i + 2]))) {
      corrupt("a broken escape");
    }
    out += static_cast<char>(std::stoi(std::string(f.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

template <typename Enum, std::size_t N>
Enum named(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  corrupt("an unknown word " + std::string(name));
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= line.size()) {
    std::size_t space = line.find(' ', start);
    if (space == std::string_view::npos) space = line.size();
    out.push_back(line.substr(start, space - start));
    start = space + 1;
  }
  return out;
}

}  // namespace

std::size_t SagaJournal::first_not_done() const {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].state != StepState::kDone) return i;
  }
  return steps.size();
}

std::string SagaJournal::encode() const {
  std::string out = std::string(kMagic) + "\n";
  out += "saga " + field(saga) + " " + std::string(kStatuses[static_cast<int>(status)]) + " " +
         field(failed_step) + " " + field(cause) + "\n";
  for (const Step& s : steps) {
    out += "step " + std::string(kStates[static_cast<int>(s.state)]) + " " + field(s.name) + " " +
           field(s.result) + " " + field(s.error) + "\n";
  }
  return out;
}

SagaJournal SagaJournal::parse(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line) || line != kMagic)
    corrupt("its first line is not " + std::string(kMagic));
  SagaJournal out;
  bool header = false;
  while (std::getline(in, line)) {
    std::vector<std::string_view> w = words(line);
    if (w.size() == 5 && w[0] == "saga" && !header) {
      out.saga = unfield(w[1]);
      out.status = named<Status>(kStatuses, w[2]);
      out.failed_step = unfield(w[3]);
      out.cause = unfield(w[4]);
      header = true;
    } else if (w.size() == 5 && w[0] == "step" && header) {
      out.steps.push_back(
          Step{unfield(w[2]), named<StepState>(kStates, w[1]), unfield(w[3]), unfield(w[4])});
    } else {
      corrupt("an unexpected line");
    }
  }
  if (!header) corrupt("no saga line");
  return out;
}

SagaSink SagaFile::sink() const {
  return [file = file_](const SagaJournal& journal) {
    fsnap::write_file_atomically(file, journal.encode(), 0600);
  };
}

std::optional<SagaJournal> SagaFile::load() const {
  std::optional<std::string> text = fsnap::read_small_file(file_);
  if (!text) return std::nullopt;
  return SagaJournal::parse(*text);
}

void SagaFile::remove() const {
  boost::system::error_code ignored;
  boost::filesystem::remove(file_, ignored);
}

}  // namespace statekit
