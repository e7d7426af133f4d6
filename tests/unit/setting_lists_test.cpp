// Which plan settings take a list (setting_takes_list): the importer refuses a list for the rest.
#include <gtest/gtest.h>

#include "trainmem/plan.h"

namespace trainmem {
namespace {

TEST(SettingLists, OnlyModuleAndLayerSelectionsTakeLists) {
  for (const char* key : {"lora_targets", "modules_to_save", "train_modules", "train_layers"}) {
    EXPECT_TRUE(setting_takes_list(key)) << key;
  }
  int lists = 0;
  for (const std::string& key : plan_setting_keys()) lists += setting_takes_list(key) ? 1 : 0;
  EXPECT_EQ(lists, 4);  // batch, seq, precision, ... take one value
  EXPECT_FALSE(setting_takes_list("batch"));
  EXPECT_FALSE(setting_takes_list("model"));
}

}  // namespace
}  // namespace trainmem
