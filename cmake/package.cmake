# Debian packages: `cpack -G DEB` in the build directory (scripts/package.sh does that,
# and checks the result with lintian) makes
#   shadowbox_<version>-<revision>_<arch>.deb         the tool (component shadowbox);
#   libshadowbox-dev_<version>-<revision>_<arch>.deb   the libraries to embed (component dev).
# The version is the project's (project(... VERSION ...)); the tool's dependencies are
# computed from its executables by dpkg-shlibdeps (libgit2, Poco, yaml-cpp,
# Boost.Filesystem and what they need), the libraries' are the -dev packages they
# compile against.
set(SHADOWBOX_PACKAGE_MAINTAINER "shadowbox maintainers <maintainers@users.noreply.a-seed-da5f6a02.example>"
    CACHE STRING "the Maintainer field of the Debian packages")
set(SHADOWBOX_PACKAGE_REVISION "1" CACHE STRING "the Debian revision of the packages")

# What every Debian package carries in /usr/share/doc/<package>/: its copyright and a
# compressed changelog (of the packaging, made from packaging/deb/changelog).
set(deb_changelog ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz)
add_custom_command(OUTPUT ${deb_changelog}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${PROJECT_SOURCE_DIR}/packaging/deb/changelog
          -DOUTPUT=${deb_changelog} -DVERSION=${PROJECT_VERSION}-${SHADOWBOX_PACKAGE_REVISION}
          -P ${PROJECT_SOURCE_DIR}/cmake/write_deb_changelog.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/deb/changelog
          ${PROJECT_SOURCE_DIR}/cmake/write_deb_changelog.cmake
  VERBATIM)
add_custom_target(deb_changelog ALL DEPENDS ${deb_changelog})
foreach(component_package shadowbox:shadowbox dev:libshadowbox-dev)
  string(REPLACE ":" ";" pair ${component_package})
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/deb/copyright ${deb_changelog}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endforeach()

set(CPACK_PACKAGE_NAME shadowbox)
set(CPACK_PACKAGE_VENDOR "shadowbox developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${SHADOWBOX_PACKAGE_MAINTAINER})
set(CPACK_STRIP_FILES TRUE)
set(CPACK_COMPONENTS_ALL shadowbox dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${SHADOWBOX_PACKAGE_REVISION})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${SHADOWBOX_PACKAGE_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

set(CPACK_DEBIAN_SHADOWBOX_PACKAGE_NAME shadowbox)
set(CPACK_DEBIAN_SHADOWBOX_PACKAGE_SHLIBDEPS ON)
# Each description's first line is its synopsis (no CPACK_PACKAGE_DESCRIPTION_SUMMARY,
# which CPack would put before both).
set(CPACK_DEBIAN_SHADOWBOX_DESCRIPTION
    "makes every tool call of a coding agent reversible
Before each tool call of a coding agent (Claude Code, Codex CLI, Gemini
CLI or a Claude Agent SDK application), shadowbox commits the whole
workspace to a shadow git repository kept outside it, never the
workspace's own .git. A failed tool call is rolled back; any run can be
restored to any tool boundary, undone call by call and browsed with
plain git log and git diff. The agent runs with an ephemeral HOME whose
session is preserved, so a run can be resumed or rewound with its
files, and limits on cost, steps, retries and time stop a runaway agent
at a tool boundary.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libshadowbox-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libgit2-dev, libboost-filesystem-dev, libyaml-cpp-dev, libpoco-dev, zlib1g-dev, libssl-dev, pkg-config")
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "shadowbox libraries for embedding reversible tool calls
The static libraries, headers and CMake package (find_package(shadowbox))
of shadowbox: snapshots of a filesystem into a shadow git repository
(fsnap), the transaction core that rolls a failed tool call back with
its session state (sandbox), containment limits (policy), the fleet and
the agent integrations (fleet, hooks), for a C++ program with an agent
loop of its own.")

include(CPack)
