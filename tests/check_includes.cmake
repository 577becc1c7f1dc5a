# The layering the design promises, checked on the sources (cmake -P, no compiler needed):
#   - CUPTI and nvperf headers only in roofline_profiler (lib/gpu/range_profiler.cpp,
#     lib/gpu/cupti/) and the injection library (lib/inject/);
#   - lib/core includes no CUDA header and nothing from lib/gpu, lib/inject or app; of kernels/
#     only the plain catalogue and decode plan (kernels/catalog.hpp, kernels/decode_plan.hpp,
#     themselves free of CUDA headers);
#   - lib/ includes nothing from app/;
#   - lib/core's feature folders include only themselves and the folders before them, in the
#     order base, domain, model, report, verdict, compare, writers, chart (lib/core/CMakeLists.txt
#     says what each holds), and nothing from lib/profile.
# Usage: cmake -DSOURCE_DIR=<repository root> -P check_includes.cmake
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_includes: SOURCE_DIR not set")
endif()

set(failures "")
# check_files(FILES PATTERN ALLOWED_FILES ALLOWED_LINES WHY): every line of FILES matching
# PATTERN is a failure, except in files whose path matches ALLOWED_FILES or lines matching
# ALLOWED_LINES (either may be empty).
function(check_files files pattern allowed_files allowed_lines why)
  set(out ${failures})
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
    if(NOT allowed_files STREQUAL "" AND rel MATCHES "${allowed_files}")
      continue()
    endif()
    file(STRINGS "${file}" hits REGEX "${pattern}")
    foreach(hit IN LISTS hits)
      if(NOT allowed_lines STREQUAL "" AND hit MATCHES "${allowed_lines}")
        continue()
      endif()
      string(STRIP "${hit}" hit)
      list(APPEND out "${rel}: ${hit} (${why})")
    endforeach()
  endforeach()
  set(failures ${out} PARENT_SCOPE)
endfunction()

set(include "^[ \t]*#[ \t]*include[ \t]*")
file(GLOB_RECURSE all_sources "${SOURCE_DIR}/lib/*" "${SOURCE_DIR}/app/*" "${SOURCE_DIR}/kernels/*"
     "${SOURCE_DIR}/tests/*")
list(FILTER all_sources INCLUDE REGEX "\\.(cpp|hpp|cu|cuh)$")
check_files("${all_sources}" "${include}<(cupti|nvperf)"
            "^(lib/gpu/range_profiler[.]cpp|lib/gpu/cupti/|lib/inject/)" ""
            "CUPTI belongs to roofline_profiler and lib/inject")

file(GLOB_RECURSE core_sources "${SOURCE_DIR}/lib/core/*.cpp" "${SOURCE_DIR}/lib/core/*.hpp"
     "${SOURCE_DIR}/kernels/catalog.hpp" "${SOURCE_DIR}/kernels/decode_plan.hpp")
check_files("${core_sources}" "${include}<(cuda|cupti|nvperf|cublas|nvtx)" "" ""
            "lib/core builds without CUDA")
check_files("${core_sources}" "${include}\"(lib/gpu|lib/inject|app)/" "" ""
            "lib/core is the bottom layer")
check_files("${core_sources}" "${include}\"kernels/" "" "\"kernels/(catalog|decode_plan)[.]hpp\""
            "of kernels/, lib/core includes only catalog.hpp and decode_plan.hpp")

file(GLOB_RECURSE lib_sources "${SOURCE_DIR}/lib/*.cpp" "${SOURCE_DIR}/lib/*.hpp"
     "${SOURCE_DIR}/lib/*.cu")
check_files("${lib_sources}" "${include}\"app/" "" "" "lib/ never includes app/")

set(core_order base domain model report verdict compare writers chart)
set(later "${core_order}")
foreach(folder IN LISTS core_order)
  list(REMOVE_AT later 0)
  file(GLOB_RECURSE folder_sources "${SOURCE_DIR}/lib/core/${folder}/*.cpp"
       "${SOURCE_DIR}/lib/core/${folder}/*.hpp")
  if(later)
    list(JOIN later "|" later_pattern)
    check_files("${folder_sources}" "${include}\"lib/core/(${later_pattern})/" "" ""
                "lib/core/${folder} comes before lib/core/{${later_pattern}}")
  endif()
  check_files("${folder_sources}" "${include}\"lib/profile/" "" ""
              "lib/core comes before lib/profile")
endforeach()
file(GLOB core_loose "${SOURCE_DIR}/lib/core/*.cpp" "${SOURCE_DIR}/lib/core/*.hpp")
foreach(file IN LISTS core_loose)
  file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
  list(APPEND failures "${rel}: outside lib/core's feature folders")
endforeach()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "include layering broken:\n  ${text}")
endif()
message(STATUS "include layering: ok")
