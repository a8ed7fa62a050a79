# The CUDA backend (src/kernels/cuda/, docs/cuda.md): compiled where nvcc is found, for Hopper
# only (sm_90a), its kernels in minimax_cuda (nvcc), its host side in minimax_kernels (the C++
# compiler, MINIMAX_HAVE_CUDA), the CUDA runtime linked statically so that a binary built here runs
# on a GPU host that has the driver and nothing else of ours. Without nvcc (or with
# -DMINIMAX_CUDA=OFF) the backend is left out and `--backend cuda` says so.
set(MINIMAX_HAVE_CUDA OFF)
if(MINIMAX_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    file(GLOB CUDA_KERNEL_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/kernels/cuda/*.cu)
    add_library(minimax_cuda STATIC ${CUDA_KERNEL_SOURCES})
    # sm_90a (Hopper's arch-specific features) named by hand: CMAKE_CUDA_ARCHITECTURES would
    # also add a PTX target and multiply the compile time. The kernels are C++17: CMake 3.25 knows
    # no C++20 flag for nvcc.
    set_target_properties(minimax_cuda PROPERTIES CUDA_ARCHITECTURES OFF COMPILE_OPTIONS ""
                                                  CUDA_STANDARD 17 POSITION_INDEPENDENT_CODE ON)
    target_compile_options(minimax_cuda PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a -Xcompiler=-Wall>)
    target_include_directories(minimax_cuda PUBLIC ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(minimax_cuda PUBLIC CUDA::cudart_static)
    target_sources(minimax_kernels PRIVATE ${CMAKE_SOURCE_DIR}/src/kernels/cuda/cuda_backend.cc)
    target_compile_definitions(minimax_kernels PUBLIC MINIMAX_HAVE_CUDA=1)
    target_link_libraries(minimax_kernels PUBLIC minimax_cuda)
    set(MINIMAX_HAVE_CUDA ON)
    message(STATUS "minimax: CUDA backend enabled (${CMAKE_CUDA_COMPILER}, sm_90a)")
  else()
    message(STATUS "minimax: CUDA backend skipped (no nvcc)")
  endif()
endif()
