// The worked queries of docs/schema.md: each ```sql block, named by its first line (`-- check: NAME`).
// tests/store/schema_doc_test.cc checks each one's answer against the dumps on SQLite, and
// tests/postgres/schema_doc_postgres_test.cc that PostgreSQL answers the same.
#ifndef XLADB_TESTS_STORE_SCHEMA_DOC_BLOCKS_H_
#define XLADB_TESTS_STORE_SCHEMA_DOC_BLOCKS_H_

#include <fstream>
#include <map>
#include <string>

namespace xladb::testing {

// name -> SQL, from the ```sql blocks of a Markdown page; a block without a name is "unnamed-N".
inline std::map<std::string, std::string> SqlBlocks(const std::string& markdown_path) {
  std::ifstream in(markdown_path);
  std::map<std::string, std::string> blocks;
  std::string line, current, name;
  bool inside = false;
  int unnamed = 0;
  while (std::getline(in, line)) {
    if (!inside && line == "```sql") {
      inside = true;
      current.clear();
      name.clear();
    } else if (inside && line == "```") {
      inside = false;
      blocks[name.empty() ? "unnamed-" + std::to_string(++unnamed) : name] = current;
    } else if (inside) {
      if (current.empty() && line.rfind("-- check: ", 0) == 0) name = line.substr(10);
      current += line + "\n";
    }
  }
  return blocks;
}

inline std::map<std::string, std::string> SchemaDocSqlBlocks() {
  return SqlBlocks(std::string(XLADB_TEST_DATA_DIR) + "/../../docs/schema.md");
}

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_SCHEMA_DOC_BLOCKS_H_
