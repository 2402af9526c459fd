#include "store/module_rekey.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ingest/run_name.h"
#include "store/module_facts.h"
#include "store/shape_text.h"

namespace xladb::store {
namespace {

struct ListedModule {
  int64_t module_id = 0, run_id = 0;
  std::optional<int64_t> xla_module_id;
  std::string name, stage, folder;
  std::string entry_computation;  // the stored ENTRY computation's name, "" when none
  bool has_hlo_signature = false;  // hlo_entry_signature is set
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

// The number N of a stored `… parameter(N)…` instruction text; nullopt when it has none.
std::optional<int64_t> ParameterNumber(const std::string& text) {
  const size_t at = text.find(" parameter(");
  if (at == std::string::npos) return std::nullopt;
  size_t i = at + 11;
  int64_t n = 0;
  const size_t first = i;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) n = n * 10 + (text[i] - '0');
  if (i == first || i >= text.size() || text[i] != ')') return std::nullopt;
  return n;
}

// The ENTRY computation's signature of a module stored without hlo_entry_signature (a header with no
// entry_computation_layout: dumps up to 2020, which a version-6 store did not read from the ENTRY line), from
// the stored entry instructions: the parameters' shapes by number and the ROOT's shape, in the store's form
// (StoredEntrySignature). The same shapes the ENTRY line prints; "" when the module has no such text or a
// parameter's number is missing.
std::string EntrySignatureFromInstructions(SqlConnection& sql, int64_t module_id) {
  auto q = sql.Prepare(
      "SELECT i.opcode, i.is_root, s.text, t.text FROM instructions i "
      "JOIN names cn ON cn.name_id = i.computation_id "
      "JOIN computations c ON c.module_id = i.module_id AND c.name = cn.text AND c.is_entry = 1 "
      "LEFT JOIN shapes s ON s.shape_id = i.shape_id LEFT JOIN long_texts t ON t.text_id = i.text_id "
      "WHERE i.module_id = ? AND (i.opcode = 'parameter' OR i.is_root = 1)");
  q->Bind(1, module_id);
  std::map<int64_t, std::string> parameters;
  std::optional<std::string> root;
  bool complete = true;
  while (q->Step()) {
    if (q->IsNull(2)) complete = false;
    if (q->Int(1) == 1) root = q->Text(2);
    if (q->Text(0) != "parameter") continue;
    const std::optional<int64_t> number = ParameterNumber(q->Text(3));
    if (!number || !parameters.emplace(*number, q->Text(2)).second) complete = false;
  }
  q->Reset();
  if (!complete || !root) return {};
  std::string printed = "(";
  int64_t expected = 0;
  for (const auto& [number, shape] : parameters) {
    if (number != expected++) return {};  // a gap: not every parameter was stored
    printed += (number > 0 ? ", " : "") + shape;
  }
  return StoredEntrySignature(printed + ")->" + *root);
}

}  // namespace

void RekeyListedModules(SqlConnection& sql) {
  std::vector<ListedModule> listed;
  {
    auto q = sql.Prepare(
        "SELECT m.module_id, m.run_id, m.xla_module_id, m.name, m.stage, m.folder, "
        "       (SELECT MIN(c.name) FROM computations c WHERE c.module_id = m.module_id AND c.is_entry = 1), "
        "       CASE WHEN m.hlo_entry_signature IS NULL THEN 0 ELSE 1 END "
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
      m.has_hlo_signature = q->Int(7) != 0;
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
    if (m.entry_computation.empty() || m.has_hlo_signature) {
      facts.UpdateIdentity(m.module_id);
      continue;
    }
    if (const std::string signature = EntrySignatureFromInstructions(sql, m.module_id); !signature.empty()) {
      auto set = sql.Prepare("UPDATE modules SET hlo_entry_signature = ? WHERE module_id = ?");
      set->Bind(1, signature);
      set->Bind(2, m.module_id);
      set->Execute();
    }
    facts.UpdateIdentity(m.module_id);
  }
  sql.Exec("DROP TABLE modules_to_rekey");
}

}  // namespace xladb::store
