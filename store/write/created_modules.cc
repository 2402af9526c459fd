#include "store/write/created_modules.h"

namespace xladb::store {

bool CreatedModules::Kept(const ingest::ModuleKey& key) {
  return !key.name_is_placeholder && key.name.rfind("module_", 0) != 0;
}

std::string CreatedModules::KeyOf(const ingest::ModuleKey& key) {
  std::string k = std::to_string(key.xla_module_id);
  for (const std::string* part : {&key.stage, &key.folder, &key.name}) {
    k.push_back('\0');  // no part holds a NUL
    k += *part;
  }
  return k;
}

CreatedModules::Module* CreatedModules::Find(const ingest::ModuleKey& key) {
  if (!Kept(key)) return nullptr;
  const auto it = modules_.find(KeyOf(key));
  return it == modules_.end() ? nullptr : &it->second;
}

void CreatedModules::Created(const ingest::ModuleKey& key, int64_t module_id) {
  if (!Kept(key)) return;
  std::string k = KeyOf(key);
  modules_[k] = {module_id, key.backend};
  by_file_.push_back(std::move(k));
}

void CreatedModules::Erase(std::vector<std::string>& keys) {
  for (const std::string& k : keys) modules_.erase(k);
  keys.clear();
}

void CreatedModules::FileKept() {
  by_group_.insert(by_group_.end(), by_file_.begin(), by_file_.end());
  by_file_.clear();
}

void CreatedModules::FileRolledBack() { Erase(by_file_); }

void CreatedModules::GroupCommitted() {
  FileKept();
  by_group_.clear();
}

void CreatedModules::GroupRolledBack() {
  Erase(by_file_);
  Erase(by_group_);
}

void CreatedModules::Forget() {
  modules_.clear();
  by_file_.clear();
  by_group_.clear();
}

}  // namespace xladb::store
