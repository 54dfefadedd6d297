# Debian's libstxxl-dev ships headers and a shared library but no CMake
# package; this module wraps them in the imported target STXXL::stxxl.
# STXXL's parallel parts are compiled with OpenMP, so the target carries it.
find_path(STXXL_INCLUDE_DIR stxxl/io PATHS /usr/include /usr/local/include)
find_library(STXXL_LIBRARY NAMES stxxl)
find_package(OpenMP REQUIRED COMPONENTS CXX)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(STXXL REQUIRED_VARS STXXL_INCLUDE_DIR STXXL_LIBRARY)
if(STXXL_FOUND AND NOT TARGET STXXL::stxxl)
  add_library(STXXL::stxxl UNKNOWN IMPORTED)
  set_target_properties(STXXL::stxxl PROPERTIES
    IMPORTED_LOCATION "${STXXL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${STXXL_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES OpenMP::OpenMP_CXX)
endif()
