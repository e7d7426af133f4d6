// Errors as values. Created at the edges (parsing files and plans); the core after validate() has
// no error paths. Each front end maps them: the command line to a message naming its flag and an
// exit code, Python to an exception, the web page to a message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace trainmem {

enum class ErrorCode {
  bad_input,  // a file or value is malformed, missing or nonsensical
  usage,      // the request itself is malformed (a front end's own parsing)
  not_found,  // a model, preset or device name that is not known
};

struct Error {
  ErrorCode code = ErrorCode::bad_input;
  std::string file;  // the file the bad input came from; empty for flags
  // The field: a JSON path in `file` ("num_hidden_layers"), or a plan field ("lora.rank", "batch",
  // "device") when `file` is empty.
  std::string field;
  std::string reason;  // what is wrong, in words a user can act on

  // "FILE: FIELD: REASON", omitting empty parts.
  std::string message() const;
};

Error bad_input(std::string file, std::string field, std::string reason);

// For "did you mean" in a front end's errors: the name in `names` nearest to `word` by edit
// distance (Levenshtein), if it is fewer than `below` edits away; empty otherwise.
std::string nearest_name(std::string_view word, const std::vector<std::string>& names,
                         std::size_t below);

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(state_); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace trainmem
