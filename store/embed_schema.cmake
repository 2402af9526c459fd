# Turns a .sql file (INPUT) into a C++ raw string named NAME (OUTPUT), so binaries carry their schema.
file(READ ${INPUT} SQL)
get_filename_component(SOURCE_NAME ${INPUT} NAME)
file(WRITE ${OUTPUT} "// Generated from store/${SOURCE_NAME}. Do not edit.\nnamespace xladb::store {\nextern const char ${NAME}[] = R\"xladb_schema(${SQL})xladb_schema\";\n}  // namespace xladb::store\n")
