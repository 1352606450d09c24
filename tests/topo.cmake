# The topology report's tests (issue 4). Fixtures are saved topologies of real machines (tests/fixtures);
# NVML is a fake table inside the tests, so all of them run on a machine without GPU or driver.
set(TOPO_FIXTURES ${PROJECT_SOURCE_DIR}/tests/fixtures)
ddpbench_add_test(test_topo_classify SOURCES test_topo_classify.c LIBS ddpbench_core m LABELS unit
                  ARGS ${TOPO_FIXTURES})
ddpbench_add_test(test_topo_nvml SOURCES test_topo_nvml.c LIBS ddpbench_core LABELS unit ARGS ${TOPO_FIXTURES})
ddpbench_add_test(test_topo_cluster SOURCES test_topo_cluster.c LIBS ddpbench_core LABELS unit ARGS ${TOPO_FIXTURES})
ddpbench_add_test(test_topo_mpi SOURCES test_topo_mpi.c LIBS ddpbench_core LABELS mpi NP 2 ARGS ${TOPO_FIXTURES})
ddpbench_add_test(test_gpu_diag SOURCES test_gpu_diag.c LIBS ddpbench_core LABELS unit)
ddpbench_add_test(test_accept_links SOURCES test_accept_links.c LIBS ddpbench_core LABELS unit ARGS ${TOPO_FIXTURES})
