#include "fsnap/remote_transfer.hpp"

#include <git2.h>

#include <set>

#include "entry_names.hpp"
#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "git_handles.hpp"
#include "shadow_repo_impl.hpp"

namespace fsnap {

namespace {

using Remote = git::Handle<git_remote, git_remote_free>;

void refuse_tls(const std::string& url) {
  if (url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "remote " + quote_input(url) +
                    ": http(s) remotes are not supported; use ssh://, git://, file:// or a path");
  }
}

// ssh:// authenticates with a key from ssh-agent, as the user's own git does by default.
int credentials(git_credential** out, const char* /*url*/, const char* user_from_url,
                unsigned int allowed, void* /*payload*/) {
  if ((allowed & GIT_CREDENTIAL_SSH_KEY) != 0) {
    return git_credential_ssh_key_from_agent(out, user_from_url != nullptr ? user_from_url : "git");
  }
  if ((allowed & GIT_CREDENTIAL_USERNAME) != 0) {
    return git_credential_username_new(out, user_from_url != nullptr ? user_from_url : "git");
  }
  return GIT_PASSTHROUGH;
}

Remote open_remote(ShadowRepo& repo, const std::string& url) {
  refuse_tls(url);
  git::ensure_initialized();
  git_remote* raw = nullptr;
  git::check(git_remote_create_anonymous(&raw, repo.impl().repo.get(), url.c_str()),
             "invalid remote " + quote_input(url), ErrorCode::kInvalidArgument);
  return Remote(raw);
}

std::string failure(const std::string& what, const std::string& url) {
  return what + " " + quote_input(url, 200);
}

// The refspecs of transfers ("+from:to" when forced), as libgit2 takes them.
class Refspecs {
 public:
  explicit Refspecs(const std::vector<RefTransfer>& transfers) {
    specs_.reserve(transfers.size());
    for (const RefTransfer& t : transfers) {
      specs_.push_back((t.force ? "+" : "") + t.from + ":" + t.to);
    }
    raw_.reserve(specs_.size());
    for (std::string& s : specs_) raw_.push_back(s.data());
  }
  const git_strarray* array() {
    array_ = {raw_.data(), raw_.size()};
    return &array_;
  }

 private:
  std::vector<std::string> specs_;
  std::vector<char*> raw_;
  git_strarray array_{};
};

struct PushState {
  PushReport* report;
};

int on_update(const char* refname, const char* status, void* payload) {
  auto* state = static_cast<PushState*>(payload);
  if (status == nullptr) {
    state->report->updated.emplace_back(refname);
  } else {
    state->report->rejected[refname] = status;
  }
  return 0;
}

int on_progress(unsigned int /*current*/, unsigned int total, size_t bytes, void* payload) {
  static_cast<PushState*>(payload)->report->objects = total;
  static_cast<PushState*>(payload)->report->bytes = bytes;
  return 0;
}

// One push of transfers (all of whose local refs exist). Returns libgit2's code.
int push_once(ShadowRepo& repo, const std::string& url, const std::vector<RefTransfer>& transfers,
              PushReport& report) {
  Remote remote = open_remote(repo, url);
  Refspecs specs(transfers);
  PushState state{&report};
  git_push_options options = GIT_PUSH_OPTIONS_INIT;
  options.callbacks.credentials = credentials;
  options.callbacks.push_update_reference = on_update;
  options.callbacks.push_transfer_progress = on_progress;
  options.callbacks.payload = &state;
  options.pb_parallelism = 1;
  return git_remote_push(remote.get(), specs.array(), &options);
}

// The refs a fetch lands in before it is checked; removed again whatever happens
// (and any a fetch killed part-way left, before they are used again).
class Quarantine {
 public:
  explicit Quarantine(ShadowRepo::Impl& impl) : impl_(impl) { clear(); }
  ~Quarantine() {
    try {
      clear();
    } catch (const Error&) {
      // Left for the next fetch, which clears them first; they move no ref of a run.
    }
  }
  Quarantine(const Quarantine&) = delete;
  Quarantine& operator=(const Quarantine&) = delete;

