# ddpbench_topo: the topology and environment report (issue 4): hwloc scanning and PCIe classes, NVML through
# dlopen, the cluster report, binding near the GPU, `ddpbench topo` and `ddpbench doctor`. Included from the
# top CMakeLists.txt before ddpbench_core, which links it. An object library: its objects go into
# ddpbench_core itself, because topo.c calls mpi_fail (dist.c) and doctor.c versions_collect (versions.c),
# and two static libraries that need each other are a link-order cycle. Programs link ddpbench_core.
add_library(ddpbench_topo OBJECT
  src/nvml_dl.c src/topo_hw.c src/topo_print.c src/topo_report.c src/topo_bind.c src/envcheck.c src/topo_cli.c
  src/topo.c src/doctor.c src/gpu_diag.c)
target_include_directories(ddpbench_topo PUBLIC src)
target_link_libraries(ddpbench_topo
  PUBLIC ddpbench_common PkgConfig::HWLOC PkgConfig::CJSON MPI::MPI_C ${CMAKE_DL_LIBS}
  PRIVATE ddpbench_options)
