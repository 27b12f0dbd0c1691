# `make install` and the Debian packages (cpack -G DEB in the build folder), one per role:
#   drover-controller      droverctld and its unit (head nodes)
#   drover-node            droverd, droverstepd and droverd's unit (compute nodes)
#   drover-client          the `drover` command, with Slurm's command names under
#                          /usr/lib/drover/bin, and the auth/slurm broker's unit (login nodes)
#   drover-slurm-commands  Slurm's names (sbatch, squeue, ...) in /usr/bin: the alternative to
#                          Slurm's own client package, which it conflicts with
# The site's configuration stays the site's: /etc/slurm/slurm.conf (and gres.conf, ...) is never
# shipped; /etc/default/droverctld and /etc/default/droverd hold each daemon's options.
include(GNUInstallDirs)

set(DROVER_SLURM_COMMANDS sbatch squeue sinfo sacct scancel sprio sshare scontrol srun salloc
                          sacctmgr sreport sdiag sstat)
set(DROVER_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "Where the systemd units are installed, under the install prefix's root")

if(DROVER_DAEMONS)
  install(TARGETS droverctld RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT controller)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/droverctld.service
          DESTINATION ${DROVER_SYSTEMD_UNIT_DIR} COMPONENT controller)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/default/droverctld
          DESTINATION /etc/default COMPONENT controller)
  install(FILES ${PROJECT_SOURCE_DIR}/docs/install.md ${PROJECT_SOURCE_DIR}/docs/configuration.md
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/drover-controller COMPONENT controller)

  # droverd finds droverstepd beside itself.
  install(TARGETS droverd droverstepd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR}
          COMPONENT node)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/droverd.service
          DESTINATION ${DROVER_SYSTEMD_UNIT_DIR} COMPONENT node)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/default/droverd
          DESTINATION /etc/default COMPONENT node)
  install(FILES ${PROJECT_SOURCE_DIR}/README.md
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/drover-node RENAME README COMPONENT node)
endif()

# `drover sim` and `drover restd` run the binaries beside drover.
install(TARGETS drover drover-sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT client)
if(DROVER_DAEMONS)
  install(TARGETS drover-restd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT client)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/drover-client RENAME README COMPONENT client)
if(DROVER_DAEMONS)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/drover-authd.service
                ${PROJECT_SOURCE_DIR}/packaging/systemd/drover-restd.service
          DESTINATION ${DROVER_SYSTEMD_UNIT_DIR} COMPONENT client)
  # Slurm's names: `drover` looks at the name it was run by. Under /usr/lib/drover/bin (put it
  # first in PATH, or install drover-slurm-commands for /usr/bin).
  foreach(command IN LISTS DROVER_SLURM_COMMANDS)
    install(CODE "file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/drover/bin\")
                  file(CREATE_LINK ../../../bin/drover
                       \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/drover/bin/${command}\" SYMBOLIC)"
            COMPONENT client)
    install(CODE "file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
                  file(CREATE_LINK drover
                       \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${command}\" SYMBOLIC)"
            COMPONENT slurm-commands)
  endforeach()
endif()

set(CPACK_PACKAGE_NAME drover)
set(CPACK_PACKAGE_VENDOR "Drover")
set(CPACK_PACKAGE_CONTACT "Drover <drover@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Workload manager for GPU clusters, Slurm-compatible")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL client slurm-commands)
if(DROVER_DAEMONS)
  list(APPEND CPACK_COMPONENTS_ALL controller node)
endif()
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_NAME drover-controller)
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_DEPENDS "drover-client (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_SUGGESTS "postgresql, munge")
set(CPACK_COMPONENT_CONTROLLER_DESCRIPTION
    "Drover controller (droverctld)\n The queue, the scheduler and the state, in SQLite or PostgreSQL; several head nodes fail over.")
set(CPACK_DEBIAN_NODE_PACKAGE_NAME drover-node)
set(CPACK_DEBIAN_NODE_PACKAGE_DEPENDS "drover-client (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_NODE_PACKAGE_SUGGESTS "munge")
set(CPACK_COMPONENT_NODE_DESCRIPTION
    "Drover node agent (droverd, droverstepd)\n Runs the jobs of a compute node in cgroups of their own.")
set(CPACK_DEBIAN_CLIENT_PACKAGE_NAME drover-client)
set(CPACK_COMPONENT_CLIENT_DESCRIPTION
    "Drover commands\n sbatch, srun, squeue, sinfo, scancel, scontrol, sacct, sacctmgr and more, as `drover COMMAND` and under /usr/lib/drover/bin.")
set(CPACK_DEBIAN_SLURM-COMMANDS_PACKAGE_NAME drover-slurm-commands)
set(CPACK_DEBIAN_SLURM-COMMANDS_PACKAGE_DEPENDS "drover-client (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_SLURM-COMMANDS_PACKAGE_CONFLICTS "slurm-client")
set(CPACK_DEBIAN_SLURM-COMMANDS_PACKAGE_ARCHITECTURE all)
set(CPACK_COMPONENT_SLURM-COMMANDS_DESCRIPTION
    "Drover's commands under Slurm's names in /usr/bin\n sbatch, squeue, ... as Slurm's client package installs them.")
include(CPack)

if(DROVER_TESTS AND DROVER_DAEMONS)
  # Builds the packages from this build folder, installs them into a temporary root and verifies
  # their units (tests/packaging/package_test.sh); skipped when dpkg or systemd-analyze is missing.
  add_test(NAME packaging.debs
           COMMAND ${PROJECT_SOURCE_DIR}/tests/packaging/package_test.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(packaging.debs PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