  std::string ref(std::size_t i) const {
    return std::string(layout::kIncomingRefPrefix) + std::to_string(i);
  }

 private:
  void clear() {
    std::string glob = std::string(layout::kIncomingRefPrefix) + "*";
    git_reference_iterator* raw = nullptr;
    git::check(git_reference_iterator_glob_new(&raw, impl_.repo.get(), glob.c_str()),
               "cannot list " + glob);
    git::ReferenceIterator it(raw);
    std::vector<std::string> names;
    const char* name = nullptr;
    while (git_reference_next_name(&name, it.get()) == 0) names.emplace_back(name);
    for (const std::string& n : names) {
      impl_.clear_stale_lock(n);
      git_reference_remove(impl_.repo.get(), n.c_str());
    }
  }

  ShadowRepo::Impl& impl_;
};

// Checks every commit reachable from tip but not from trusted (what the receiving ref
// holds already, if anything): each must be a commit, and each of its trees must hold
// only names a restore may write (entry_names.hpp). what names the fetched ref.
void check_fetched(const ShadowRepo::Impl& impl, const git_oid& tip,
                   const std::optional<git_oid>& trusted, const std::string& what,
                   OidSet& checked) {
  git_object_t type = GIT_OBJECT_INVALID;
  {
    git_object* raw = nullptr;
    git::check(git_object_lookup(&raw, impl.repo.get(), &tip, GIT_OBJECT_ANY),
               "cannot read what was fetched of " + what, ErrorCode::kCorrupt);
    type = git_object_type(raw);
    git_object_free(raw);
  }
  if (type != GIT_OBJECT_COMMIT) {
    throw Error(ErrorCode::kCorrupt, "refusing what was fetched: " + what + " is not a commit");
  }
  git_revwalk* raw_walk = nullptr;
  git::check(git_revwalk_new(&raw_walk, impl.repo.get()), "cannot walk " + what);
  git::Revwalk walk(raw_walk);
  git::check(git_revwalk_push(walk.get(), &tip), "cannot walk " + what, ErrorCode::kCorrupt);
  if (trusted) git_revwalk_hide(walk.get(), &*trusted);  // a commit gc removed: walk it all
  git_oid id;
  int rc = 0;
  while ((rc = git_revwalk_next(&id, walk.get())) == 0) {
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, impl.repo.get(), &id),
               "cannot read commit " + git::to_hex(id) + " of " + what, ErrorCode::kCorrupt);
    git::Commit commit(raw);
    try {
      check_tree_names(impl, *git_commit_tree_id(commit.get()),
                       "commit " + git::to_hex(id) + " of " + what, checked);
    } catch (const Error& e) {
      throw Error(e.code(), std::string("refusing what was fetched: ") + e.what());
    }
  }
  if (rc != GIT_ITEROVER) git::check(rc, "cannot walk " + what, ErrorCode::kCorrupt);
}

// Moves the receiving ref of t to tip (checked): created, fast-forwarded, or moved
// anyhow when t says force; kConflict otherwise.
void move_fetched(ShadowRepo::Impl& impl, const RefTransfer& t, const git_oid& tip,
                  const std::string& url) {
  std::optional<git_oid> now = impl.ref_target(t.to);
  if (now && git_oid_equal(&*now, &tip)) return;
  if (now && !t.force && git_graph_descendant_of(impl.repo.get(), &tip, &*now) != 1) {
    throw Error(ErrorCode::kConflict, "fetched " + t.from + " from " + quote_input(url, 200) +
                                          " but the local " + t.to +
                                          " is not at it (not a fast-forward)");
  }
  impl.clear_stale_lock(t.to);
  git_reference* out = nullptr;
  if (now) {
    git::check(git_reference_create_matching(&out, impl.repo.get(), t.to.c_str(), &tip, 1, &*now,
                                             "shadowbox: fetch"),
               "cannot move " + t.to);
  } else {
    git::check(
        git_reference_create(&out, impl.repo.get(), t.to.c_str(), &tip, 0, "shadowbox: fetch"),
        "cannot create " + t.to);
  }
  git_reference_free(out);
}

}  // namespace

