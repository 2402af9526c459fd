#include "store/module_rekey.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingest/run_name.h"
#include "store/module_facts.h"

namespace xladb::store {
namespace {

struct ListedModule {
  int64_t module_id = 0, run_id = 0;
  std::optional<int64_t> xla_module_id;
  std::string name, stage, folder;
  std::string entry_computation;  // the stored ENTRY computation's name, "" when none
};

// Moves `m` to (name, folder) unless another row of its run has that key; true when it moved.
bool MoveIfFree(SqlConnection& sql, const ListedModule& m, const std::string& name, const std::string& folder) {
  auto taken = sql.Prepare("SELECT 1 FROM modules WHERE run_id = ? AND name = ? AND stage = ? "
                           "AND COALESCE(xla_module_id, -1) = ? AND folder = ? AND module_id <> ?");
  taken->Bind(1, m.run_id);
  taken->Bind(2, name);
  taken->Bind(3, m.stage);
  taken->Bind(4, m.xla_module_id.value_or(-1));
  taken->Bind(5, folder);
  taken->Bind(6, m.module_id);
  const bool collides = taken->Step();
  taken->Reset();
  if (collides) return false;  // keep the old key (see the header)
  auto move = sql.Prepare("UPDATE modules SET name = ?, folder = ? WHERE module_id = ?");
  move->Bind(1, name);
  move->Bind(2, folder);
  move->Bind(3, m.module_id);
  move->Execute();
  return true;
}

}  // namespace

void RekeyListedModules(SqlConnection& sql) {
  std::vector<ListedModule> listed;
  {
    auto q = sql.Prepare(
        "SELECT m.module_id, m.run_id, m.xla_module_id, m.name, m.stage, m.folder, "
        "       (SELECT MIN(c.name) FROM computations c WHERE c.module_id = m.module_id AND c.is_entry = 1) "
        "FROM modules m WHERE m.module_id IN (SELECT module_id FROM modules_to_rekey) ORDER BY m.module_id");
    while (q->Step()) {
      ListedModule m;
      m.module_id = q->Int(0);
      m.run_id = q->Int(1);
      if (!q->IsNull(2)) m.xla_module_id = q->Int(2);
      m.name = q->Text(3);
      m.stage = q->Text(4);
      m.folder = q->Text(5);
      if (!q->IsNull(6)) m.entry_computation = q->Text(6);
      listed.push_back(std::move(m));
    }
  }
  DerivedModuleFacts facts(sql);
  for (const ListedModule& m : listed) {
    const bool placeholder = m.xla_module_id && m.name == "module_" + std::to_string(*m.xla_module_id);
    const std::string name = placeholder && !m.entry_computation.empty() ? m.entry_computation : m.name;
    const std::string folder = ingest::ModuleFolderBelowDumpRoot(m.folder);
    if (name != m.name || folder != m.folder) {
      // Each part alone where both together collide: a shorter folder does not depend on the name.
      if (!MoveIfFree(sql, m, name, folder) && folder != m.folder) MoveIfFree(sql, m, m.name, folder);
    }
    facts.UpdateIdentity(m.module_id);
  }
  sql.Exec("DROP TABLE modules_to_rekey");
}

}  // namespace xladb::store
