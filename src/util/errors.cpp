#include "trainmem/errors.h"

namespace trainmem {

std::string Error::message() const {
  std::string out;
  for (const std::string* part : {&file, &field}) {
    if (!part->empty()) {
      out += *part;
      out += ": ";
    }
  }
  out += reason;
  return out;
}

Error bad_input(std::string file, std::string field, std::string reason) {
  return Error{ErrorCode::bad_input, std::move(file), std::move(field), std::move(reason)};
}

}  // namespace trainmem