std::map<std::string, std::string> remote_refs(ShadowRepo& repo, const std::string& url,
                                               const std::string& prefix) {
  Remote remote = open_remote(repo, url);
  git_remote_callbacks callbacks = GIT_REMOTE_CALLBACKS_INIT;
  callbacks.credentials = credentials;
  git::check(git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, &callbacks, nullptr, nullptr),
             failure("cannot reach the remote", url));
  const git_remote_head** heads = nullptr;
  size_t count = 0;
  git::check(git_remote_ls(&heads, &count, remote.get()), failure("cannot list the refs of", url));
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < count; ++i) {
    std::string name = heads[i]->name;
    if (name.rfind(prefix, 0) == 0) out[name] = git::to_hex(heads[i]->oid);
  }
  git_remote_disconnect(remote.get());
  return out;
}

PushReport push_refs(ShadowRepo& repo, const std::string& url,
                     const std::vector<RefTransfer>& transfers) {
  std::vector<RefTransfer> present;
  for (const RefTransfer& t : transfers) {
    if (t.from.empty() || repo.impl().ref_target(t.from)) present.push_back(t);
  }
  PushReport report;
  if (present.empty()) return report;
  int rc = push_once(repo, url, present, report);
  if (rc == GIT_ENONFASTFORWARD) {
    // libgit2 refuses the whole push when one ref would not fast-forward: push them one
    // by one to learn which.
    report = PushReport{};
    for (const RefTransfer& t : present) {
      PushReport one;
      int each = push_once(repo, url, {t}, one);
      if (each == GIT_ENONFASTFORWARD) {
        report.rejected[t.to] = "not a fast-forward of the remote's " + t.to;
        continue;
      }
      git::check(each, failure("cannot push to", url));
      report.updated.insert(report.updated.end(), one.updated.begin(), one.updated.end());
      report.rejected.insert(one.rejected.begin(), one.rejected.end());
      report.objects += one.objects;
      report.bytes += one.bytes;
    }
    return report;
  }
  git::check(rc, failure("cannot push to", url));
  return report;
}

void fetch_refs(ShadowRepo& repo, const std::string& url,
                const std::vector<RefTransfer>& transfers) {
  if (transfers.empty()) return;
  std::map<std::string, std::string> there = remote_refs(repo, url, "refs/");
  std::string missing;
  for (const RefTransfer& t : transfers) {
    if (there.count(t.from) == 0) missing += (missing.empty() ? "" : ", ") + t.from;
  }
  if (!missing.empty()) {
    throw Error(ErrorCode::kNotFound, "the remote " + quote_input(url, 200) + " has no " + missing);
  }
  // Into refs of their own first: nothing fetched moves a ref of this store before
  // every tree it brings has been checked.
  ShadowRepo::Impl& impl = repo.impl();
  Quarantine quarantine(impl);
  std::vector<RefTransfer> incoming;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    incoming.push_back({transfers[i].from, quarantine.ref(i), /*force=*/true});
  }
  Remote remote = open_remote(repo, url);
  Refspecs specs(incoming);
  git_fetch_options options = GIT_FETCH_OPTIONS_INIT;
  options.callbacks.credentials = credentials;
  options.prune = GIT_FETCH_NO_PRUNE;
  options.update_fetchhead = 0;
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  git::check(git_remote_fetch(remote.get(), specs.array(), &options, "shadowbox: fetch"),
             failure("cannot fetch from", url));
  std::vector<git_oid> tips;
  OidSet checked;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const RefTransfer& t = transfers[i];
    std::optional<git_oid> tip = impl.ref_target(incoming[i].to);
    if (!tip || git::to_hex(*tip) != there[t.from]) {
      throw Error(ErrorCode::kConflict, "fetched " + t.from + " from " + quote_input(url, 200) +
                                            " but did not receive it whole");
    }
    check_fetched(impl, *tip, impl.ref_target(t.to),
                  t.from + " of the remote " + quote_input(url, 200), checked);
    tips.push_back(*tip);
  }
  for (std::size_t i = 0; i < transfers.size(); ++i) move_fetched(impl, transfers[i], tips[i], url);
}

}  // namespace fsnap
