# The training program (CUDA) on top of the kernel suite; the CPU reference is pure C++ so CPU tests
# link it without a GPU.
add_library(fuselens_fmnist_reference STATIC network.cpp reference.cpp)
target_include_directories(fuselens_fmnist_reference PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(fuselens_fmnist_reference PUBLIC fuselens_fmnist_data)
target_compile_features(fuselens_fmnist_reference PUBLIC cxx_std_20)
fuselens_project_options(fuselens_fmnist_reference)

add_library(fuselens_fmnist_train STATIC train_kernels.cu model.cpp trainer.cpp)
target_link_libraries(fuselens_fmnist_train PUBLIC fuselens_fmnist_data fuselens_fmnist_reference fuselens_kernels
  CUDA::cudart CUDA::nvtx3)
fuselens_project_options(fuselens_fmnist_train)
fuselens_cuda_options(fuselens_fmnist_train)

add_executable(fmnist_train fmnist_train.cpp)
target_link_libraries(fmnist_train PRIVATE fuselens_fmnist_train CLI11::CLI11 nlohmann_json::nlohmann_json)
fuselens_project_options(fmnist_train)
set_target_properties(fmnist_train PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
install(TARGETS fmnist_train RUNTIME DESTINATION bin)
