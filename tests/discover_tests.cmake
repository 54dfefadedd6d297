# Run by ctest (a TEST_INCLUDE_FILES script of tests/CMakeLists.txt,
# extshuffle_test_room): one ctest test per GoogleTest test of a room's
# executable, with the labels of the file it comes from. Nothing is run here:
# the build wrote the executable's listing of test and file
# (--list_test_sources=, a POST_BUILD step), so a loaded machine cannot make
# this step time out, as running each executable at ctest time
# (gtest_discover_tests' PRE_TEST mode) did.
# In: `target`, `executable` (the room's), `file_labels` (a list of
# <stem>=<label>,... for every file of the room), `sources` (the listing) and
# `working_directory` and `cmake_command`.
if(NOT EXISTS "${executable}" OR NOT EXISTS "${sources}" OR "${executable}" IS_NEWER_THAN "${sources}")
  # Not built, or its listing failed: one test that fails, saying so.
  add_test("${target}_NOT_BUILT" "${target}_NOT_BUILT")
  return()
endif()

foreach(entry IN LISTS file_labels)
  if(entry MATCHES "^([^=]+)=(.*)$")
    string(REPLACE "," ";" "labels_of_${CMAKE_MATCH_1}" "${CMAKE_MATCH_2}")
  endif()
endforeach()
file(STRINGS "${sources}" lines)
set(undeclared "")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^([^\t]+)\t(.+)$")
    continue()
  endif()
  set(stem "${CMAKE_MATCH_1}")
  set(name "${CMAKE_MATCH_2}")
  if(NOT DEFINED "labels_of_${stem}")
    list(APPEND undeclared "${stem}")
    continue()
  endif()
  # As gtest_discover_tests names and runs them: the test's full name, run
  # alone; a skipped test is reported as skipped.
  add_test("${name}" "${executable}" "--gtest_filter=${name}" --gtest_also_run_disabled_tests)
  set_tests_properties("${name}" PROPERTIES WORKING_DIRECTORY "${working_directory}"
                       SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" ENVIRONMENT OMP_WAIT_POLICY=passive
                       LABELS "${labels_of_${stem}}")
  if(name MATCHES "(^|[./])DISABLED_")
    set_tests_properties("${name}" PROPERTIES DISABLED TRUE)
  endif()
endforeach()
if(undeclared)
  # Tests of a file that no extshuffle_test line declares: a test that fails,
  # naming them, rather than tests without labels.
  list(REMOVE_DUPLICATES undeclared)
  add_test("${target}_UNDECLARED_FILES" "${cmake_command}" -E echo
           "${executable} holds tests of ${undeclared}, which no extshuffle_test line of tests/ declares")
  set_tests_properties("${target}_UNDECLARED_FILES" PROPERTIES WILL_FAIL TRUE)
endif()
