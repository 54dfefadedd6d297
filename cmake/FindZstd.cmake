# Debian's libzstd-dev ships headers, a shared library and a pkg-config file
# but no CMake package; this module wraps them in the imported target
# Zstd::Zstd and reads the version from zstd.h.
find_path(Zstd_INCLUDE_DIR zstd.h)
find_library(Zstd_LIBRARY NAMES zstd)
if(Zstd_INCLUDE_DIR AND EXISTS "${Zstd_INCLUDE_DIR}/zstd.h")
  file(STRINGS "${Zstd_INCLUDE_DIR}/zstd.h" _zstd_version_lines
       REGEX "^#define ZSTD_VERSION_(MAJOR|MINOR|RELEASE)[ \t]+[0-9]+")
  foreach(_part MAJOR MINOR RELEASE)
    string(REGEX REPLACE ".*#define ZSTD_VERSION_${_part}[ \t]+([0-9]+).*" "\\1" _zstd_${_part}
           "${_zstd_version_lines}")
  endforeach()
  set(Zstd_VERSION "${_zstd_MAJOR}.${_zstd_MINOR}.${_zstd_RELEASE}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Zstd REQUIRED_VARS Zstd_LIBRARY Zstd_INCLUDE_DIR VERSION_VAR Zstd_VERSION)
if(Zstd_FOUND AND NOT TARGET Zstd::Zstd)
  add_library(Zstd::Zstd UNKNOWN IMPORTED)
  set_target_properties(Zstd::Zstd PROPERTIES
    IMPORTED_LOCATION "${Zstd_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Zstd_INCLUDE_DIR}")
endif()
mark_as_advanced(Zstd_INCLUDE_DIR Zstd_LIBRARY)
