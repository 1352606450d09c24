# ddpbench_topo: the topology and environment report (issue 4): hwloc scanning and PCIe classes, NVML through
# dlopen, the cluster report, binding near the GPU, `ddpbench topo` and `ddpbench doctor`. Included from the
# top CMakeLists.txt before ddpbench_core, which links it; it must never depend on ddpbench_core. Two symbols
# come from the program that links both: mpi_fail (dist.c, for the MPI gather in topo.c) and versions_collect
# (versions.c, for doctor.c); the pure parts (scan, classes, print, cluster report) need neither.
add_library(ddpbench_topo STATIC
  src/nvml_dl.c src/topo_hw.c src/topo_print.c src/topo_report.c src/topo_bind.c src/envcheck.c src/topo_cli.c
  src/topo.c src/doctor.c src/gpu_diag.c)
target_include_directories(ddpbench_topo PUBLIC src)
target_link_libraries(ddpbench_topo
  PUBLIC ddpbench_common PkgConfig::HWLOC PkgConfig::CJSON MPI::MPI_C ${CMAKE_DL_LIBS}
  PRIVATE ddpbench_options)
