#include "support/models.h"

#include <gtest/gtest.h>

namespace trainmem::testing_support {

LoadedModel load_or_fail(const std::string& ref) {
  auto m = load_model(ref);
  EXPECT_TRUE(m.ok()) << ref << ": " << (m.ok() ? "" : m.error().message());
  return m.ok() ? m.value() : LoadedModel{};
}

LoadedModel validation_model(const std::string& name) {
  return load_or_fail(std::string(TRAINMEM_SOURCE_DIR) + "/validation/configs/" + name + ".json");
}

}  // namespace trainmem::testing_support
