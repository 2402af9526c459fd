# Turns schema.sql into a C++ raw string (kSchemaSql) so binaries carry their schema.
file(READ ${INPUT} SQL)
file(WRITE ${OUTPUT} "// Generated from store/schema.sql. Do not edit.\nnamespace xladb::store {\nextern const char kSchemaSql[] = R\"xladb_schema(${SQL})xladb_schema\";\n}  // namespace xladb::store\n")
