#include "fsnap/remote_transfer.hpp"

#include <git2.h>

#include <set>

#include "fsnap/error.hpp"
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
  Remote remote = open_remote(repo, url);
  Refspecs specs(transfers);
  git_fetch_options options = GIT_FETCH_OPTIONS_INIT;
  options.callbacks.credentials = credentials;
  options.prune = GIT_FETCH_NO_PRUNE;
  options.update_fetchhead = 0;
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  git::check(git_remote_fetch(remote.get(), specs.array(), &options, "shadowbox: fetch"),
             failure("cannot fetch from", url));
  for (const RefTransfer& t : transfers) {
    std::optional<git_oid> now = repo.impl().ref_target(t.to);
    if (!now || git::to_hex(*now) != there[t.from]) {
      throw Error(ErrorCode::kConflict, "fetched " + t.from + " from " + quote_input(url, 200) +
                                            " but the local " + t.to +
                                            " is not at it (not a fast-forward?)");
    }
  }
}

}  // namespace fsnap
