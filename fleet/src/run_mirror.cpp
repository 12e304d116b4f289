#include "fleet/run_mirror.hpp"

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <sstream>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"

namespace fleet {

namespace {

namespace layout = fsnap::layout;
using fsnap::Error;
using fsnap::ErrorCode;

constexpr std::size_t kLagLimit = 10'000;

std::string worker_notes_ref(const std::string& worker) {
  return std::string(layout::kNotesRef) + "/" + worker;
}

// Where fetched notes of a worker are kept in this store (outside refs/notes/shadowbox,
// which is this store's own ledger).
std::string fetched_notes_ref(const std::string& worker) {
  return "refs/fleet/notes/" + worker;
}

// <store>/fleet-pushed.json: {"<remote>": {"<remote ref>": "<commit>", ...}, ...}
using PushedFile = std::map<std::string, std::map<std::string, std::string>>;

PushedFile read_pushed(const fsnap::Store& store) {
  PushedFile out;
  std::optional<std::string> text = fsnap::read_small_file(layout::fleet_pushed_file(store.dir()));
  if (!text || text->empty()) return out;
  try {
    Poco::JSON::Parser parser;
    auto root = parser.parse(*text).extract<Poco::JSON::Object::Ptr>();
    for (const auto& [remote, refs] : *root) {
      auto object = refs.extract<Poco::JSON::Object::Ptr>();
      for (const auto& [ref, commit] : *object) out[remote][ref] = commit.toString();
    }
  } catch (const Poco::Exception&) {
    // A damaged record only makes everything pending again: the next push sends it.
    out.clear();
  }
  return out;
}

void write_pushed(const fsnap::Store& store, const PushedFile& pushed) {
  Poco::JSON::Object root;
  for (const auto& [remote, refs] : pushed) {
    Poco::JSON::Object::Ptr object = new Poco::JSON::Object;
    for (const auto& [ref, commit] : refs) object->set(ref, commit);
    root.set(remote, object);
  }
  std::ostringstream out;
  root.stringify(out, 1);
  fsnap::write_file_atomically(layout::fleet_pushed_file(store.dir()), out.str() + "\n", 0600);
}

}  // namespace

std::map<std::string, std::string> lag_record(const PushLag& lag, const std::string& error) {
  return {{"pushed_checkpoint", lag.pushed_checkpoint},
          {"unpushed_checkpoints", std::to_string(lag.checkpoints)},
          {"last_checkpoint", lag.last_checkpoint},
          {"push_error", error}};
}

RunMirror::RunMirror(fsnap::Store store, std::shared_ptr<fsnap::ShadowRepo> repo,
                     std::string remote, std::string worker)
    : store_(std::move(store)),
      repo_(std::move(repo)),
      remote_(std::move(remote)),
      worker_(std::move(worker)) {}

std::vector<fsnap::RefTransfer> RunMirror::transfers(const std::string& run) const {
  return {{layout::run_ref(run), layout::run_ref(run)},
          {layout::session_ref(run), layout::session_ref(run)},
          {layout::home_ref(run), layout::home_ref(run)},
          {layout::kNotesRef, worker_notes_ref(worker_)}};
}

std::map<std::string, std::string> RunMirror::pushed() const {
  PushedFile all = read_pushed(store_);
  auto it = all.find(remote_);
  return it == all.end() ? std::map<std::string, std::string>{} : it->second;
}

PushLag RunMirror::lag(const std::string& run) const {
  PushLag out;
  std::map<std::string, std::string> done = pushed();
  for (const fsnap::RefTransfer& t : transfers(run)) {
    std::optional<std::string> here = repo_->ref_target(t.from);
    if (!here) continue;
    auto there = done.find(t.to);
    if (there == done.end() || there->second != *here) out.refs.push_back(t);
  }
  out.last_checkpoint = repo_->ref_target(layout::run_ref(run)).value_or("");
  auto there = done.find(layout::run_ref(run));
  if (there != done.end()) out.pushed_checkpoint = there->second;
  if (!out.last_checkpoint.empty() && out.last_checkpoint != out.pushed_checkpoint) {
    out.checkpoints = repo_->commits_between(out.last_checkpoint, out.pushed_checkpoint, kLagLimit);
  }
  return out;
}

RunPush RunMirror::push(const std::string& run) {
  RunPush out;
  PushLag before = lag(run);
  if (before.up_to_date()) {
    out.left = before;
    return out;
  }
  // What is sent is what the refs are now; recorded as such once the remote took it.
  std::map<std::string, std::string> sent;
  for (const fsnap::RefTransfer& t : before.refs) {
    if (std::optional<std::string> here = repo_->ref_target(t.from)) sent[t.to] = *here;
  }
  replace_rewritten(before.refs, sent);
  out.report = fsnap::push_refs(*repo_, remote_, before.refs);
  update_pushed([&](std::map<std::string, std::string>& pushed) {
    for (const std::string& ref : out.report.updated) {
      auto it = sent.find(ref);
      if (it != sent.end()) pushed[ref] = it->second;
    }
  });
  out.left = lag(run);
  return out;
}

void RunMirror::replace_rewritten(const std::vector<fsnap::RefTransfer>& refs,
                                  const std::map<std::string, std::string>& sent) {
  std::map<std::string, std::string> done = pushed();
  std::vector<fsnap::RefTransfer> rewritten;
  for (const fsnap::RefTransfer& t : refs) {
    auto was = done.find(t.to);
    auto now = sent.find(t.to);
    if (was == done.end() || now == sent.end()) continue;  // never pushed: a plain push
    if (!repo_->descends_from(now->second, was->second)) rewritten.push_back(t);
  }
  if (rewritten.empty()) return;
  // The remote's ref goes first (libgit2 cannot push over a commit this store no longer
  // has), and only where the remote still holds what this store pushed last: never what
  // another worker pushed since. The push that follows writes the new history.
  std::map<std::string, std::string> there = fsnap::remote_refs(*repo_, remote_, "refs/");
  std::vector<fsnap::RefTransfer> deletions;
  for (const fsnap::RefTransfer& t : rewritten) {
    auto remote = there.find(t.to);
    if (remote != there.end() && remote->second == done[t.to]) deletions.push_back({"", t.to});
  }
  fsnap::PushReport deleted = fsnap::push_refs(*repo_, remote_, deletions);
  update_pushed([&](std::map<std::string, std::string>& pushed) {
    for (const std::string& ref : deleted.updated) pushed.erase(ref);
  });
}

void RunMirror::update_pushed(
    const std::function<void(std::map<std::string, std::string>&)>& change) {
  fsnap::StoreLock lock = store_.lock();
  PushedFile all = read_pushed(store_);
  change(all[remote_]);
  write_pushed(store_, all);
}

std::string RunMirror::fetch(const std::string& run, const std::string& owner) {
  std::map<std::string, std::string> there = fsnap::remote_refs(*repo_, remote_, "refs/");
  if (there.count(layout::run_ref(run)) == 0) {
    throw Error(ErrorCode::kNotFound, "the fleet's remote " + fsnap::quote_input(remote_, 200) +
                                          " has no checkpoints of run " + fsnap::quote_input(run) +
                                          " (its owner pushed none yet?)");
  }
  std::vector<fsnap::RefTransfer> wanted;
  for (const fsnap::RefTransfer& t : transfers(run)) {
    if (t.from == layout::kNotesRef) continue;
    if (there.count(t.to) != 0) wanted.push_back({t.to, t.from});
  }
  std::string owner_notes = worker_notes_ref(owner);
  bool has_notes = there.count(owner_notes) != 0;
  if (has_notes) wanted.push_back({owner_notes, fetched_notes_ref(owner), /*force=*/true});
  fsnap::StoreLock lock = store_.lock();
  fsnap::fetch_refs(*repo_, remote_, wanted);
  // The run's records, into this store's ledger (one notes commit).
  std::string last = *repo_->ref_target(layout::run_ref(run));
  if (has_notes) {
    std::vector<fsnap::Note> notes;
    for (const fsnap::Checkpoint& c : repo_->log(run, 0)) {
      if (repo_->note(c.commit)) continue;
      if (std::optional<std::string> text = repo_->note_in(fetched_notes_ref(owner), c.commit)) {
        notes.push_back({c.commit, *text});
      }
    }
    if (!notes.empty()) repo_->write_notes(notes, std::chrono::system_clock::now());
  }
  // What was fetched is on the remote: it need not be pushed back.
  update_pushed([&](std::map<std::string, std::string>& pushed) {
    for (const fsnap::RefTransfer& t : wanted) {
      if (t.to == fetched_notes_ref(owner)) continue;
      if (std::optional<std::string> here = repo_->ref_target(t.to)) pushed[t.from] = *here;
    }
  });
  return last;
}

}  // namespace fleet
