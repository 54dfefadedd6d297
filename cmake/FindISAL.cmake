# Debian's libisal-dev (Intel ISA-L: CRC-32C for TFRecord frames, igzip for
# .gz streams) ships headers, a shared library and a pkg-config file but no
# CMake package; this module wraps them in the imported target ISAL::ISAL and
# reads the version from isa-l.h.
find_path(ISAL_INCLUDE_DIR isa-l/crc.h)
find_library(ISAL_LIBRARY NAMES isal)
if(ISAL_INCLUDE_DIR AND EXISTS "${ISAL_INCLUDE_DIR}/isa-l.h")
  file(STRINGS "${ISAL_INCLUDE_DIR}/isa-l.h" _isal_version_lines
       REGEX "^#define ISAL_(MAJOR|MINOR|PATCH)_VERSION[ \t]+[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define ISAL_${_part}_VERSION[ \t]+([0-9]+).*" "\\1" _isal_${_part}
           "${_isal_version_lines}")
  endforeach()
  set(ISAL_VERSION "${_isal_MAJOR}.${_isal_MINOR}.${_isal_PATCH}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ISAL REQUIRED_VARS ISAL_LIBRARY ISAL_INCLUDE_DIR VERSION_VAR ISAL_VERSION)
if(ISAL_FOUND AND NOT TARGET ISAL::ISAL)
  add_library(ISAL::ISAL UNKNOWN IMPORTED)
  set_target_properties(ISAL::ISAL PROPERTIES
    IMPORTED_LOCATION "${ISAL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ISAL_INCLUDE_DIR}")
endif()
mark_as_advanced(ISAL_INCLUDE_DIR ISAL_LIBRARY)
