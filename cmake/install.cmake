# What `cmake --install` puts where (GNU directories; --prefix moves them all):
#   component shadowbox: the two executables, the example configuration and the notes a
#     package carries (cli/CMakeLists.txt adds the man pages and shell completions);
#   component dev: the libraries, their public headers and the CMake package
#     (find_package(shadowbox) gives shadowbox::fsnap, ::policy, ::statekit, ::sandbox,
#     ::runs, ::embed, ::fleet, ::hooks; examples/embedding builds against it).
include(CMakePackageConfigHelpers)

install(TARGETS shadowbox shadowbox-hook RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT shadowbox)
install(FILES ${PROJECT_SOURCE_DIR}/config/shadowbox.yaml
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT shadowbox)

set(shadowbox_libraries fsnap policy statekit sandbox runs embed fleet hooks)
# Installed under names of their own (libshadowbox-fsnap.a, include/shadowbox/fsnap/...),
# so that none takes a general name like libpolicy.a or include/hooks/ on the system;
# a program includes them as the tree does: "fsnap/host_filesystem.hpp".
foreach(library ${shadowbox_libraries})
  set_target_properties(${library} PROPERTIES OUTPUT_NAME shadowbox-${library})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${library}/include/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shadowbox COMPONENT dev)
endforeach()
install(TARGETS ${shadowbox_libraries} EXPORT shadowboxTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shadowbox)
# What a package maintainer's tools do to a -dev package's static libraries (dh_strip):
# no debugging sections, no timestamps — when the install strips (cpack, --strip).
foreach(library ${shadowbox_libraries})
  install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug --remove-section=.comment
                              --remove-section=.note --enable-deterministic-archives
                              \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:${library}>\"
                      COMMAND_ERROR_IS_FATAL ANY)
    endif()" COMPONENT dev)
endforeach()

set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/shadowbox)
install(EXPORT shadowboxTargets NAMESPACE shadowbox:: DESTINATION ${package_dir}
        COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/shadowboxConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/shadowboxConfig.cmake
                              INSTALL_DESTINATION ${package_dir})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/shadowboxConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/shadowboxConfig.cmake
              ${PROJECT_BINARY_DIR}/shadowboxConfigVersion.cmake
        DESTINATION ${package_dir} COMPONENT dev)
