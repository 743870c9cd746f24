# Installation: the libraries, their public headers (one prefix each: ssd/reference, ssd/harness,
# ssd/golden, and the ABI's ssd/kernel_abi.h), the kernel libraries in <libdir>/ssd-kernels, the
# command-line tools, and a CMake package so that another project can find_package(ssd).
include(CMakePackageConfigHelpers)

install(TARGETS ssd_reference ssd_kernel_abi ssd_harness ssd_golden ssd_hdf5 ssd_warnings
        EXPORT ssdTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY reference/include/ gpu/include/ fuzz/harness/include/ golden/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
get_property(ssd_kernel_libraries GLOBAL PROPERTY SSD_KERNEL_LIBRARIES)
install(TARGETS ${ssd_kernel_libraries} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ssd-kernels)
install(TARGETS ssd-suite ssd-selfcheck ssd-golden ssd-fuzz ssd-kernel-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The C API: a self-contained shared library and its one header (no CMake export: it links the
# suite's static libraries privately, so C callers and Python's ctypes need only the .so).
install(TARGETS ssd_capi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES tools/capi/include/ssd/capi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ssd)

set(ssd_config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ssd)
install(EXPORT ssdTargets NAMESPACE ssd:: DESTINATION ${ssd_config_dir})
set(SSD_INSTALL_KERNEL_DIR_RELATIVE ${CMAKE_INSTALL_LIBDIR}/ssd-kernels)
configure_package_config_file(cmake/ssdConfig.cmake.in ${PROJECT_BINARY_DIR}/ssdConfig.cmake
                              INSTALL_DESTINATION ${ssd_config_dir}
                              PATH_VARS SSD_INSTALL_KERNEL_DIR_RELATIVE)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ssdConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ssdConfig.cmake ${PROJECT_BINARY_DIR}/ssdConfigVersion.cmake
        DESTINATION ${ssd_config_dir})
