# The Debian package (scripts/package.sh builds it): xladb and xladbd in /usr/bin, the docs in
# /usr/share/doc/xladb, the hardened service unit xladbd.service and its options file /etc/default/xladbd.
# Its dependencies are what the binaries link, found by dpkg-shlibdeps; adduser for the service's user.
include(GNUInstallDirs)
install(TARGETS xladb xladbd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
install(DIRECTORY examples/ci DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES scripts/package/xladbd.service DESTINATION lib/systemd/system)
install(FILES scripts/package/xladbd.default DESTINATION /etc/default RENAME xladbd)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME xladb)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "xladb maintainers <xladb@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "XLA compile-time memory across runs: ingest, query, gate")
set(CPACK_PACKAGE_DESCRIPTION
    "xladb reads the text dumps XLA writes with --xla_dump_to (buffer assignments, live ranges, memory-usage
reports, HLO text, libtpu counters) into SQLite or PostgreSQL, answers cross-run questions over gRPC and
HTML pages, and gates CI changes on compile-time memory. xladbd runs as the xladbd systemd service.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)           # xladb_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libpq5 by name: xladb and xladbd load it when a PostgreSQL store is opened (store/postgres/libpq_functions.h),
# so dpkg-shlibdeps, which reads the executables' links, does not see it. 14: pipeline mode.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libpq5 (>= 14)")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/scripts/package/postinst ${PROJECT_SOURCE_DIR}/scripts/package/prerm
    ${PROJECT_SOURCE_DIR}/scripts/package/postrm ${PROJECT_SOURCE_DIR}/scripts/package/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_SOURCE_DIR}/build/package)
include(CPack)
