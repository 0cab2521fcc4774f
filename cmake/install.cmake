# Installing tfc: `cmake --install <build> [--prefix P]` or `make install PREFIX=P`.
# Components (also the Debian packages that `cpack -G DEB` builds, see cmake/cpack.cmake):
#   libtfc      lib/libtfc.so.MAJOR.MINOR.PATCH and its soname link libtfc.so.MAJOR
#   libtfc-dev  include/ (every header under include/, plus the generated tfc/version.h), lib/libtfc.so,
#               lib/libtfc.a, lib/pkgconfig/tfc.pc and tfc-static.pc, lib/cmake/tfc/ (find_package(tfc))
#   tfc-tools   bin/tfc
# Nothing installed holds a path of the build machine: no RUNPATH, and tfc.pc and the CMake package find
# their prefix from where they lie.
include(GNUInstallDirs)
# `cmake --install` and cpack install what is built (`make install` / `make deb` build only the library and the
# command) rather than building every test first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CMakePackageConfigHelpers)

if(SKBUILD)
  # The Python wheel (pyproject.toml): the shared library alone, as tfc/libtfc.so next to the package that loads
  # it (one file: wheels hold no symlinks), without the build tree's RUNPATH.
  set_target_properties(tfc PROPERTIES SKIP_BUILD_RPATH ON)
  set_target_properties(tfc_static tfc_cli PROPERTIES EXCLUDE_FROM_ALL ON)
  install(FILES $<TARGET_FILE:tfc> DESTINATION tfc RENAME libtfc.so COMPONENT python)
  return()
endif()

install(TARGETS tfc EXPORT tfcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT libtfc NAMELINK_COMPONENT libtfc-dev)
set_target_properties(tfc_static PROPERTIES EXPORT_NAME tfc_static)
install(TARGETS tfc_static EXPORT tfcTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT libtfc-dev)
install(TARGETS tfc_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tfc-tools)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/ ${TFC_GENERATED_INCLUDE}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT libtfc-dev FILES_MATCHING PATTERN "*.h")

# CMake package: find_package(tfc) gives tfc::tfc (shared) and tfc::tfc_static.
set(TFC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tfc)
install(EXPORT tfcTargets NAMESPACE tfc:: DESTINATION ${TFC_CMAKE_DIR} COMPONENT libtfc-dev)
configure_package_config_file(cmake/tfcConfig.cmake.in ${CMAKE_BINARY_DIR}/tfcConfig.cmake
  INSTALL_DESTINATION ${TFC_CMAKE_DIR})
# Within a major version the ABI only grows (tests/package/abi_check.sh), so any 0.x/1.x ... of the same major
# satisfies a request for an older one of that major.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tfcConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tfcConfig.cmake ${CMAKE_BINARY_DIR}/tfcConfigVersion.cmake
  cmake/tfcDependencies.cmake DESTINATION ${TFC_CMAKE_DIR} COMPONENT libtfc-dev)

# pkg-config: tfc.pc (shared; Requires.private for `pkg-config --static`), tfc-static.pc (libtfc.a with
# dynamic dependencies). The prefix is found from the .pc file's own folder, except when installing into /usr
# (the Debian packages), chosen at install time since `cmake --install --prefix` may change the prefix.
string(REPLACE ";" " " TFC_PC_REQUIRES "${TFC_PKG_MODULES}")
set(TFC_PC_LIBS_PRIVATE "-ljpeg -lnng -lm -pthread")
file(RELATIVE_PATH rel /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" rel "${rel}")
foreach(variant relocatable usr)
  if(variant STREQUAL "usr")
    set(TFC_PC_PREFIX /usr)
  else()
    set(TFC_PC_PREFIX "\${pcfiledir}/${rel}")
  endif()
  foreach(pc tfc tfc-static)
    configure_file(cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/pkgconfig/${variant}/${pc}.pc @ONLY)
  endforeach()
endforeach()
install(CODE "
  set(variant relocatable)
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(variant usr)
  endif()
  file(INSTALL ${CMAKE_BINARY_DIR}/pkgconfig/\${variant}/tfc.pc ${CMAKE_BINARY_DIR}/pkgconfig/\${variant}/tfc-static.pc
       DESTINATION \${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig)" COMPONENT libtfc-dev)

include(cmake/cpack.cmake)
