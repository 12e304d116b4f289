#include "shell_words.hpp"

#include <cstring>

namespace hooks {

namespace {

// Characters a shell takes literally outside quotes, wherever they are in a word. ('='
// is one: a program's path names no variable, so no word here assigns one.)
bool literal(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != '\0' && std::strchr("_-./:=@%+,", c) != nullptr);
}

}  // namespace

std::optional<std::vector<std::string>> plain_shell_words(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      std::size_t close = command.find('\'', i + 1);
      if (close == std::string::npos) return std::nullopt;
      word.append(command, i + 1, close - i - 1);
      i = close;
      in_word = true;
    } else if (c == '"') {
      // Inside "...", $, ` and \ keep a meaning: not plain.
      std::size_t close = command.find_first_of("\"$`\\", i + 1);
      if (close == std::string::npos || command[close] != '"') return std::nullopt;
      word.append(command, i + 1, close - i - 1);
      i = close;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= command.size() || command[i + 1] == '\n') return std::nullopt;
      word += command[++i];
      in_word = true;
    } else if (literal(c)) {
      word += c;
      in_word = true;
    } else {
      return std::nullopt;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace hooks
