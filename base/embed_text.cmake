# Turns a text file (INPUT) into a C++ raw string named NAME (OUTPUT) in namespace NAMESPACE (default
# xladb::store), so binaries carry their schema (store/) and their page assets (service/pages/).
file(READ ${INPUT} TEXT)
get_filename_component(SOURCE_NAME ${INPUT} NAME)
if(NOT NAMESPACE)
  set(NAMESPACE xladb::store)
endif()
file(WRITE ${OUTPUT} "// Generated from ${SOURCE_NAME}. Do not edit.\nnamespace ${NAMESPACE} {\nextern const char ${NAME}[] = R\"xladb_text(${TEXT})xladb_text\";\n}  // namespace ${NAMESPACE}\n")
