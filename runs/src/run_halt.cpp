#include "runs/run_halt.hpp"

#include <sstream>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/store_layout.hpp"

namespace runs {

namespace fs = boost::filesystem;

namespace {

std::string to_json(const HaltRequest& request) {
  Poco::JSON::Object o(Poco::JSON_PRESERVE_KEY_ORDER);
  o.set("halt_reason", request.halt_reason);
  o.set("reason", request.reason);
  o.set("agent_told", request.agent_told);
  std::ostringstream text;
  o.stringify(text);
  text << '\n';
  return text.str();
}

}  // namespace

bool request_halt(const fsnap::Store& store, const std::string& run, const HaltRequest& request) {
  boost::system::error_code ec;
  fs::create_directories(fsnap::layout::run_dir(store.dir(), run), ec);
  fs::path file = fsnap::layout::run_halt_file(store.dir(), run);
  if (fsnap::create_file_atomically(file, to_json(request))) return true;
  // One is pending: its reason stands, but a stop that cannot wait makes it urgent.
  std::optional<HaltRequest> pending = pending_halt(store, run);
  if (pending && !request.agent_told && pending->agent_told) {
    pending->agent_told = false;
    fsnap::write_file_atomically(file, to_json(*pending));
  }
  return false;
}

std::optional<HaltRequest> pending_halt(const fsnap::Store& store, const std::string& run) {
  std::optional<std::string> text;
  try {
    text = fsnap::read_small_file(fsnap::layout::run_halt_file(store.dir(), run));
  } catch (const std::exception& e) {
    return HaltRequest{"aborted", e.what(), false};
  }
  if (!text) return std::nullopt;
  try {
    Poco::JSON::Parser parser;
    auto o = parser.parse(*text).extract<Poco::JSON::Object::Ptr>();
    return HaltRequest{o->optValue<std::string>("halt_reason", "aborted"),
                       o->optValue<std::string>("reason", ""),
                       o->optValue<bool>("agent_told", false)};
  } catch (const std::exception&) {
    return HaltRequest{"aborted", *text, false};
  }
}

void clear_halt(const fsnap::Store& store, const std::string& run) {
  boost::system::error_code ec;
  fs::remove(fsnap::layout::run_halt_file(store.dir(), run), ec);
}

}  // namespace runs
