// fleet::RunMirror — a store's runs on the fleet's git remote. A run is its checkpoint
// commits, the session trees its ledger records name, its preserved agent HOME, and the
// ledger notes; they are pushed under the same ref names (the registry keeps run ids
// unique in the fleet), the notes to one ref per worker so that workers never race on
// one notes history:
//
//   refs/shadowbox/runs/<run>        refs/shadowbox/sessions/<run>
//   refs/shadowbox/home/<run>        refs/notes/shadowbox/<worker>
//
// (`git log --notes='shadowbox/*' refs/shadowbox/runs/<run>` in a mirror shows each
// checkpoint with its record.)
//
// The push queue is the difference between the store's refs and what was last pushed
// (<store>/fleet-pushed.json, per remote URL, rewritten after every push): nothing is
// written at a tool boundary, and after a crash whatever was not pushed still differs,
// so the next push sends it. A ref that is not a fast-forward of the remote's (another
// worker moved it) is refused by the remote and stays pending. A history this store
// rewrote itself (`shadowbox gc`'s retention) replaces the remote's with a lease: only
// while the remote still holds what this store pushed last.
//
// Thread-safety: one RunMirror per thread; pushes of the same store from several
// processes are safe (the record of what was pushed is updated under the store lock).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fsnap/remote_transfer.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"

namespace fleet {

// How far a run's pushes lag behind its store.
struct PushLag {
  std::string last_checkpoint;           // the run's newest checkpoint commit ("" if none)
  std::string pushed_checkpoint;         // the newest one on the remote as far as this store knows
  std::size_t checkpoints = 0;           // checkpoints not pushed yet (counted up to 10,000)
  std::vector<fsnap::RefTransfer> refs;  // the refs that differ from what was pushed
  bool up_to_date() const { return refs.empty(); }
};

// The fields of a run's record (RunRegistry) that say how far its pushes lag: the
// pushed and the last checkpoint, the checkpoints not pushed, and push_error (error:
// why the last push failed, "" when it did not).
std::map<std::string, std::string> lag_record(const PushLag& lag, const std::string& error);

// What a push of a run did.
struct RunPush {
  fsnap::PushReport report;
  PushLag left;  // what is still pending after it (refused refs)
};

class RunMirror {
 public:
  RunMirror(fsnap::Store store, std::shared_ptr<fsnap::ShadowRepo> repo, std::string remote,
            std::string worker);

  const std::string& remote() const { return remote_; }

  // The refs of run as they go to the remote.
  std::vector<fsnap::RefTransfer> transfers(const std::string& run) const;
  // What of run is not on the remote yet.
  PushLag lag(const std::string& run) const;
  // Pushes what of run is pending, in one connection. Error kIo when the remote cannot
  // be reached (nothing is recorded as pushed then).
  RunPush push(const std::string& run);
  // Fetches run as owner pushed it into this store: its checkpoints, session trees and
  // HOME refs (moved to the remote's, which must descend from any this store has), and
  // the records of its checkpoints from owner's notes into this store's ledger. Returns
  // the run's newest checkpoint commit. Error kNotFound when the remote lacks the run.
  std::string fetch(const std::string& run, const std::string& owner);

 private:
  std::map<std::string, std::string> pushed() const;
  // Changes what was pushed to this remote (receiving ref -> commit), under the store lock.
  void update_pushed(const std::function<void(std::map<std::string, std::string>&)>& change);
  // Deletes on the remote each ref of refs whose history this store rewrote (sent: what
  // each receiving ref is about to be pushed at), where the remote still holds what this
  // store pushed last.
  void replace_rewritten(const std::vector<fsnap::RefTransfer>& refs,
                         const std::map<std::string, std::string>& sent);

  fsnap::Store store_;
  std::shared_ptr<fsnap::ShadowRepo> repo_;
  std::string remote_;
  std::string worker_;
};

}  // namespace fleet
