# SPDX-License-Identifier: MIT
# Install rules (`cmake --install`, `make install`; docs/install.md): the two binaries, the
# SPANK plugin into Slurm's plugin directory, the systemd unit, man pages and the docs.
include(GNUInstallDirs)

install(TARGETS ecosched ecoschedd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Slurm loads SPANK plugins by the path plugstack.conf names; its own plugin directory is the
# conventional place: ${libdir}/slurm for a Slurm built from source (slurm.pc), Debian's
# /usr/lib/<multiarch>/slurm-wlm otherwise.
if(TARGET ecosched-spank)
  set(eco_plugin_default "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/slurm-wlm")
  if(NOT CMAKE_LIBRARY_ARCHITECTURE)
    set(eco_plugin_default "/usr/lib/slurm")
  endif()
  pkg_check_modules(SLURM_PC QUIET slurm)
  if(SLURM_PC_FOUND)
    pkg_get_variable(eco_slurm_libdir slurm libdir)
    if(eco_slurm_libdir)
      set(eco_plugin_default "${eco_slurm_libdir}/slurm")
    endif()
  endif()
  set(ECO_SLURM_PLUGIN_DIR "${eco_plugin_default}" CACHE PATH
      "directory the SPANK plugin ecosched.so is installed into (Slurm's plugin directory)")
  install(TARGETS ecosched-spank LIBRARY DESTINATION ${ECO_SLURM_PLUGIN_DIR})
endif()

# systemd reads units from ${prefix}/lib/systemd/system for /usr and /usr/local alike.
set(ECO_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE PATH
    "directory of the systemd units ecoschedd.service and ecosched-powerd.service (relative: under the install prefix)")
set(ECO_INSTALL_BINDIR "${CMAKE_INSTALL_FULL_BINDIR}")
set(ECO_INSTALL_DOCDIR "${CMAKE_INSTALL_FULL_DOCDIR}")
configure_file(${CMAKE_SOURCE_DIR}/contrib/ecoschedd.service.in
               ${CMAKE_BINARY_DIR}/ecoschedd.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ecoschedd.service DESTINATION ${ECO_SYSTEMD_UNIT_DIR})
# the controller's unit (docs/slurm/deploy.md), beside the node daemon's
configure_file(${CMAKE_SOURCE_DIR}/contrib/ecosched-powerd.service.in
               ${CMAKE_BINARY_DIR}/ecosched-powerd.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ecosched-powerd.service DESTINATION ${ECO_SYSTEMD_UNIT_DIR})

install(FILES ${CMAKE_SOURCE_DIR}/docs/man/ecosched.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/docs/man/ecoschedd.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)

# The docs keep the repository's layout, so that README.md's links into docs/ still work.
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs DESTINATION ${CMAKE_INSTALL_DOCDIR}
        PATTERN man EXCLUDE)
