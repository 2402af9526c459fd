#include "store/schema/module_rekey.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingest/records/ingest_target.h"
#include "ingest/text/entry_sharding.h"
#include "ingest/text/hlo_instruction_text.h"
#include "ingest/source/run_name.h"
#include "store/backend/row_binding.h"
#include "store/facts/module_facts.h"
#include "store/facts/shape_text.h"

namespace xladb::store {
namespace {

struct ListedModule {
  int64_t module_id = 0, run_id = 0;
  std::optional<int64_t> xla_module_id;
  std::string name, stage, folder;
  std::string entry_computation;  // the stored ENTRY computation's name, "" when none
};

// The re-key's statements, prepared once for every listed module.
struct RekeyStatements {
  explicit RekeyStatements(SqlConnection& sql)
      : taken(sql.Prepare("SELECT 1 FROM modules WHERE run_id = ? AND name = ? AND stage = ? "
                          "AND COALESCE(xla_module_id, -1) = ? AND folder = ? AND module_id <> ?")),
        move(sql.Prepare("UPDATE modules SET name = ?, folder = ? WHERE module_id = ?")),
        entry(sql.Prepare(
            "SELECT i.is_root, s.text, t.text FROM instructions i "
            "JOIN names cn ON cn.name_id = i.computation_id "
            "JOIN computations c ON c.module_id = i.module_id AND c.name = cn.text AND c.is_entry = 1 "
            "LEFT JOIN shapes s ON s.shape_id = i.shape_id LEFT JOIN long_text_details t ON t.text_id = i.text_id "
            "WHERE i.module_id = ? AND (i.opcode = 'parameter' OR i.is_root = 1)")),
        set_entry(sql.Prepare("UPDATE modules SET hlo_entry_sharding = ?, "
                              "hlo_entry_signature = COALESCE(hlo_entry_signature, ?) WHERE module_id = ?")) {}
  std::unique_ptr<SqlStatement> taken, move, entry, set_entry;
};

// Moves `m` to (name, folder) unless another row of its run has that key; true when it moved.
bool MoveIfFree(RekeyStatements& st, const ListedModule& m, const std::string& name, const std::string& folder) {
  SqlStatement* taken = st.taken.get();
  BindRow(*taken, m.run_id, name, m.stage, m.xla_module_id.value_or(-1), folder, m.module_id);
  const bool collides = taken->Step();
  taken->Reset();
  if (collides) return false;  // keep the old key (see the header)
  SqlStatement* move = st.move.get();
  BindRow(*move, name, folder, m.module_id);
  move->Execute();
  return true;
}

// What a module's ENTRY line and instructions print, read back from its stored ENTRY parameter and ROOT
// instructions (their whole printed text, ingest/text/hlo_instruction_text.h) for a store written before
// version 7, which did not keep them:
//   * signature: the parameters' shapes by number and the ROOT's shape, in the store's form
//     (StoredEntrySignature), the shapes the ENTRY line prints (dumps up to 2020 have no
//     entry_computation_layout); "" when a shape or a parameter number is missing;
//   * sharding: ingest::EntrySharding's text, as ingest now computes it.
// has_text is false when the module has no stored ENTRY instruction.
struct StoredEntry {
  bool has_text = false;
  std::string signature, sharding;
};

StoredEntry ReadStoredEntry(RekeyStatements& st, int64_t module_id) {
  SqlStatement* q = st.entry.get();
  q->Bind(1, module_id);
  StoredEntry entry;
  ingest::EntrySharding sharding;
  std::map<int64_t, std::string> parameters;
  std::optional<std::string> root;
  bool complete = true;
  while (q->Step()) {
    entry.has_text = true;
    const std::string text = q->Text(2);
    std::optional<ingest::HloInstructionPieces> pieces = ingest::SplitHloInstructionText(text);
    if (!pieces || q->IsNull(1)) {
      complete = false;
      continue;
    }
    pieces->is_root = q->Int(0) == 1;  // the stored text has no "ROOT "
    sharding.Add(*pieces);
    if (pieces->is_root) root = q->Text(1);
    const std::optional<int64_t> number = ingest::ParameterNumber(*pieces);
    if (number && !parameters.emplace(*number, q->Text(1)).second) complete = false;
  }
  q->Reset();
  entry.sharding = sharding.Text();
  if (!complete || !root) return entry;
  std::string printed = "(";
  int64_t expected = 0;
  for (const auto& [number, shape] : parameters) {
    if (number != expected++) return entry;  // a gap: not every parameter was stored
    printed += (number > 0 ? ", " : "") + shape;
  }
  entry.signature = StoredEntrySignature(printed + ")->" + *root);
  return entry;
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
  RekeyStatements st(sql);
  for (const ListedModule& m : listed) {
    const bool placeholder = m.xla_module_id && m.name == ingest::PlaceholderModuleName(*m.xla_module_id);
    const std::string name = placeholder && !m.entry_computation.empty() ? m.entry_computation : m.name;
    const std::string folder = ingest::ModuleFolderBelowDumpRoot(m.folder);
    if (name != m.name || folder != m.folder) {
      // Each part alone where both together collide: a shorter folder does not depend on the name.
      if (!MoveIfFree(st, m, name, folder) && folder != m.folder) MoveIfFree(st, m, m.name, folder);
    }
    if (m.entry_computation.empty()) continue;
    const StoredEntry entry = ReadStoredEntry(st, m.module_id);
    if (!entry.has_text) continue;
    SqlStatement* set = st.set_entry.get();
    BindRow(*set, entry.sharding, NonEmpty(entry.signature), m.module_id);
    set->Execute();
  }
  // Then the identities, once every module's shardings are in: a module takes its before_optimizations
  // sibling's (store/facts/module_facts.h).
  for (const ListedModule& m : listed) facts.UpdateIdentity(m.module_id);
  sql.Exec("DROP TABLE modules_to_rekey");
}

}  // namespace xladb::store
