# tfc_find_pkg_modules(<out> <REQUIRED|QUIET> module...): finds each pkg-config module as the imported target
# PkgConfig::<NAME> (upper case, a leading "lib" dropped, "-" as "_": libprotobuf-c -> PkgConfig::PROTOBUF_C)
# and appends the targets to <out>. Used by tfc's own build and again by the installed tfcConfig.cmake, which
# recreates the targets the exported static library links. With QUIET, a missing module leaves
# <out>_MISSING set to its name.
function(tfc_find_pkg_modules out mode)
  set(targets ${${out}})
  foreach(mod ${ARGN})
    string(TOUPPER ${mod} var)
    string(REGEX REPLACE "^LIB" "" var ${var})
    string(REPLACE "-" "_" var ${var})
    if(NOT TARGET PkgConfig::${var})
      pkg_check_modules(${var} ${mode} IMPORTED_TARGET ${mod})
      if(NOT ${var}_FOUND)
        set(${out}_MISSING ${mod} PARENT_SCOPE)
        return()
      endif()
    endif()
    list(APPEND targets PkgConfig::${var})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()
