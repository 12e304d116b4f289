#include "crafted_objects.hpp"

#include <git2.h>

#include <stdexcept>

namespace testing_support {

namespace {

// The repository at git_dir, open for one call.
class Repo {
 public:
  explicit Repo(const boost::filesystem::path& git_dir) {
    git_libgit2_init();
    if (git_repository_open_bare(&repo_, git_dir.c_str()) != 0) {
      throw std::runtime_error("cannot open " + git_dir.string());
    }
  }
  ~Repo() {
    git_repository_free(repo_);
    git_libgit2_shutdown();
  }
  Repo(const Repo&) = delete;
  Repo& operator=(const Repo&) = delete;
  git_repository* get() const { return repo_; }

 private:
  git_repository* repo_ = nullptr;
};

void check(int rc, const std::string& what) {
  if (rc != 0) {
    const git_error* e = git_error_last();
    throw std::runtime_error(what + ": " + (e != nullptr ? e->message : "?"));
  }
}

std::string hex(const git_oid& oid) {
  char out[GIT_OID_HEXSZ + 1];
  git_oid_tostr(out, sizeof out, &oid);
  return out;
}

git_oid from_hex(const std::string& hex_id) {
  git_oid oid;
  check(git_oid_fromstr(&oid, hex_id.c_str()), "bad object id " + hex_id);
  return oid;
}

std::string write_raw(const Repo& repo, std::string_view data, git_object_t type) {
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo.get()), "cannot open the object database");
  git_oid oid;
  int rc = git_odb_write(&oid, odb, data.data(), data.size(), type);
  git_odb_free(odb);
  check(rc, "cannot write an object");
  return hex(oid);
}

std::string raw_tree(const Repo& repo, const std::vector<RawEntry>& entries) {
  std::string raw;
  for (const RawEntry& e : entries) {
    git_oid oid = from_hex(e.oid);
    raw += e.mode + " " + e.name;
    raw += '\0';
    raw.append(reinterpret_cast<const char*>(oid.id), GIT_OID_RAWSZ);
  }
  return write_raw(repo, raw, GIT_OBJECT_TREE);
}

}  // namespace

std::string craft_blob(const boost::filesystem::path& git_dir, std::string_view data) {
  Repo repo(git_dir);
  return write_raw(repo, data, GIT_OBJECT_BLOB);
}

std::string craft_tree(const boost::filesystem::path& git_dir,
                       const std::vector<RawEntry>& entries) {
  Repo repo(git_dir);
  return raw_tree(repo, entries);
}

std::string craft_nested_tree(const boost::filesystem::path& git_dir, const std::string& name,
                              std::size_t depth, const std::string& leaf) {
  Repo repo(git_dir);
  std::string tree = leaf;
  for (std::size_t i = 0; i < depth; ++i) tree = raw_tree(repo, {{"40000", name, tree}});
  return tree;
}

std::string craft_commit_on(const boost::filesystem::path& git_dir, const std::string& ref,
                            const std::string& tree, const std::string& checkpoint_id) {
  Repo repo(git_dir);
  git_oid tip;
  check(git_reference_name_to_id(&tip, repo.get(), ref.c_str()), "no ref " + ref);
  git_commit* parent = nullptr;
  check(git_commit_lookup(&parent, repo.get(), &tip), "cannot read " + ref);
  std::string message = git_commit_message(parent);
  const std::string key = "Checkpoint-Id: ";
  if (std::size_t at = message.find(key); at != std::string::npos) {
    std::size_t end = message.find('\n', at);
    message.replace(at + key.size(), end - at - key.size(), checkpoint_id);
  }
  // Written raw: git_commit_create would look the tree up and parse it.
  std::string raw = "tree " + tree + "\nparent " + hex(tip) + "\n";
  const git_signature* author = git_commit_author(parent);
  std::string who = std::string(author->name) + " <" + author->email + "> " +
                    std::to_string(author->when.time) + " +0000\n";
  raw += "author " + who + "committer " + who + "\n" + message;
  git_commit_free(parent);
  std::string commit = write_raw(repo, raw, GIT_OBJECT_COMMIT);
  git_oid commit_oid = from_hex(commit);
  git_reference* out = nullptr;
  check(git_reference_create(&out, repo.get(), ref.c_str(), &commit_oid, 1, "crafted"),
        "cannot move " + ref);
  git_reference_free(out);
  return commit;
}

}  // namespace testing_support
