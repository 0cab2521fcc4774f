# API reference: `make docs` (or the docs target) renders every header under include/ with Doxygen into
# <build>/docs/html; any Doxygen warning fails it. The headers keep plain C comments: cmake/doxygen_filter.py
# turns them into Doxygen comments as Doxygen reads each file. That every public function has its contract
# comment is the test api.contracts (tests/package/public_api.py).
find_program(DOXYGEN_EXECUTABLE doxygen)
if(DOXYGEN_EXECUTABLE)
  find_program(PYTHON3_FOR_DOCS python3 REQUIRED)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/docs)
  configure_file(cmake/Doxyfile.in ${CMAKE_BINARY_DIR}/Doxyfile @ONLY)
  add_custom_target(docs COMMAND ${DOXYGEN_EXECUTABLE} ${CMAKE_BINARY_DIR}/Doxyfile
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR} COMMENT "Doxygen: ${CMAKE_BINARY_DIR}/docs/html/index.html" VERBATIM)
endif()
