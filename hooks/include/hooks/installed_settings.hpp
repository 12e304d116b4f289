// `shadowbox hooks install` and `uninstall` on a settings file, keeping track of what
// install created, so that uninstall takes away what shadowbox added and nothing else:
// a settings file it created goes once nothing but `{}` is left of it, and the .claude
// folder it created once that is empty; a file or folder the user had stays, holding
// everything of theirs. What install created is listed (one real path a line) in
// $XDG_STATE_HOME/shadowbox/created-settings (default ~/.local/state/shadowbox/): the
// user's own state, outside every project, so that a shared settings file carries
// nothing of it.
//
// Thread-safety: plain functions; two installs at once may lose an entry of the list
// (then a file is left as `{}`, never removed wrongly).
#pragma once

#include <optional>
#include <string>

#include <boost/filesystem/path.hpp>

namespace hooks {

// Where the list of created files is, from the environment ($XDG_STATE_HOME, else
// $HOME/.local/state); nullopt if neither is set (nothing is then listed, nor removed).
std::optional<boost::filesystem::path> created_settings_list();

// Installs shadowbox's hooks running command in file (install_hooks_in_file). The file
// and its folder are listed in list if this made them; a file that held no hook of
// shadowbox's before is the user's, and taken off the list.
void install_settings_hooks(const boost::filesystem::path& file, const std::string& command,
                            const std::optional<boost::filesystem::path>& list);

// What uninstall_settings_hooks did.
enum class SettingsRemoval {
  kNoFile,        // there was no settings file
  kHooksRemoved,  // shadowbox's hooks were taken out; the file stays
  kFileRemoved,   // and the file, which install had created, went with them
};

// Removes shadowbox's hooks from file (uninstall_hooks_in_file); then the file itself if
// list holds it and `{}` is all that is left of it, and its folder if list holds it and
// it is empty then.
SettingsRemoval uninstall_settings_hooks(const boost::filesystem::path& file,
                                         const std::optional<boost::filesystem::path>& list);

}  // namespace hooks
